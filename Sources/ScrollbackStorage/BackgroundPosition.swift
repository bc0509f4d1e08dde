import CSQLite
import Foundation
import ScrollbackModel

/// Finds a conversation's position (the rows before it, and the total) on a thread of its
/// own with its own read-only connection; `cancel` interrupts SQLite mid-count.
public struct BackgroundPositionRunner: PositionRunner {
    let path: String

    /// - Parameter path: a database file (not `:memory:`, which another connection cannot see).
    public init(path: String) {
        self.path = path
    }

    public func start(_ conversation: ConversationDTO, sort: ConversationOrder) -> any PositionJob {
        let job = BackgroundPositionJob()
        let path = self.path
        Thread.detachNewThread {
            let outcome: Result<ListPosition, any Error>
            if job.isCancelled {
                outcome = .failure(CancellationError())
            } else {
                do {
                    let store = try Store.open(path: path, readOnly: true)
                    // The connection must outlive the job's hold on its handle: `cancel` may
                    // call sqlite3_interrupt on it until `attach(nil)` returns.
                    outcome = withExtendedLifetime(store) {
                        job.attach(store.database.handle)
                        defer { job.attach(nil) }
                        return Result {
                            // Both in one read transaction, so that they agree.
                            try store.database.execute("BEGIN")
                            defer { try? store.database.execute("COMMIT") }
                            let index = try store.conversations.index(of: conversation, sort: sort)
                            let total = try store.conversations.count()
                            return ListPosition(index: index, total: max(total, index + 1))
                        }
                    }
                } catch {
                    outcome = .failure(error)
                }
            }
            job.finish(outcome)
        }
        return job
    }
}

/// The shared state of one background position, behind a lock.
final class BackgroundPositionJob: PositionJob, @unchecked Sendable {
    private let lock = NSLock()
    private var outcome: Result<ListPosition, any Error>?
    private var handle: OpaquePointer?
    private var cancelled = false

    var result: Result<ListPosition, any Error>? {
        lock.lock()
        defer { lock.unlock() }
        return outcome
    }

    var isCancelled: Bool {
        lock.lock()
        defer { lock.unlock() }
        return cancelled
    }

    func cancel() {
        lock.lock()
        defer { lock.unlock() }
        cancelled = true
        if let handle { sqlite3_interrupt(handle) }
    }

    /// The connection while the count runs, so that `cancel` can interrupt it.
    func attach(_ handle: OpaquePointer?) {
        lock.lock()
        defer { lock.unlock() }
        self.handle = handle
        if cancelled, let handle { sqlite3_interrupt(handle) }
    }

    func finish(_ outcome: Result<ListPosition, any Error>) {
        lock.lock()
        defer { lock.unlock() }
        self.outcome = outcome
    }
}
