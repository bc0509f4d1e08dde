import Foundation
import ScrollbackModel

/// Builds the search index an upgrade left, on a thread and connection of its own, so that
/// the browser stays responsive meanwhile (its searches are complete all along).
public final class BackgroundIndexer: @unchecked Sendable {
    private let condition = NSCondition()
    private var stopping = false
    private var running = false
    /// What stopped the work, when something other than `stop` did (shown by nobody: the
    /// next start goes on from where it stopped).
    public private(set) var failure: (any Error)?

    public init() {}

    /// Starts building when the database at `path` has rows waiting; does nothing otherwise.
    public func start(path: String) {
        condition.lock()
        running = true
        condition.unlock()
        Thread.detachNewThread { [self] in
            defer {
                condition.lock()
                running = false
                condition.broadcast()
                condition.unlock()
            }
            do {
                let store = try Store.open(path: path)
                store.database.setBusyTimeout(milliseconds: 2_000)
                _ = try store.buildSearchIndex(rowsPerStep: 5_000, shouldStop: { [self] in isStopping })
            } catch {
                condition.lock()
                failure = error
                condition.unlock()
            }
        }
    }

    private var isStopping: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopping
    }

    /// Asks the work to stop after the step in hand, and waits for it.
    public func stop() {
        condition.lock()
        stopping = true
        while running { condition.wait() }
        condition.unlock()
    }
}
