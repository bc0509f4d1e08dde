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
        BackgroundQuery.start(path: path) { store in try store.search.search(query, after: nil, limit: limit) }
    }
}

/// One read on a thread and read-only connection of its own, with its result behind a lock.
final class BackgroundQuery<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var outcome: Result<Value, any Error>?
    private var handle: OpaquePointer?
    private var cancelled = false

    /// Opens `path` read-only on a new thread and runs `body` there.
    static func start(path: String, _ body: @escaping @Sendable (Store) throws -> Value) -> BackgroundQuery<Value> {
        let job = BackgroundQuery<Value>()
        Thread.detachNewThread {
            let outcome: Result<Value, any Error>
            if job.isCancelled {
                outcome = .failure(CancellationError())
            } else {
                do {
                    let store = try Store.open(path: path, readOnly: true)
                    // The store (and its connection) must outlive the job's hold on the
                    // handle: `cancel` may call sqlite3_interrupt on it until `attach(nil)`.
                    outcome = withExtendedLifetime(store) {
                        job.attach(store.database.handle)
                        defer { job.attach(nil) }
                        return Result { try body(store) }
                    }
                } catch {
                    outcome = .failure(error)
                }
            }
            job.finish(outcome)
        }
        return job
    }

    /// The outcome once the work has finished (or failed); nil while it runs.
    var result: Result<Value, any Error>? {
        lock.lock()
        defer { lock.unlock() }
        return outcome
    }

    private var isCancelled: Bool {
        lock.lock()
        defer { lock.unlock() }
        return cancelled
    }

    /// Stops the work; its result is then never used.
    func cancel() {
        lock.lock()
        defer { lock.unlock() }
        cancelled = true
        if let handle { sqlite3_interrupt(handle) }
    }

    /// The connection while the work runs, so that `cancel` can interrupt it.
    private func attach(_ handle: OpaquePointer?) {
        lock.lock()
        defer { lock.unlock() }
        self.handle = handle
        if cancelled, let handle { sqlite3_interrupt(handle) }
    }

    private func finish(_ outcome: Result<Value, any Error>) {
        lock.lock()
        defer { lock.unlock() }
        self.outcome = outcome
    }
}

extension BackgroundQuery: SearchJob where Value == Page<SearchHit> {}
extension BackgroundQuery: PositionJob where Value == ListPosition {}
extension BackgroundQuery: ActivityJob where Value == ActivityChartData {}
