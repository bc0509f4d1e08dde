import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

@Suite("Conversations")
struct ConversationRepositoryTests {
    @Test("create, get, rename, pin and delete")
    func crud() throws {
        let store = try Store.open(path: ":memory:")
        let repository = store.conversations
        let created = try repository.create(
            NewConversation(title: "  Trip to Kyoto \n", model: "gpt-4o", createdAt: Timestamp(milliseconds: 1_500)))
        #expect(created.title == "Trip to Kyoto")
        #expect(created.model == "gpt-4o")
        #expect(created.source == "local")
        #expect(created.createdAt == Timestamp(milliseconds: 1_500))
        #expect(created.updatedAt == created.createdAt)
        #expect(created.messageCount == 0)
        #expect(created.publicID.count == 36 && created.publicID == created.publicID.lowercased())
        #expect(try repository.conversation(id: created.id) == created)

        let renamed = try repository.rename(id: created.id, to: "Trip to 京都 🏯")
        #expect(renamed.title == "Trip to 京都 🏯")
        #expect(renamed.updatedAt == created.updatedAt)  // renaming is not activity
        #expect(try repository.setPinned(id: created.id, true).pinned)

        #expect(try repository.count() == 1)
        #expect(try repository.delete(id: created.id))
        #expect(try repository.delete(id: created.id) == false)
        #expect(try repository.conversation(id: created.id) == nil)
        #expect(try repository.count() == 0)
    }

    @Test("an empty or blank title is refused, and nothing changes")
    func blankTitles() throws {
        let store = try Store.open(path: ":memory:")
        let conversation = try store.addConversation(title: "Keep me", createdAt: 1)
        for title in ["", "   ", "\n\t"] {
            #expect(throws: StorageError.invalidTitle) { try store.conversations.rename(id: conversation.id, to: title) }
            #expect(throws: StorageError.invalidTitle) { try store.conversations.create(NewConversation(title: title)) }
        }
        #expect(try store.conversations.conversation(id: conversation.id)?.title == "Keep me")
        #expect(try store.conversations.count() == 1)
    }

    @Test("ids are found whole or by a unique prefix; an ambiguous prefix is a clear error")
    func idPrefixes() throws {
        let store = try Store.open(path: ":memory:")
        let ids = [
            "aaaa1111-0000-4000-8000-000000000001", "aaaa2222-0000-4000-8000-000000000002",
            "bbbb0000-0000-4000-8000-000000000003",
        ]
        for (index, id) in ids.enumerated() {
            _ = try store.conversations.create(NewConversation(title: "c\(index)", createdAt: Timestamp(milliseconds: 1), publicID: id))
        }
        #expect(try store.conversations.conversation(matching: ids[0]).title == "c0")
        #expect(try store.conversations.conversation(matching: "AAAA2").title == "c1")
        #expect(try store.conversations.conversation(matching: "b").title == "c2")
        #expect(throws: StorageError.ambiguousID(prefix: "aaaa", matches: 2)) {
            try store.conversations.conversation(matching: "aaaa")
        }
        #expect(StorageError.ambiguousID(prefix: "aaaa", matches: 2).description == "id 'aaaa' matches 2 conversations; type more of it")
        for missing in ["c", "zzz", "", "a%", "a_", "aaaa1111-0000-4000-8000-0000000000019"] {
            #expect(throws: StorageError.notFound(id: missing)) { try store.conversations.conversation(matching: missing) }
        }
    }

    @Test("a re-used source id is refused by the schema, not duplicated")
    func uniqueSourceID() throws {
        let store = try Store.open(path: ":memory:")
        try store.addConversation(title: "one", createdAt: 1, source: "chatgpt", sourceID: "abc")
        #expect(throws: StorageError.self) {
            try store.addConversation(title: "two", createdAt: 1, source: "chatgpt", sourceID: "abc")
        }
        try store.addConversation(title: "three", createdAt: 1, source: "claude", sourceID: "abc")
        #expect(try store.conversations.count() == 2)
    }

    @Test("deleting many happens in one transaction, with messages and search entries")
    func deleteMany() throws {
        let store = try Store.open(path: ":memory:")
        var made: [ConversationDTO] = []
        for index in 0..<6 {
            made.append(try store.addConversation(title: "walrus \(index)", createdAt: Int64(index), messages: ["the walrus speaks", "indeed"]))
        }
        let deleted = try store.conversations.delete(ids: [made[0].id, made[2].id, made[4].id, made[4].id, 999_999])
        #expect(deleted == 3)
        #expect(try store.conversations.count() == 3)
        #expect(try store.messages.count() == 6)
        #expect(try store.database.scalarInt("SELECT count(*) FROM message_fts_docsize") == 6)
        let hits = try store.search.search("walrus", after: nil, limit: 50).items
        #expect(Set(hits.map(\.conversation.id)) == Set([made[1].id, made[3].id, made[5].id]))
        #expect(try store.check().isHealthy)
        // Ids left behind in the scratch table by an earlier failure are never deleted.
        try store.database.execute("INSERT INTO temp.doomed (id) VALUES (\(made[1].id))")
        #expect(try store.conversations.delete(ids: [made[3].id]) == 1)
        #expect(try store.conversations.count() == 2)
        #expect(try store.conversations.conversation(id: made[1].id) != nil)
    }

    @Test("a failure inside a batch delete deletes nothing")
    func deleteManyIsAtomic() throws {
        let store = try Store.open(path: ":memory:")
        let kept = try store.addConversation(title: "kept", createdAt: 1, messages: ["a"])
        let other = try store.addConversation(title: "other", createdAt: 2)
        // A trigger that refuses one of the deletes stands in for a failure midway.
        try store.database.execute(
            "CREATE TEMP TRIGGER refuse BEFORE DELETE ON conversation WHEN old.title = 'other' BEGIN SELECT raise(ABORT, 'refused'); END;")
        #expect(throws: StorageError.self) { try store.conversations.delete(ids: [kept.id, other.id]) }
        #expect(try store.conversations.count() == 2)
        #expect(try store.messages.count(conversationID: kept.id) == 1)
    }
}

