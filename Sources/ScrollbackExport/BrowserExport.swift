import Foundation
import ScrollbackModel
import ScrollbackStorage
import TerminalText

/// The browser's export (`x`), which the browser reaches through the closure its command
/// gives it (the view models see no store).
public enum BrowserExport {
    /// The browser's `x`: the conversations `ids` to a new file at `path` (`~/` is the home
    /// folder; the extension says the format), written as `--out` writes, never over a file
    /// that exists; `showingHidden` (the reader's `z`) as `--hidden`. Returns what the footer
    /// says.
    public static func run(
        ids: [Int64], path given: String, showingHidden: Bool = false, store: Store, environment: [String: String]
    ) -> String {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let path = given == "~" ? home : given.hasPrefix("~/") ? home + given.dropFirst() : given
        let lowered = path.lowercased()
        let format: ExportFormat = lowered.hasSuffix(".jsonl") ? .jsonl : lowered.hasSuffix(".json") ? .json : .md
        do {
            // The browser's own words: it has no --force or --out-dir.
            var status = stat()
            if lstat(path, &status) == 0 {
                let folder = status.st_mode & S_IFMT == S_IFDIR
                return UntrustedText.sanitized(
                    "Not exported: \(path) \(folder ? "is a folder; give a file name in it" : "exists; choose another name (nothing is replaced from here)")")
            }
            try ExportTarget.checkFile(path, force: false)
            try ExportTarget.refuseDatabase(path, database: store.path)
            let conversations = try store.conversations.conversations(ids: ids)
            guard !conversations.isEmpty else {
                return "Not exported: \(ids.count == 1 ? "that conversation was" : "they were") deleted meanwhile, by another process; no file written"
            }
            let file = try ExportFile(replacing: path)
            let count: Int
            do {
                count = try Exporter(store: store, showingHidden: showingHidden).write(
                    format: format, each: { try conversations.forEach($0) }, emit: file.write)
                try file.commit(force: false)
            } catch {
                file.discard()
                throw error
            }
            // JSON and JSONL carry every message with its kind whatever is shown.
            let hidden = showingHidden && format == .md ? ", hidden messages included (z)" : ""
            return UntrustedText.sanitized("Exported \(NumberText.grouped(count)) conversation\(count == 1 ? "" : "s") as \(format.name) to \(path)\(hidden)")
        } catch {
            return "Not exported: " + UntrustedText.sanitized((error as? any UserFacingError)?.userLine ?? String(describing: error))
        }
    }

    /// A stored file's bytes to a new file at `path` (the reader's `S` and `O`): never over a
    /// file that is there, never through a symlink, written beside it and moved into place,
    /// hashed again on the way. nil when done, else the reason in a line.
    public static func writeAttachment(_ hash: String, to path: String, store: Store) -> String? {
        var status = stat()
        if lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG {
            return "\(path) exists; give another name (nothing is written over a file)"
        }
        do {
            try ExportTarget.checkFile(path, force: false, folderAdvice: "give a file's path in it", tool: "scrollback")
            try ExportTarget.refuseDatabase(path, database: store.path, tool: "scrollback")
            let file = try ExportFile(replacing: path)
            do {
                try store.readAttachment(sha256: hash) { try file.write(bytes: $0) }
                try file.commit(force: false)
            } catch {
                file.discard()
                throw error
            }
            return nil
        } catch {
            return (error as? any UserFacingError)?.userLine ?? "\(error)"
        }
    }
}
