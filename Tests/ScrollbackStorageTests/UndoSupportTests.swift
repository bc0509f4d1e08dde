import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

@Suite("Undo, positions and change tokens")
struct UndoSupportTests {
    @Test("deleted conversations come back exactly: rows, ids, messages, search entries")
    func restoreExactly() throws {
        let store = try Store.open(path: ":memory:")
        try store.addConversation(title: "kept", createdAt: 5, messages: ["stays"])
        let first = try store.addConversation(title: "first walrus", createdAt: 10, updatedAt: 50, pinned: true, messages: ["walrus one", "reply"])
        let second = try store.addConversation(title: "second", createdAt: 20, messages: (0..<30).map { "walrus line \($0)" })
        let pages = try store.conversations.page(sort: .updated, at: .first, limit: 10).items
        let messagesBefore = try store.messages.page(conversationID: second.id, at: .first, limit: 100).items
        let hitsBefore = try store.search.search("walrus", after: nil, limit: 100).items

        let snapshots = try store.conversations.deleteKeepingSnapshots(ids: [first.id, second.id, 12_345])
        #expect(snapshots.map(\.conversation.id) == [first.id, second.id])
        #expect(snapshots[1].messages.count == 30)
        #expect(try store.conversations.count() == 1)
        #expect(try store.search.search("walrus", after: nil, limit: 100).items.isEmpty)

        try store.conversations.restore(snapshots)
        #expect(try store.conversations.page(sort: .updated, at: .first, limit: 10).items == pages)
        #expect(try store.messages.page(conversationID: second.id, at: .first, limit: 100).items == messagesBefore)
        #expect(try store.search.search("walrus", after: nil, limit: 100).items == hitsBefore)
        #expect(try store.check().isHealthy)
    }

    @Test("a large restore (by the bulk policy, as a load) brings back the same rows, counts, branches and search entries")
    func restoreLarge() throws {
        let store = try Store.open(path: ":memory:")
        try store.inserting(about: .max) {
            for index in 0..<1_600 {
                try store.addConversation(
                    title: "walrus \(index)", createdAt: Int64(index) * 1_000, pinned: index % 97 == 0,
                    messages: ["walrus line \(index)", "reply \(index)", "more \(index)"])
            }
        }
        let tree = try store.addTree(title: "Sorting walrus", start: 2_000_000)
        let before = try store.conversations.page(sort: .updated, at: .first, limit: 2_000).items
        let hitsBefore = try store.search.search("walrus", after: nil, limit: 2_000).items
        let treeBefore = try store.messages.all(conversationID: tree.id)
        let doomed = before.prefix(1_200).map(\.id)
        #expect(SearchIndex.isLarge(doomed.count, of: before.count))
        let snapshots = try store.conversations.deleteKeepingSnapshots(ids: doomed)
        #expect(try store.conversations.count() == before.count - 1_200)
        try store.conversations.restore(snapshots)
        #expect(try store.conversations.page(sort: .updated, at: .first, limit: 2_000).items == before)
        #expect(try store.search.search("walrus", after: nil, limit: 2_000).items == hitsBefore)
        #expect(try store.messages.all(conversationID: tree.id) == treeBefore)
        #expect(try store.conversations.conversation(id: tree.id) == before.first { $0.id == tree.id })
        #expect(try store.conversations.count() == before.count)
        #expect(try store.check().isHealthy)
    }

    @Test("a conversation's index is its place in each order", arguments: ConversationOrder.allCases)
    func indexes(order: ConversationOrder) throws {
        let store = try Store.open(path: ":memory:")
        for index in 0..<40 {
            try store.addConversation(title: ["b", "A", "c"][index % 3], createdAt: Int64(index % 5), pinned: index == 7)
        }
        let all = try store.conversations.page(sort: order, at: .first, limit: 100).items
        for (position, conversation) in all.enumerated() {
            #expect(try store.conversations.index(of: conversation, sort: order) == position)
        }
    }

    @Test("the change token moves when another connection commits, not for our own writes")
    func changeToken() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        let ours = try Store.open(path: path)
        let other = try Store.open(path: path)
        let start = try ours.conversations.changeToken()
        try ours.addConversation(title: "ours", createdAt: 1)
        #expect(try ours.conversations.changeToken() == start)
        try other.addConversation(title: "theirs", createdAt: 2)
        #expect(try ours.conversations.changeToken() != start)
    }
}
