import Foundation
import ScrollbackModel
import ScrollbackStorage
import ScrollbackSync
import ScrollbackViewModels
import TerminalText

/// `scrollback restore PATH`: the database replaced by a backup, the current one kept
/// beside it under a dated name (see `Store.restore`).
struct RestoreCommand {
    let context: CommandContext

    struct Output: Encodable {
        let restored: String
        let from: String
        let kept: String?
        let conversations: Int
        let upgradedFrom: Int?
        let sync: SyncOutput?
    }

    struct SyncOutput: Encodable {
        let machine: String
        let previousMachine: String
        let resent: Int
        /// Changes made in the replaced database since the backup, never sent: not in the
        /// restored one (the kept copy has them).
        let lostChanges: Int?
    }

    struct AsOfOutput: Encodable {
        let out: String
        let at: String
        let snapshot: String?
        let snapshotMadeAt: String?
        let changes: Int
        let conversations: Int
    }

    /// `restore --at TIME --out NEWFILE`: the history as it was then, in a new file, from
    /// the sync server; the database is not opened.
    func asOf(_ text: String) throws -> Int32 {
        let console = context.console
        guard context.parsed.positional.isEmpty else {
            throw UsageError(message: "restore --at rebuilds from the sync server; it takes no PATH (restore PATH puts a backup in place)", command: "restore")
        }
        guard let out = context.parsed.value(.out), !out.isEmpty else {
            throw UsageError(message: "restore --at needs --out NEWFILE: the history as it was is written to a new file, never over the database", command: "restore")
        }
        let time: Timestamp
        do {
            // The last instant TIME takes in (the filter's end is the first it leaves out):
            // the time typed, or a day's last millisecond. A time to come is now: nothing
            // later is known.
            let end = try ConversationFilter.time(text, now: .now(), end: true)
            time = min(Timestamp(milliseconds: max(end.milliseconds - 1, 0)), .now())
        } catch let error as FilterError {
            throw UsageError(message: "--at: \(error.message)", command: "restore")
        }
        let sync = SyncCommand(context: context)
        let showProgress = console.errorIsTerminal && context.environment["TERM"] != "dumb"
        let report: AsOfReport
        do {
            if let backup = context.parsed.value(.from) {
                // From a local backup: the server's changes after it when there are secrets.
                let server = (try? sync.storedURL()).flatMap { url in (try? sync.storedKey()).map { (url, $0) } }
                report = try SyncEngine.rebuild(at: time, fromBackup: backup, server: server, into: out)
            } else {
                let (url, key) = (try sync.storedURL(), try sync.storedKey())
                report = try SyncEngine.rebuild(at: time, conninfo: url, key: key, into: out) { line in
                    if showProgress { console.writeError("\r\u{1B}[K" + line) }
                }
            }
        } catch let error as SyncError {
            if showProgress { console.writeError("\r\u{1B}[K") }
            throw CommandFailure(message: error.described(retrying: "scrollback restore --at"))
        } catch {
            if showProgress { console.writeError("\r\u{1B}[K") }
            throw error
        }
        if showProgress { console.writeError("\r\u{1B}[K") }
        if context.wantsJSON {
            console.line(
                try OutputFormat.json(
                    AsOfOutput(out: out, at: time.iso8601, snapshot: report.snapshot?.id, snapshotMadeAt: report.snapshotMadeAt?.iso8601,
                               changes: report.ops, conversations: report.conversations),
                    for: console))
            return 0
        }
        let from =
            context.parsed.value(.from).map { "\(OutputFormat.line($0)) (its newest change of \(report.snapshotMadeAt?.iso8601 ?? "-")) and " }
            ?? report.snapshotMadeAt.map { "the snapshot of \($0.iso8601) and " } ?? ""
        console.line(
            "Wrote \(OutputFormat.line(out)): \(NumberText.grouped(report.conversations)) conversation\(report.conversations == 1 ? "" : "s") as of \(time.iso8601), from \(from)\(NumberText.grouped(report.ops)) change\(report.ops == 1 ? "" : "s") after it; look with `scrollback --db \(OutputFormat.line(out)) --readonly`.")
        return 0
    }

