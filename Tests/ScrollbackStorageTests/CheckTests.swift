import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

@Suite("Check and repair")
struct CheckTests {
    @Test("a healthy database passes; a damaged search index and a wrong count are found and repaired")
    func damageFoundAndRepaired() throws {
        let folder = try TemporaryDirectory()
        let store = try Store.open(path: folder.file("h.sqlite"))
        let conversation = try store.addConversation(title: "fine", createdAt: 1, messages: ["indexed text", "more"])
        #expect(try store.check() == CheckReport(problems: [], skipped: []))

        // Take one message out of the index behind the triggers' back, and miscount.
        let message = try #require(try store.messages.page(conversationID: conversation.id, at: .first, limit: 1).items.first)
        try store.database.write {
            try store.database.run(
                "INSERT INTO message_fts (message_fts, rowid, content) VALUES ('delete', ?, ?)",
                [.integer(message.id), .text(message.content)])
            try store.database.run("UPDATE conversation SET message_count = 7")
        }
        let report = try store.check()
        #expect(report.problems.contains { $0.hasPrefix("search index: message_fts") })
        #expect(report.problems.contains { $0.hasPrefix("message count: conversation \(conversation.publicID) says 7 messages but has 2") })
        #expect(report.problems.count == 2)
        #expect(try store.search.search("indexed", after: nil, limit: 5).items.isEmpty)

        try store.repair()
        #expect(try store.check().isHealthy)
        #expect(try store.search.search("indexed", after: nil, limit: 5).items.count == 1)
        #expect(try store.conversations.conversation(id: conversation.id)?.messageCount == 2)
    }
}
