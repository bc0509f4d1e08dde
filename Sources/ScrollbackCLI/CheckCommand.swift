import ScrollbackModel
import ScrollbackStorage
import TerminalText

/// `scrollback check`: always a report; exit status 1 when anything is wrong.
struct CheckCommand {
    let context: CommandContext

    func run() throws -> Int32 {
        let console = context.console
        let report: CheckReport
        // Sync's state, when it is on here, for the closing line.
        var sync: LocalSyncState?
        do {
            // The deep check of the search indexes needs a write transaction; it runs only
            // where that cannot change anything: no `-wal` with content beside the file
            // (which a live writer, or a crash, may have left). Otherwise check only reads.
            let repairing = context.parsed.has(.repair)
            let store = try context.openStore(forReading: !repairing && Store.hasWALContent(context.databasePath))
            if context.parsed.has(.repair) {
                try context.requireWritable(store)
                let copies = try store.repair()
                if let copy = copies.first {
                    console.line("Kept a copy of it as it was: \(OutputFormat.line(copy))" + (copies.count > 1 ? " (and its -wal)" : ""))
                }
                console.line("Rebuilt the search indexes, message counts and branches.")
            }
            report = try store.check()
            sync = (try? store.localSyncState()).flatMap { $0.isOn ? $0 : nil }
        } catch let error as StorageError {
            switch error {
            case .noDatabase, .busy, .readOnly, .newerSchema, .needsUpgrade, .diskFull:
                throw error
            default:
                // A file that does not open as ours is still examined, read-only: the report
                // says what could be read and what is wrong.
                if context.parsed.has(.repair) {
                    // Not "run check": that is where the person came from. A file that does not
                    // even open for the repair (a damaged schema page) is said to be damaged
                    // when the read-only check finds it so.
                    if case .damaged = error { throw CommandFailure(message: Self.damagedFile(context.databasePath)) }
                    if Self.isDamaged(Store.check(path: context.databasePath)) { throw CommandFailure(message: Self.damagedFile(context.databasePath)) }
                    throw error
                }
                report = Store.check(path: context.databasePath)
            }
        }
        for skipped in report.skipped {
            // With --readonly the deep check cannot run however idle the file is: say so.
            let reason = context.readOnly && skipped.hasPrefix("deep check of ")
                ? (skipped.split(separator: " (").first.map(String.init) ?? skipped) + " (it writes, which --readonly forbids: run check without --readonly)"
                : skipped
            console.line("skipped: \(reason)")
        }
        if report.isHealthy {
            // Says exactly what was checked: what was skipped is listed above.
            let search =
                report.searchIndexesCountedOnly
                ? "the sizes of the search indexes (not their content)" : "search indexes"
            console.line(
                "ok: schema, integrity, foreign keys, message counts, branches and \(search) of \(OutputFormat.line(context.databasePath))"
                    + (report.skipped.isEmpty ? "" : "; not checked: what 'skipped' lists above"))
            return 0
        }
        // SQLite's own pages damaged (or not SQLite's at all): no line sends the person to
        // `--repair`, which cannot mend that; the last line says what can.
        let damaged = Self.isDamaged(report)
        for problem in report.problems {
            let shown = damaged ? problem.replacingOccurrences(of: "; run `scrollback check --repair`", with: "") : problem
            console.line("problem: \(OutputFormat.line(shown))")
        }
        // A catch-up cut short leaves branches still to come: nothing is damaged.
        if let sync, sync.lastSync == nil || sync.parked > 0, report.problems.allSatisfy({ $0.hasPrefix("branches:") }) {
            let waiting =
                sync.parked > 0
                ? "\(NumberText.grouped(sync.parked)) change(s) from other machines wait for what they build on"
                : "the first one never completed"
            console.errorLine(
                "scrollback: \(report.problems.count) problem(s) in \(context.databasePath), all in branches, and a sync here is not finished (\(waiting)): run `scrollback sync` first, then `scrollback check` again; if they remain, back it up (cp) and run `scrollback check --repair`")
            return 1
        }
        if damaged {
            console.errorLine("scrollback: " + Self.damagedFile(context.databasePath))
            return 1
        }
        console.errorLine(
            "scrollback: \(report.problems.count) problem(s) in \(context.databasePath); back it up (cp), then try `scrollback check --repair` (it rebuilds indexes and counts and puts back missing schema objects; objects that are not scrollback's it leaves for you), or restore a backup")
        return 1
    }

    /// Whether `report` finds SQLite's own pages damaged (or the file not SQLite's at all).
    static func isDamaged(_ report: CheckReport) -> Bool {
        report.problems.contains {
            $0.hasPrefix("integrity:") || $0.contains("disk image is malformed") || $0.contains("not a SQLite") || $0.contains("not a database")
        }
    }

    /// What to do about a file whose SQLite pages are damaged: no scrollback command mends
    /// those, so it says so rather than send the person from `check` to `--repair` and back.
    static func damagedFile(_ path: String) -> String {
        let shown = OutputFormat.line(path)
        return "\(shown) is damaged in SQLite's own pages, which `check --repair` cannot mend (it rebuilds scrollback's indexes and counts); keep a copy (cp), then restore a backup, or try `sqlite3 \(shown) .recover` into a new file"
    }
}
