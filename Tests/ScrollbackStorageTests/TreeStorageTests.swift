import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// The storage of conversation trees: undo brings a tree back whole, search places a hit
/// along its branch, appending continues the current branch, check finds a broken tree.
@Suite("Storage: conversation trees")
struct TreeStorageTests {
    static let start: Int64 = 1_800_000_000_000

    static func rows(_ store: Store) throws -> [String] {
        try store.database.query(
            """
            SELECT m.id || '|' || m.public_id || '|' || ifnull(m.parent_id, '-') || '|' || ifnull(m.source_node_id, '-') || '|' || m.position
              FROM message AS m ORDER BY m.id
            """) { $0.text(0) }
            + store.database.query(
                "SELECT 'c|' || id || '|' || ifnull(current_leaf_id, '-') || '|' || branch_length || '|' || message_count || '|' || updated_at FROM conversation"
            ) { $0.text(0) }
            + store.database.query("SELECT 'b|' || conversation_id || '|' || message_id || '|' || leaf_id FROM branch_choice ORDER BY 1") { $0.text(0) }
    }

    @Test("a deleted tree comes back whole on undo: parents, node ids, current branch, remembered choices")
    func undo() throws {
        let store = try Store.open(path: ":memory:")
        let conversation = try store.addTree(title: "Sorting", start: Self.start)
        let tree = try store.messages.tree(conversationID: conversation.id)
        let root = try #require(tree.children(of: nil).first)
        let answers = tree.children(of: root)
        let current = try #require(conversation.currentLeafID)
        try store.messages.choose(conversationID: conversation.id, leaf: answers[0], length: 2, leaving: (answers[1], current))
        let before = try Self.rows(store)
        #expect(before.contains { $0.hasPrefix("b|") })
        let snapshots = try store.conversations.deleteKeepingSnapshots(ids: [conversation.id])
        #expect(try store.database.scalarInt("SELECT count(*) FROM branch_choice") == 0)
        try store.conversations.restore(snapshots)
        #expect(try Self.rows(store) == before)
        #expect(try store.check().problems.isEmpty)
    }

    @Test("a search hit on another branch is placed by its depth; appending continues the current branch")
    func searchAndAppend() throws {
        let store = try Store.open(path: ":memory:")
        let conversation = try store.addTree(title: "Sorting", start: Self.start)
        let hit = try #require(try store.search.search("descending", after: nil, limit: 5).items.first)
        #expect(hit.message?.position == 2)
        let other = try #require(try store.search.search("Either", after: nil, limit: 5).items.first)
        #expect(other.message?.position == 1)
        let appended = try store.messages.append([NewMessage(role: .user, content: "Thanks!", createdAt: Timestamp(milliseconds: Self.start + 600_000))], to: conversation.id)
        let after = try #require(try store.conversations.conversation(id: conversation.id))
        #expect(appended.first?.position == 4 && after.currentLeafID == appended.first?.id && after.branchLength == 5)
        #expect(appended.first?.parentID == conversation.currentLeafID)
        let last = try store.messages.page(conversationID: conversation.id, at: .last, limit: 2).items
        #expect(last.map(\.content) == ["Pass by: >.", "Thanks!"] && last.map(\.position) == [3, 4])
    }

    @Test("check reports a message whose parent is in another conversation, and a current branch not its own")
    func check() throws {
        let store = try Store.open(path: ":memory:")
        let first = try store.addTree(title: "One", start: Self.start, sourceID: "one")
        let second = try store.addTree(title: "Two", start: Self.start + 1_000, sourceID: "two")
        try store.database.execute("UPDATE message SET parent_id = \(first.currentLeafID ?? 0) WHERE id = \(second.currentLeafID ?? 0)")
        try store.database.execute("UPDATE conversation SET current_leaf_id = \(second.currentLeafID ?? 0) WHERE id = \(first.id)")
        let problems = try store.check().problems
        #expect(problems.contains { $0.hasPrefix("branches: message ") && $0.hasSuffix("follows a message that is not in its conversation") })
        #expect(problems.contains { $0 == "branches: conversation \(first.publicID) shows a branch that is not its own" })
    }

    @Test("a branched conversation said to have one branch is found by check and repaired (its current branch again)")
    func repairBranchLength() throws {
        let store = try Store.open(path: ":memory:")
        let conversation = try store.addTree(title: "Sorting", start: Self.start)
        try store.database.execute("UPDATE conversation SET branch_length = message_count, current_leaf_id = NULL")
        #expect(try store.check().problems.contains { $0.hasPrefix("branches: conversation \(conversation.publicID) has branches but is read as one") })
        try store.repair()
        #expect(try store.check().problems.isEmpty)
        let repaired = try #require(try store.conversations.conversation(id: conversation.id))
        // The newest leaf, since the current one was lost.
        #expect(repaired.branchLength == 2 && repaired.isBranched)
        #expect(try store.messages.page(conversationID: conversation.id, at: .first, limit: 5).items.map(\.content) == ["How do I sort a list?", "Either works."])
    }