    func run() throws -> Int32 {
        let console = context.console
        if let at = context.parsed.value(.at) { return try asOf(at) }
        if context.parsed.value(.out) != nil || context.parsed.value(.from) != nil {
            throw UsageError(message: "--out and --from go with --at (restore PATH writes over the database, after asking)", command: "restore")
        }
        if context.readOnly { throw UsageError(message: "restore replaces the database; it cannot run with --readonly", command: "restore") }
        guard let source = context.parsed.positional.first else {
            throw UsageError(message: "restore needs the PATH of a backup (or --at TIME --out NEWFILE)", command: "restore")
        }
        guard !source.isEmpty else { throw UsageError(message: "restore needs the PATH of a backup", command: "restore") }
        let target = context.databasePath
        let plan = try Store.planRestore(from: source, over: target)
        if !context.parsed.has(.yes) && !console.inputIsTerminal {
            throw UsageError(message: "refusing to restore without --yes when standard input is not a terminal", command: "restore")
        }
        if !context.parsed.has(.yes) {
            for line in Self.question(plan, target: target) { console.errorLine(line) }
            console.writeError("Restore? [y/N] ")
            let answer = console.readLine()?.trimmingCharacters(in: .whitespaces).lowercased()
            guard answer == "y" || answer == "yes" else {
                console.errorLine("Nothing restored.")
                return 0
            }
        }
        let showProgress = console.errorIsTerminal && context.environment["TERM"] != "dumb"
        var lastShown = Date.distantPast
        let report: RestoreReport
        do {
            report = try withInterruptsHeld { interrupted in
                try Store.restore(
                    plan, over: target,
                    progress: { done, total in
                        guard showProgress, Date().timeIntervalSince(lastShown) > 0.2 || done == total else { return }
                        lastShown = Date()
                        let percent = total > 0 ? done * 100 / total : 100
                        console.writeError("\r\u{1B}[Kcopying the backup \(percent)%…")
                    }, shouldStop: interrupted)
            }
        } catch {
            if showProgress { console.writeError("\r\u{1B}[K") }
            if case RestoreError.interrupted = error { throw CommandInterrupted(message: RestoreError.interrupted.description) }
            throw error
        }
        if showProgress { console.writeError("\r\u{1B}[K") }
        let sync = report.syncMachine.map { machine in
            SyncOutput(machine: machine, previousMachine: report.previousMachine ?? "", resent: report.resent, lostChanges: plan.lostChanges)
        }
        // The restore is done: a report that cannot be written says so, not that it failed.
        do {
            try write(plan, report: report, source: source, target: target, sync: sync)
            try console.checkOutput()
        } catch let failure as CommandFailure {
            throw CommandFailure(
                message: "the database was restored" + (report.kept.map { " (the one it replaced is kept at \($0))" } ?? "")
                    + ", but its report could not be written: \(failure.message)")
        }
        return 0
    }

    private func write(_ plan: RestorePlan, report: RestoreReport, source: String, target: String, sync: SyncOutput?) throws {
        let console = context.console
        if context.wantsJSON {
            console.line(
                try OutputFormat.json(
                    Output(restored: target, from: source, kept: report.kept, conversations: plan.source.conversations,
                           upgradedFrom: report.upgradedFrom, sync: sync),
                    for: console))
            return
        }
        var lines = [
            "Restored \(NumberText.grouped(plan.source.conversations)) conversation\(plan.source.conversations == 1 ? "" : "s") from \(OutputFormat.line(source)) into \(OutputFormat.line(target))"
                + (report.upgradedFrom.map { " (upgraded from schema \($0))" } ?? "") + "."
        ]
        if let kept = report.kept { lines.append("The database it replaced is kept at \(OutputFormat.line(kept)).") }
        lines += Self.syncLines(plan, report: report)
        for line in lines { console.line(line) }
    }

    /// What is asked before a restore: both sides, and what it does to sync.
    static func question(_ plan: RestorePlan, target: String) -> [String] {
        func describe(_ side: RestoreSide) -> String {
            let newest = side.newest.map { ", newest \(TimeText.absolute($0))" } ?? ""
            return "\(NumberText.grouped(side.conversations)) conversation\(side.conversations == 1 ? "" : "s")\(newest), schema \(side.schemaVersion)"
        }
        var lines = ["Backup:   \(OutputFormat.line(plan.source.path)) (\(describe(plan.source)))"]
        if let current = plan.current {
            lines.append("Replaces: \(OutputFormat.line(target)) (\(describe(current))), kept beside it as \(PathText.lastComponent(of: target)).before-restore-….backup")
        } else if let problem = plan.currentProblem {
            lines.append("Replaces: \(OutputFormat.line(target)), which does not open (\(problem)); it is kept beside it as \(PathText.lastComponent(of: target)).before-restore-….backup")
        } else {
            lines.append("Into:     \(OutputFormat.line(target)) (no database there yet)")
        }
        if plan.source.syncMachine != nil {
            lines.append(
                "Sync:     the restored database syncs as a new machine, from its own cursors; what other machines (and this one) sent since the backup comes back with the next sync")
        } else if plan.current?.syncMachine != nil {
            lines.append("Sync:     the backup was made with sync off: the restored database does not sync until `scrollback sync init`")
        }
        if let lost = plan.lostChanges, lost > 0 {
            lines.append(
                "          \(NumberText.grouped(lost)) change\(lost == 1 ? "" : "s") made here since the backup \(lost == 1 ? "was" : "were") never sent: the restored database will not have \(lost == 1 ? "it" : "them") (the kept copy does)")
        }
        return lines
    }

    static func syncLines(_ plan: RestorePlan, report: RestoreReport) -> [String] {
        var lines: [String] = []
        if let machine = report.syncMachine {
            var line = "Sync: it now syncs as a new machine (\(machine.prefix(8))), from its own cursors; the next `scrollback sync` brings back what was sent since the backup, by the other machines and by this one"
            if report.resent > 0 {
                line += ", and sends again the \(NumberText.grouped(report.resent)) change\(report.resent == 1 ? "" : "s") the backup had not sent"
            }
            lines.append(line + ".")
        } else if plan.current?.syncMachine != nil {
            lines.append("Sync: the backup was made with sync off; run `scrollback sync init` to sync this database again.")
        }
        if let lost = plan.lostChanges, lost > 0 {
            lines.append(
                "\(NumberText.grouped(lost)) change\(lost == 1 ? "" : "s") made here since the backup \(lost == 1 ? "was" : "were") never sent and \(lost == 1 ? "is" : "are") not in the restored database; the kept copy holds \(lost == 1 ? "it" : "them").")
        }
        return lines
    }
}
