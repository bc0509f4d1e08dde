import Foundation
import ScrollbackModel
import ScrollbackStorage

/// Follows the session files imported before, and the folders named, on a thread and a
/// connection of its own: each look is a `stat` of every file (nothing is read unless it
/// changed), and every few looks a listing of the folders for new sessions; what changed is
/// imported (from where the last import stopped), which the browser then sees as another
/// process's change. Read-only, it imports nothing and says that a source has news.
public final class SourceFollower: SourceMonitor, @unchecked Sendable {
    private let path: String
    private let readOnly: Bool
    private let folders: [String]
    private let interval: TimeInterval
    private let condition = NSCondition()
    private var stopped = false
    private var current: String?

    /// Looks at the folders (a listing of each) once every this many looks at the files.
    static let foldersEvery = 5

    public init(path: String, readOnly: Bool, folders: [String], interval: TimeInterval) {
        self.path = path
        self.readOnly = readOnly
        self.folders = folders
        self.interval = max(interval, 0.2)
        Thread.detachNewThread { [self] in run() }
    }

    public var note: String? {
        condition.lock()
        defer { condition.unlock() }
        return current
    }

    public func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private func set(_ note: String?) {
        condition.lock()
        current = note
        condition.unlock()
    }

    /// Waits `interval`; false once stopped.
    private func wait() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if !stopped { _ = condition.wait(until: Date().addingTimeInterval(interval)) }
        return !stopped
    }

    private func run() {
        let store: Store
        do {
            store = try Store.open(path: path, readOnly: readOnly)
            // A follow never makes the person's own writes wait long.
            store.waitForWriteLock(atMost: 200)
        } catch {
            return
        }
        var tracker = Tracker(folders: folders)
        var looks = 0
        while wait() {
            do {
                let changed = try tracker.look(store, folders: looks % Self.foldersEvery == 0)
                looks += 1
                guard !changed.isEmpty else { continue }
                if readOnly {
                    let count = changed.count
                    set("\(count) session file\(count == 1 ? "" : "s") grew (read-only: scrollback import reads them)")
                    continue
                }
                let summary = Importer(store: store).run(paths: changed, format: nil)
                tracker.forget()
                if let failed = summary.failed.first {
                    set("following: " + failed.description.split(whereSeparator: \.isNewline).joined(separator: " "))
                } else if let first = summary.skipped.first {
                    // A line an agent wrote that cannot be read is left out: said, not dropped quietly.
                    let count = summary.skipped.count
                    let more = count > 1 ? " (and \(count - 1) more)" : ""
                    let what = first.record == "line" ? first.reason : first.record + ": " + first.reason
                    set("following: in \(PathText.lastComponent(of: first.path)), \(what)\(more)".split(whereSeparator: \.isNewline).joined(separator: " "))
                } else {
                    set(nil)
                }
            } catch {
                set("following: \(error)".split(whereSeparator: \.isNewline).joined(separator: " "))
            }
        }
    }

    /// What the follower knows between looks: the files' states as last imported, read from
    /// the database only when it changed.
    public struct Tracker {
        let folders: [String]
        var known: [String: SourceFileState] = [:]
        var token: Int64?

        public init(folders: [String]) { self.folders = folders }

        mutating func forget() { token = nil }

        /// The session files that changed since they were imported, and (with `folders`) the
        /// new ones in the folders followed.
        public mutating func look(_ store: Store, folders lookInFolders: Bool) throws -> [String] {
            let now = try store.conversations.changeToken()
            if token != now || known.isEmpty {
                token = now
                known = Dictionary(try store.sourceFiles().map { ($0.path, $0) }, uniquingKeysWith: { $1 })
            }
            var changed: [String] = []
            for (path, state) in known {
                var status = stat()
                // Gone: nothing to read (what was imported stays).
                guard stat(path, &status) == 0 else { continue }
                let modified = Int64(status.st_mtim.tv_sec).multipliedReportingOverflow(by: 1_000_000_000).partialValue &+ Int64(status.st_mtim.tv_nsec)
                if Int64(status.st_size) != state.size || modified != state.modifiedNanoseconds
                    || Int64(truncatingIfNeeded: status.st_ino) != state.inode
                {
                    changed.append(path)
                }
            }
            if lookInFolders {
                for folder in folders {
                    for file in Importer.sessionFiles(under: folder) where known[Importer.canonical(file)] == nil {
                        changed.append(file)
                    }
                }
            }
            return changed.sorted()
        }
    }
}
