/// `scrollback check`: exit status 1 when anything is wrong.
struct CheckCommand {
    let context: CommandContext

    func run() throws -> Int32 {
        let store = try context.openStore()
        let console = context.console
        if context.parsed.has("--repair") {
            try context.requireWritable(store)
            try store.repair()
            console.line("rebuilt the search indexes and message counts")
        }
        let report = try store.check()
        for skipped in report.skipped {
            console.line("skipped: \(skipped)")
        }
        if report.isHealthy {
            console.line("ok: integrity, foreign keys, message counts and search indexes of \(OutputFormat.line(store.path))")
            return 0
        }
        for problem in report.problems {
            console.line("problem: \(OutputFormat.line(problem))")
        }
        console.errorLine(
            "scrollback: \(report.problems.count) problem(s) in \(store.path); back it up, then try `scrollback check --repair`")
        return 1
    }
}
