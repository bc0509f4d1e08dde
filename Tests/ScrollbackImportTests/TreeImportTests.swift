import Foundation
import Testing

@testable import ScrollbackImport
import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// Conversations as trees: every regenerated answer and edited question of an export is
/// kept, each under the message it follows, and the branch the person was on is the one
/// shown by default.
@Suite("Import: conversations as trees")
struct TreeImportTests {
    /// One stored message: its node id, its parent's node id, role and the start of its text.
    struct Node: Equatable, CustomStringConvertible {
        var node: String
        var parent: String?
        var role: String
        var text: String
        var description: String { "\(node)←\(parent ?? "∅") \(role): \(text)" }
    }

    /// Every message of a conversation, in id order (which is time order), with its parent.
    static func nodes(_ store: Store, source: String, id: String) throws -> [Node] {
        try store.database.query(
            """
            SELECT m.source_node_id, p.source_node_id, m.role, substr(m.content, 1, 24)
              FROM message AS m JOIN conversation AS c ON c.id = m.conversation_id
              LEFT JOIN message AS p ON p.id = m.parent_id
             WHERE c.source = ? AND c.source_id = ? ORDER BY m.id
            """, [.text(source), .text(id)]
        ) { Node(node: $0.optionalText(0) ?? "?", parent: $0.optionalText(1), role: $0.text(2), text: $0.text(3)) }
    }

    static func currentLeaf(_ store: Store, source: String, id: String) throws -> String? {
        try store.database.queryFirst(
            """
            SELECT m.source_node_id FROM conversation AS c JOIN message AS m ON m.id = c.current_leaf_id
             WHERE c.source = ? AND c.source_id = ?
            """, [.text(source), .text(id)]
        ) { $0.optionalText(0) }.flatMap { $0 }
    }

