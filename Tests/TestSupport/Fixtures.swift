import Foundation
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

/// A known half year of activity (2025-01 to 2025-06, UTC) for the overview's charts.
///
/// Per month (by update): January 4 (one at its last millisecond), February 1 (at its first),
/// March 4, April 3, May 1, June 1 (pinned). Tokens by message time: March 5,000 (one
/// session's first answer is on 31 March, its second, and its update, on 1 April), April
/// 660. Models: claude-sonnet 5, gpt-4o 4, none 2 (one empty), a hostile name 1,
/// gpt-4o-mini 1, o1 1. Sources: chatgpt 5, claude-code 4, llm 2, claude 1, codex 1,
/// evil 1. Busiest days: 2025-03-14 4, 2025-01-05 3, 2025-04-02 2, then days of one.
extension Store {
    public static let hostileModel = "\u{1B}[31mevil\u{202E}model\u{7}"

    public func addActivity() throws {
        func time(_ text: String) -> Timestamp {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let date = formatter.date(from: text) ?? Date(timeIntervalSince1970: 0)
            return Timestamp(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded()))
        }
        var count = 0
        func add(_ at: String, model: String?, source: String, tokens: [(String, Int64, Int64)] = [], pinned: Bool = false) throws {
            count += 1
            let start = time(at)
            var messages = [ImportedMessage(role: .user, content: "Question \(count)", createdAt: start)]
            for (when, input, output) in tokens {
                messages.append(
                    ImportedMessage(
                        role: .assistant, content: "Answer", createdAt: time(when), model: model,
                        usage: MessageUsage(inputTokens: input, outputTokens: output)))
            }
            if tokens.isEmpty { messages.append(ImportedMessage(role: .assistant, content: "Answer", createdAt: start, model: model)) }
            _ = try upsert(
                ImportedConversation(
                    source: source, sourceID: "activity-\(count)", title: "Activity \(count)", model: model, createdAt: start,
                    updatedAt: messages.map(\.createdAt).max() ?? start, messages: messages, pinned: pinned))
        }
        for _ in 0..<3 { try add("2025-01-05T10:00:00.000Z", model: "gpt-4o", source: "chatgpt") }
        try add("2025-01-31T23:59:59.999Z", model: "gpt-4o-mini", source: "chatgpt")
        try add("2025-02-01T00:00:00.000Z", model: "claude-sonnet", source: "claude")
        for _ in 0..<4 {
            try add("2025-03-14T09:00:00.000Z", model: "claude-sonnet", source: "claude-code", tokens: [("2025-03-14T09:01:00.000Z", 1_000, 200)])
        }
        try add("2025-04-02T12:00:00.000Z", model: nil, source: "llm", tokens: [("2025-04-02T12:00:00.000Z", 50, 10)])
        try add("2025-04-02T13:00:00.000Z", model: "", source: "llm")
        try add(
            "2025-03-31T22:00:00.000Z", model: "o1", source: "codex",
            tokens: [("2025-03-31T23:00:00.000Z", 100, 100), ("2025-04-01T01:00:00.000Z", 300, 300)])
        try add("2025-05-01T08:00:00.000Z", model: Store.hostileModel, source: "evil")
        try add("2025-06-30T18:00:00.000Z", model: "gpt-4o", source: "chatgpt", pinned: true)
    }
}
