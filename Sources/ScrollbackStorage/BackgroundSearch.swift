import CSQLite
import Foundation
import ScrollbackModel

/// Runs each search on a thread of its own with its own read-only connection; `cancel`
/// interrupts SQLite mid-query (sqlite3_interrupt may be called from any thread).
public struct BackgroundSearchRunner: SearchRunner {
    let path: String

    /// - Parameter path: a database file (not `:memory:`, which another connection cannot see).
    public init(path: String) {
        self.path = path
    }

    public func start(_ query: String, limit: Int) -> any SearchJob {
        let job = BackgroundSearchJob()
        let path = self.path
        Thread.detachNewThread {
            let outcome: Result<Page<SearchHit>, any Error>
            do {
                let store = try Store.open(path: path, readOnly: true)
                // The store (and its connection) must outlive the job's hold on the handle:
                // `cancel` may call sqlite3_interrupt on it until `attach(nil)` returns.
                outcome = withExtendedLifetime(store) {
                    job.attach(store.database.handle)
                    defer { job.attach(nil) }
                    return Result { try store.search.search(query, after: nil, limit: limit) }
                }
            } catch {
                outcome = .failure(error)
            }
            job.finish(outcome)
        }
        return job
    }
}

/// The shared state of one background search, behind a lock.
final class BackgroundSearchJob: SearchJob, @unchecked Sendable {
    private let lock = NSLock()
    private var outcome: Result<Page<SearchHit>, any Error>?
    private var handle: OpaquePointer?
    private var cancelled = false

    var result: Result<Page<SearchHit>, any Error>? {
        lock.lock()
        defer { lock.unlock() }
        return outcome
    }

    func cancel() {
        lock.lock()
        defer { lock.unlock() }
        cancelled = true
        if let handle { sqlite3_interrupt(handle) }
    }

    /// The connection while the query runs, so that `cancel` can interrupt it.
    func attach(_ handle: OpaquePointer?) {
        lock.lock()
        defer { lock.unlock() }
        self.handle = handle
        if cancelled, let handle { sqlite3_interrupt(handle) }
    }

    func finish(_ outcome: Result<Page<SearchHit>, any Error>) {
        lock.lock()
        defer { lock.unlock() }
        self.outcome = outcome
    }
}