    @Test("ChatGPT sample: every node with a message, the reasoning kept hidden, siblings by time, current leaf")
    func chatgptSample() throws {
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [ImportTests.chatgpt], format: nil)
        #expect(summary.failed.isEmpty && summary.inserted == 2)
        let id = "11111111-aaaa-4bbb-8ccc-000000000001"
        let nodes = try Self.nodes(store, source: "chatgpt", id: id)
        #expect(
            nodes == [
                Node(node: "u1", parent: nil, role: "user", text: "Why is my query on order"),
                Node(node: "a1", parent: "u1", role: "assistant", text: "First answer that was re"),
                Node(node: "a2", parent: "u1", role: "assistant", text: "You are missing an index"),
                Node(node: "u2", parent: "a2", role: "user", text: "Here is the plan output."),
                // t1 (thoughts) is kept, hidden: the person saw the code cell follow the question.
                Node(node: "t1", parent: "u2", role: "assistant", text: "x\ny"),
                Node(node: "c1", parent: "t1", role: "assistant", text: "```sql\nCREATE INDEX idx_"),
                Node(node: "x1", parent: "c1", role: "tool", text: "```\nCREATE INDEX\n```"),
                Node(node: "a3", parent: "x1", role: "assistant", text: "Done. The query should n"),
            ], "\(nodes)")
        #expect(try Self.currentLeaf(store, source: "chatgpt", id: id) == "a3")
        let conversation = try #require(try ImportTests.conversation(store, source: "chatgpt", id: id))
        #expect(conversation.messageCount == 8 && conversation.hiddenCount == 1 && conversation.seenCount == 7)
        #expect(conversation.branchLength == 7 && conversation.isBranched)
        // What the person saw: the current branch without the reasoning, the code cell under
        // the question.
        let seen = try store.messages.branch(of: conversation, leaf: nil)
        #expect(seen.count == 6)
        let shown = try store.messages.page(seen, at: .first, limit: 10).items
        #expect(shown.map(\.sourceNodeID) == ["u1", "a2", "u2", "c1", "x1", "a3"])
        #expect(shown.map(\.position) == Array(0..<6))
        let everything = try store.messages.page(
            try store.messages.branch(of: conversation, leaf: nil, showingHidden: true), at: .first, limit: 10).items
        #expect(everything.map(\.sourceNodeID) == ["u1", "a2", "u2", "t1", "c1", "x1", "a3"])
        #expect(everything.map(\.kind) == [.text, .text, .text, .reasoning, .text, .text, .text])
        // The siblings, in time order, and where each stands.
        let tree = try store.messages.tree(conversationID: conversation.id)
        let root = try #require(tree.children(of: nil).first)
        let answers = tree.children(of: root)
        #expect(answers.count == 2)
        #expect(tree.siblingPlace(of: answers[1])! == (1, 2))
        #expect(tree.branches.count == 2)
        // One branch: no tree is needed to read it, and its messages page by position.
        let single = try #require(try ImportTests.conversation(store, source: "chatgpt", id: "22222222-aaaa-4bbb-8ccc-000000000002"))
        #expect(!single.isBranched && single.branchLength == single.messageCount)
    }

    @Test("Claude sample: parents by parent_message_uuid, a message of several parts a chain, the newest leaf current")
    func claudeSample() throws {
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [ImportTests.claude], format: nil)
        #expect(summary.failed.isEmpty)
        let id = "aaaaaaaa-1111-4222-8333-000000000001"
        let nodes = try Self.nodes(store, source: "claude", id: id)
        #expect(nodes.map(\.node) == ["m1", "m2", "m3", "m3#2", "m3#3", "m4"], "\(nodes)")
        #expect(nodes.map(\.parent) == [nil, "m1", "m1", "m3", "m3#2", "m3#3"])
        #expect(nodes.map(\.role) == ["user", "assistant", "assistant", "tool", "tool", "user"])
        #expect(try Self.currentLeaf(store, source: "claude", id: id) == "m4")
        // Old export without parents: one chain, by time.
        let old = try Self.nodes(store, source: "claude", id: "aaaaaaaa-1111-4222-8333-000000000002")
        #expect(old.map(\.node) == ["o1", "o2"] && old.map(\.parent) == [nil, "o1"])
    }

    @Test("importing the same export again changes nothing; a newer one adds its new messages under theirs")
    func reimport() throws {
        let store = try Store.open(path: ":memory:")
        _ = Importer(store: store).run(paths: [ImportTests.chatgpt], format: nil)
        let id = "11111111-aaaa-4bbb-8ccc-000000000001"
        let before = try store.database.query("SELECT id, public_id FROM message ORDER BY id") { "\($0.int64(0)) \($0.text(1))" }
        let again = Importer(store: store).run(paths: [ImportTests.chatgpt], format: nil)
        #expect(again.unchanged == 2 && again.inserted == 0 && again.updated == 0, "\(again)")
        #expect(try store.database.query("SELECT id, public_id FROM message ORDER BY id") { "\($0.int64(0)) \($0.text(1))" } == before)

        // A third answer regenerated in the web app since: added beside the two, made current.
        let folder = try TemporaryDirectory()
        let newer = folder.file("newer.json")
        var records = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: ImportTests.chatgpt))) as? [[String: Any]])
        var mapping = try #require(records[0]["mapping"] as? [String: Any])
        mapping["a4"] = [
            "id": "a4", "parent": "u1", "children": [String](),
            "message": [
                "id": "a4", "author": ["role": "assistant"], "create_time": 1_767_262_000.0,
                "content": ["content_type": "text", "parts": ["A third answer."]],
            ] as [String: Any],
        ] as [String: Any]
        records[0]["mapping"] = mapping
        records[0]["current_node"] = "a4"
        try JSONSerialization.data(withJSONObject: records).write(to: URL(fileURLWithPath: newer))
        let third = Importer(store: store).run(paths: [newer], format: nil)
        #expect(third.updated == 1 && third.unchanged == 1, "\(third)")
        let nodes = try Self.nodes(store, source: "chatgpt", id: id)
        #expect(nodes.count == 9 && nodes.last == Node(node: "a4", parent: "u1", role: "assistant", text: "A third answer."))
        #expect(try Self.currentLeaf(store, source: "chatgpt", id: id) == "a4")
        #expect(try ImportTests.transcript(store, source: "chatgpt", id: id) == ["user: Why is my query on orders slow?", "assistant: A third answer."])
        // Every message before keeps its row and public id.
        let after = Set(try store.database.query("SELECT id, public_id FROM message") { "\($0.int64(0)) \($0.text(1))" })
        #expect(Set(before).isSubset(of: after))
        #expect(try store.check().problems.isEmpty)
    }
}
