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
    public var kind: MessageKind

    public init(_ id: String, _ parent: String?, _ role: Role, _ text: String, minute: Int64, kind: MessageKind = .text) {
        self.kind = kind
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

    /// A session as a person saw it, with what they did not see between: a question, the
    /// model's reasoning, a tool call it made for itself and its hostile result, a tool that
    /// ran in front of them (12 lines), the answer, and a regeneration that only reasoned.
    public static let hiddenTree: [TreeNode] = [
        TreeNode("q1", nil, .user, "What changed in the repo?", minute: 0),
        TreeNode("r1", "q1", .assistant, "Thinking: look at git status first.", minute: 1, kind: .reasoning),
        TreeNode("w1", "r1", .assistant, "→ browser\nsearch(\"git status \u{1B}[31mflags\u{1B}[0m\")", minute: 2, kind: .internal),
        TreeNode("w2", "w1", .tool, "← browser\nevil \u{1B}]0;owned\u{7} page \u{202E}dump", minute: 3, kind: .internal),
        TreeNode(
            "t1", "w2", .tool, "Bash(git status) → 12 lines\n" + (1...11).map { "M file\($0).swift" }.joined(separator: "\n"), minute: 4,
            kind: .tool),
        TreeNode("a1", "t1", .assistant, "Eleven files changed.", minute: 5),
        TreeNode("x1", "t1", .assistant, "Maybe more?", minute: 6, kind: .reasoning),
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
                    model: node.role == .assistant ? "gpt-4o" : nil, nodeID: node.id, parent: node.parent.map { .node($0) } ?? .root,
                    kind: node.kind)
            }, currentNodeID: current)
        _ = try upsert(imported)
        return try conversations.conversation(matching: StableID.uuid("test", sourceID))
    }
}
