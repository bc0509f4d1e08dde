import ScrollbackModel
import ScrollbackStorage

/// Small helpers to fill a store in tests.
extension Store {
    /// Creates a conversation with `messages` user/assistant messages.
    @discardableResult
    public func addConversation(
        title: String, createdAt: Int64, updatedAt: Int64? = nil, pinned: Bool = false, messages: [String] = [],
        source: String = "local", sourceID: String? = nil
    ) throws -> ConversationDTO {
        let conversation = try conversations.create(
            NewConversation(
                title: title, model: "test-model", source: source, sourceID: sourceID,
                createdAt: Timestamp(milliseconds: createdAt),
                updatedAt: updatedAt.map(Timestamp.init(milliseconds:)), pinned: pinned))
        if !messages.isEmpty {
            _ = try self.messages.append(
                messages.enumerated().map { index, text in
                    NewMessage(role: index % 2 == 0 ? .user : .assistant, content: text, createdAt: Timestamp(milliseconds: createdAt))
                }, to: conversation.id)
        }
        return try conversations.conversation(id: conversation.id) ?? conversation
    }
}

/// One message of a tree made for a test: its node id, its parent's, role, text, and minutes
/// after the conversation's start.
public struct TreeNode: Sendable {
    public var id: String
    public var parent: String?
    public var role: Role
    public var text: String
    public var minute: Int64

    public init(_ id: String, _ parent: String?, _ role: Role, _ text: String, minute: Int64) {
        self.id = id
        self.parent = parent
        self.role = role
        self.text = text
        self.minute = minute
    }
}

extension Store {
    /// A question answered three times; the second answer followed up (the current branch):
    ///
    ///     q1 How do I sort a list?
    ///     ├ a1 Use sorted().
    ///     ├ a2 Call sort() in place.  ── q2 And descending? ── a3 Pass by: >.
    ///     └ a4 Either works.
    public static let sortingTree: [TreeNode] = [
        TreeNode("q1", nil, .user, "How do I sort a list?", minute: 0),
        TreeNode("a1", "q1", .assistant, "Use sorted().", minute: 1),
        TreeNode("a2", "q1", .assistant, "Call sort() in place.", minute: 2),
        TreeNode("q2", "a2", .user, "And descending?", minute: 3),
        TreeNode("a3", "q2", .assistant, "Pass by: >.", minute: 4),
        TreeNode("a4", "q1", .assistant, "Either works.", minute: 5),
    ]

    /// Stores a conversation whose messages form `nodes` (parents first), `current` ending
    /// the branch shown by default.
    @discardableResult
    public func addTree(
        title: String, start: Int64, nodes: [TreeNode] = Store.sortingTree, current: String? = "a3", sourceID: String = "tree"
    ) throws -> ConversationDTO {
        let imported = ImportedConversation(
            source: "test", sourceID: sourceID, title: title, model: "gpt-4o", createdAt: Timestamp(milliseconds: start),
            updatedAt: Timestamp(milliseconds: start),
            messages: nodes.map { node in
                ImportedMessage(
                    role: node.role, content: node.text, createdAt: Timestamp(milliseconds: start + node.minute * 60_000),
                    model: node.role == .assistant ? "gpt-4o" : nil, nodeID: node.id, parent: node.parent.map { .node($0) } ?? .root)
            }, currentNodeID: current)
        _ = try upsert(imported)
        return try conversations.conversation(matching: StableID.uuid("test", sourceID))
    }
}
