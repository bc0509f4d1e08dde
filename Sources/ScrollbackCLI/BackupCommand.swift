import Foundation
import ScrollbackModel
import ScrollbackStorage
import TerminalText

/// `scrollback backup PATH`: a consistent, synced and checked copy of the database, made
/// while the browser, an import or a sync may write it (see `Store.backup`).
struct BackupCommand {
    let context: CommandContext

    struct Output: Encodable {
        let path: String
        let bytes: Int64
        let conversations: Int
        let checked: Bool
        let skipped: [String]
        let seconds: Double
        /// The copy of the pages, and the check and sync after it.
        let copySeconds: Double
        let checkSeconds: Double
        /// "kernel" (the file and its -wal's frames, by `copy_file_range`) or "sqlite" (page
        /// by page, by SQLite's online backup); `redone` when a kernel copy did not pass the
        /// check and SQLite made it again.
        let copiedBy: String
        let redone: Bool
    }

    func run() throws -> Int32 {
        let console = context.console
        let given = context.parsed.positional[0]
        let path = given
        guard !path.isEmpty else { throw UsageError(message: "backup needs a PATH for the copy", command: "backup") }
        // Read only: the copy is taken in one read transaction; nothing here is written.
        let store = try context.openStore(forReading: true)
        let showProgress = console.errorIsTerminal && context.environment["TERM"] != "dumb"
        var lastShown = Date.distantPast
        let started = Date()
        let report: BackupReport
        do {
            report = try withInterruptsHeld { interrupted in
                try store.backup(
                    to: path, force: context.parsed.has(.force),
                    progress: { done, total in
                        guard showProgress, Date().timeIntervalSince(lastShown) > 0.2 || done == total else { return }
                        lastShown = Date()
                        let percent = total > 0 ? done * 100 / total : 100
                        console.writeError("\r\u{1B}[Kcopying \(percent)% (\(NumberText.grouped(done)) of \(NumberText.grouped(total)) pages)…")
                    }, shouldStop: interrupted)
            }
        } catch {
            if showProgress { console.writeError("\r\u{1B}[K") }
            if case BackupError.interrupted = error { throw CommandInterrupted(message: BackupError.interrupted.description) }
            throw error
        }
        if showProgress { console.writeError("\r\u{1B}[K") }
        let seconds = Date().timeIntervalSince(started)
        if context.wantsJSON {
            console.line(
                try OutputFormat.json(
                    Output(path: path, bytes: report.bytes, conversations: report.conversations, checked: true, skipped: report.skipped,
                           seconds: (seconds * 1000).rounded() / 1000, copySeconds: (report.copySeconds * 1000).rounded() / 1000,
                           checkSeconds: (report.checkSeconds * 1000).rounded() / 1000, copiedBy: report.byFiles ? "kernel" : "sqlite",
                           redone: report.redone),
                    for: console))
            return 0
        }
        console.line(
            "Backed up \(NumberText.grouped(report.conversations)) conversation\(report.conversations == 1 ? "" : "s") (\(OutputFormat.bytes(report.bytes))) to \(OutputFormat.line(path)); checked.")
        return 0
    }
}
