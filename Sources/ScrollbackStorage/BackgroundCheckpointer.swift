import Foundation
import ScrollbackModel

/// Moves the write-ahead log into the database file on a thread of its own, so that a
/// write on the main actor never pays for it.
///
/// SQLite checkpoints automatically at the commit that takes the log past 1,000 pages: that
/// commit copies the pages and syncs the database file, tens of milliseconds on a large
/// file (seen: 50–90 ms on a 2.5 GB database, the p99 of a rename in the browser). Here the
/// browser's connection leaves that to this thread, which checkpoints (PASSIVE: it never
/// blocks a reader or a writer) whenever the log has grown past the same size.
public final class BackgroundCheckpointer: @unchecked Sendable {
    /// About SQLite's own threshold (1,000 pages of 4 KiB).
    public static let walThreshold: Int64 = 4_000 * 1_024

    private let path: String
    private let interval: TimeInterval
    private let condition = NSCondition()
    private var stopped = false
    private var finished = false

    /// Takes over checkpointing for `store`'s connection (a read-write file database; for any
    /// other this does nothing) until `stop`.
    public init(for store: Store, interval: TimeInterval = 0.5) throws {
        path = store.path
        self.interval = interval
        guard !store.isReadOnly, store.path != ":memory:" else {
            finished = true
            return
        }
        try store.database.execute("PRAGMA wal_autocheckpoint = 0")
        Thread.detachNewThread { [self] in run() }
    }

    private func run() {
        defer {
            condition.lock()
            finished = true
            condition.broadcast()
            condition.unlock()
        }
        // A connection of its own; if it cannot be had, the log is checkpointed when the
        // browser's connection closes, as before.
        guard let store = try? Store.open(path: path, createFolder: false) else { return }
        withExtendedLifetime(store) {
            while true {
                condition.lock()
                if !stopped { _ = condition.wait(until: Date(timeIntervalSinceNow: interval)) }
                let stop = stopped
                condition.unlock()
                if stop { return }
                var status = stat()
                guard stat(path + "-wal", &status) == 0, Int64(status.st_size) > Self.walThreshold else { continue }
                // Busy or failing: tried again at the next turn.
                try? store.database.execute("PRAGMA wal_checkpoint(PASSIVE)")
            }
        }
    }

    /// Stops the thread and waits until its connection is closed.
    public func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
    }
}