    @Test("a re-import keeps every stored message and never moves the updated time back")
    func reimportNeverGoesBack() throws {
        let store = try Store.open(path: ":memory:")
        let conversation = try store.addTree(title: "Sorting", start: Self.start)
        let messages = try store.database.scalarInt("SELECT count(*) FROM message")
        // An older export: only the question and the first answer, another title, an
        // earlier time.
        let time = Timestamp(milliseconds: Self.start)
        let older = ImportedConversation(
            source: "test", sourceID: "tree", title: "Sorting lists", model: "gpt-4o", createdAt: time, updatedAt: time,
            messages: [
                ImportedMessage(role: .user, content: "How do I sort a list?", createdAt: time, nodeID: "q1", parent: .root),
                ImportedMessage(role: .assistant, content: "Use sorted().", createdAt: Timestamp(milliseconds: Self.start + 60_000), model: "gpt-4o", nodeID: "a1", parent: .node("q1")),
            ])
        #expect(try store.upsert(older) == .unchanged)
        // Nor when its text or model differs: nothing of an older copy is newer.
        var olderModel = older
        olderModel.messages[1].model = "gpt-3.5"
        olderModel.messages[1].content = "Use sorted(), an older text."
        #expect(try store.upsert(olderModel) == .unchanged)
        #expect(try store.search.search("older text", after: nil, limit: 5).items.isEmpty)
        var renamed = older
        renamed.messages = Store.sortingTree.map { node in
            ImportedMessage(
                role: node.role, content: node.text, createdAt: Timestamp(milliseconds: Self.start + node.minute * 60_000),
                model: node.role == .assistant ? "gpt-4o" : nil, nodeID: node.id, parent: node.parent.map { .node($0) } ?? .root)
        }
        #expect(try store.upsert(renamed) == .updated)
        let after = try #require(try store.conversations.conversation(id: conversation.id))
        #expect(after.title == "Sorting lists" && after.updatedAt == conversation.updatedAt)
        #expect(try store.database.scalarInt("SELECT count(*) FROM message") == messages)
        #expect(try store.upsert(renamed) == .unchanged)
    }

    @Test("a loop of parents written by another program is found by check; --repair cuts it and stores parents first again")
    func loopOfParents() throws {
        let store = try Store.open(path: ":memory:")
        let conversation = try store.addTree(title: "Sorting", start: Self.start)
        let exported = try store.messages.all(conversationID: conversation.id)
        let byContent = Dictionary(uniqueKeysWithValues: exported.map { ($0.content, $0.id) })
        // q1's parent made a3: q1 → a2 → q2 → a3 → q1 is a loop, and nothing is a first message.
        try store.database.execute("UPDATE message SET parent_id = \(byContent["Pass by: >."] ?? 0) WHERE id = \(byContent["How do I sort a list?"] ?? 0)")
        let problems = try store.check().problems
        #expect(problems.contains { $0.hasPrefix("branches: in conversation \(conversation.publicID), message ") && $0.contains("follows one stored after it") }, "\(problems)")
        try store.repair()
        #expect(try store.check().problems.isEmpty)
        // The loop is cut at its earliest stored message, the question: the tree is whole again.
        let repaired = try store.messages.all(conversationID: conversation.id)
        #expect(repaired.first { $0.id == byContent["How do I sort a list?"] }?.parentID == nil)
        #expect(Set(repaired.map(\.id)) == Set(exported.map(\.id)))
        #expect(try store.messages.tree(conversationID: conversation.id).order.count == exported.count)
    }

    @Test("check and --repair: a message that is its own parent, a current branch cut short or of no length")
    func selfLoopAndShortBranch() throws {
        let store = try Store.open(path: ":memory:")
        let conversation = try store.addTree(title: "Sorting", start: Self.start)
        let byContent = Dictionary(uniqueKeysWithValues: try store.messages.all(conversationID: conversation.id).map { ($0.content, $0.id) })
        let answer = byContent["Either works."] ?? 0
        try store.database.execute("UPDATE message SET parent_id = id WHERE id = \(answer)")
        // The current leaf made the question (answers below it), its length 0.
        try store.database.execute(
            "UPDATE conversation SET current_leaf_id = \(byContent["How do I sort a list?"] ?? 0), branch_length = 0 WHERE id = \(conversation.id)")
        let problems = try store.check().problems
        #expect(problems.contains { $0.contains("follows one stored after it") }, "\(problems)")
        #expect(problems.contains { $0.hasSuffix("shows a branch cut short or of a wrong length; run `scrollback check --repair`") })
        try store.repair()
        #expect(try store.check().problems.isEmpty)
        let repaired = try #require(try store.conversations.conversation(id: conversation.id))
        #expect(repaired.branchLength >= 2 && repaired.currentLeafID != byContent["How do I sort a list?"])
        #expect(try store.messages.all(conversationID: conversation.id).first { $0.id == answer }?.parentID == nil)
    }

    @Test("a message cursor at the ends of Int64 pages a branch to nothing, never a trap")
    func extremeCursors() throws {
        let store = try Store.open(path: ":memory:")
        let conversation = try store.addTree(title: "Sorting", start: Self.start)
        let branch = try store.messages.branch(of: conversation, leaf: nil)
        #expect(branch.path != nil)
        for at in [Int64.max, Int64.min, -1] {
            let cursor = try Self.cursor(conversation.id, at)
            _ = try store.messages.page(branch, at: .after(cursor), limit: 5)
            _ = try store.messages.page(branch, at: .before(cursor), limit: 5)
        }
        #expect(try store.messages.page(branch, at: .after(Self.cursor(conversation.id, Int64.max)), limit: 5).items.isEmpty)
    }

    static func cursor(_ conversation: Int64, _ at: Int64) throws -> Cursor { try Cursor(token: token(conversation, at)) }

    /// A message cursor's token, as a script could write one.
    static func token(_ conversation: Int64, _ at: Int64) throws -> String {
        Data("sb2\u{1F}m\u{1F}\(conversation)\u{1F}\(at)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
