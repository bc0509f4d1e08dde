import ScrollbackModel
import ScrollbackStorage

/// `scrollback check`: always a report; exit status 1 when anything is wrong.
struct CheckCommand {
    let context: CommandContext

    func run() throws -> Int32 {
        let console = context.console
        let report: CheckReport
        do {
            let store = try context.openStore()
            if context.parsed.has("--repair") {
                try context.requireWritable(store)
                try store.repair()
                console.line("rebuilt the search indexes and message counts")
            }
            report = try store.check()
        } catch let error as StorageError {
            switch error {
            case .noDatabase, .busy, .readOnly, .cannotOpen, .newerSchema, .needsUpgrade, .diskFull:
                throw error
            default:
                // A file that does not open as ours is still examined, read-only: the report
                // says what could be read and what is wrong.
                if context.parsed.has("--repair") { throw error }
                report = Store.check(path: context.databasePath)
            }
        }
        for skipped in report.skipped {
            console.line("skipped: \(skipped)")
        }
        if report.isHealthy {
            console.line(
                "ok: schema, integrity, foreign keys, message counts and search indexes of \(OutputFormat.line(context.databasePath))")
            return 0
        }
        for problem in report.problems {
            console.line("problem: \(OutputFormat.line(problem))")
        }
        console.errorLine(
            "scrollback: \(report.problems.count) problem(s) in \(context.databasePath); back it up (cp), then try `scrollback check --repair`, or restore a backup")
        return 1
    }
}