@Suite("Messages")
struct MessageRepositoryTests {
    @Test("append keeps order, counts and the conversation's update time")
    func append() throws {
        let store = try Store.open(path: ":memory:")
        let conversation = try store.addConversation(title: "chat", createdAt: 1_000)
        let stored = try store.messages.append(
            [
                NewMessage(role: .system, content: "Be brief.", createdAt: Timestamp(milliseconds: 1_000)),
                NewMessage(role: .user, content: "Hi", createdAt: Timestamp(milliseconds: 2_000)),
                NewMessage(role: .assistant, content: "Hello!", createdAt: Timestamp(milliseconds: 3_000), model: "m"),
            ], to: conversation.id)
        #expect(stored.map(\.position) == [0, 1, 2])
        let more = try store.messages.append([NewMessage(role: .tool, content: "{}", createdAt: Timestamp(milliseconds: 2_500))], to: conversation.id)
        #expect(more.map(\.position) == [3])
        let updated = try #require(try store.conversations.conversation(id: conversation.id))
        #expect(updated.messageCount == 4)
        #expect(updated.updatedAt == Timestamp(milliseconds: 3_000))
        let page = try store.messages.page(conversationID: conversation.id, at: .first, limit: 10)
        #expect(page.items.map(\.role) == [.system, .user, .assistant, .tool])
        #expect(page.items.map(\.content) == ["Be brief.", "Hi", "Hello!", "{}"])
        #expect(page.items[2].model == "m")
        #expect(page.next == nil && page.previous == nil)
        #expect(throws: StorageError.notFound(id: "424242")) {
            try store.messages.append([NewMessage(role: .user, content: "x")], to: 424_242)
        }
    }

    @Test("a long conversation pages both ways, and refuses another conversation's token")
    func paging() throws {
        let store = try Store.open(path: ":memory:")
        let long = try store.addConversation(title: "long", createdAt: 1, messages: (0..<1_000).map { "message \($0)" })
        let other = try store.addConversation(title: "other", createdAt: 1, messages: ["x", "y"])
        var seen: [String] = []
        var position = PagePosition.first
        while true {
            let page = try store.messages.page(conversationID: long.id, at: position, limit: 64)
            seen += page.items.map(\.content)
            guard let next = page.next else { break }
            position = .after(next)
        }
        #expect(seen == (0..<1_000).map { "message \($0)" })
        var backwards: [String] = []
        position = .last
        while true {
            let page = try store.messages.page(conversationID: long.id, at: position, limit: 100)
            backwards = page.items.map(\.content) + backwards
            guard let previous = page.previous else { break }
            position = .before(previous)
        }
        #expect(backwards == seen)
        let foreign = try #require(try store.messages.page(conversationID: other.id, at: .first, limit: 1).next)
        #expect(throws: StorageError.invalidCursor(reason: "the token is for another conversation")) {
            try store.messages.page(conversationID: long.id, at: .after(foreign), limit: 10)
        }
        #expect(try store.messages.count(conversationID: long.id) == 1_000)
    }
}

@Suite("Settings")
struct SettingsRepositoryTests {
    @Test("typed values with defaults, kept across reopening")
    func typedValues() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        let width = SettingKey<Int>("test.width", default: 80)
        let flag = SettingKey<Bool>("test.flag", default: true)
        do {
            let store = try Store.open(path: path)
            #expect(try store.settings.value(.listSort) == .updated)
            #expect(try store.settings.value(width) == 80)
            try store.settings.set(.title, for: .listSort)
            try store.settings.set(132, for: width)
            try store.settings.set(false, for: flag)
        }
        let store = try Store.open(path: path)
        #expect(try store.settings.value(.listSort) == .title)
        #expect(try store.settings.value(width) == 132)
        #expect(try store.settings.value(flag) == false)
        try store.settings.reset(width)
        #expect(try store.settings.value(width) == 80)
        // A stored value that is not of the type reads as the default.
        try store.database.write { try store.database.run("UPDATE settings SET value = 'sideways' WHERE key = 'list.sort'") }
        #expect(try store.settings.value(.listSort) == .updated)
    }
}
