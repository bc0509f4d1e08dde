import ScrollbackModel

/// Finds a conversation's position (the rows before it, and the total) on a thread of its
/// own with its own read-only connection; `cancel` interrupts SQLite mid-count.
public struct BackgroundPositionRunner: PositionRunner {
    let path: String

    /// - Parameter path: a database file (not `:memory:`, which another connection cannot see).
    public init(path: String) {
        self.path = path
    }

    public func start(_ conversation: ConversationDTO, sort: ConversationOrder, filter: ConversationFilter) -> any PositionJob {
        BackgroundQuery.start(path: path) { store in
            // Both in one read transaction, so that they agree.
            try store.database.read {
                let index = try store.conversations.index(of: conversation, sort: sort, filter: filter)
                let total = try store.conversations.count(filter: filter)
                return ListPosition(index: index, total: max(total, index + 1))
            }
        }
    }
}
