import ScrollbackModel

/// Computes an overview chart on a thread of its own with its own read-only connection;
/// `cancel` interrupts SQLite mid-count.
public struct BackgroundActivityRunner: ActivityRunner {
    let path: String

    /// - Parameter path: a database file (not `:memory:`, which another connection cannot see).
    public init(path: String) {
        self.path = path
    }

    public func start(_ chart: ActivityChart, filter: ConversationFilter, window: ActivityWindow) -> any ActivityJob {
        BackgroundQuery.start(path: path) { store in try store.activity.chart(chart, filter: filter, window: window) }
    }
}
