import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

@Suite("Bulk insert")
struct BulkInsertTests {
    static func triggers(_ store: Store) throws -> [String] {
        try store.database.query("SELECT sql FROM sqlite_schema WHERE type = 'trigger' ORDER BY name") { $0.text(0) }
    }

    /// A new conversation has no savepoint of its own (its journal cost more than the
    /// import): when a later message of it fails, it is deleted again, so that nothing of it
    /// is left, in bulk and row by row alike.
    @Test("a new conversation whose second message fails leaves nothing behind", arguments: [false, true])
    func failedConversationLeavesNothing(bulk: Bool) throws {
        let store = try Store.open(path: ":memory:")
        func conversation(_ name: String, _ messages: [(id: String, text: String)]) -> ImportedConversation {
            ImportedConversation(
                source: "test", sourceID: name, title: name, model: nil, createdAt: Timestamp(milliseconds: 1_000),
                updatedAt: Timestamp(milliseconds: 1_000),
                messages: messages.enumerated().map { index, message in
                    ImportedMessage(
                        role: .user, content: message.text, createdAt: Timestamp(milliseconds: 1_000 + Int64(index)), publicID: message.id)
                })
        }
        let shared = "aaaaaaaa-0000-4000-8000-000000000001"
        #expect(try store.upsert(conversation("first", [(shared, "first words")])) == .inserted)
        let outcomes: [String] = try store.inserting(about: bulk ? 1_000_000 : 1) {
            var outcomes: [String] = []
            do {
                _ = try store.upsert(conversation("second", [("bbbbbbbb-0000-4000-8000-000000000001", "zebrafish words"), (shared, "taken")]))
                outcomes.append("stored")
            } catch StorageError.sqlite(let error) where error.code == 19 { outcomes.append("refused") }
            do {
                _ = try store.add(conversation("third", [("cccccccc-0000-4000-8000-000000000001", "okapi words"), (shared, "taken")]))
                outcomes.append("stored")
            } catch StorageError.sqlite(let error) where error.code == 19 { outcomes.append("refused") }
            outcomes.append("\(try store.upsert(conversation("fourth", [("dddddddd-0000-4000-8000-000000000001", "draft narwhal")])))")
            // Twice in one load (as an export may hold it): the second replaces the first.
            outcomes.append("\(try store.upsert(conversation("fourth", [("dddddddd-0000-4000-8000-000000000001", "fourth words")])))")
            return outcomes
        }
        #expect(outcomes == ["refused", "refused", "inserted", "updated"])
        #expect(try store.conversations.page(sort: .title, at: .first, limit: 10).items.map(\.title) == ["first", "fourth"])
        #expect(try store.conversations.count() == 2)
        #expect(try store.database.scalarInt("SELECT count(*) FROM message") == 2)
        #expect(try store.search.search("zebrafish", after: nil, limit: 5).items.isEmpty)
        #expect(try store.search.search("okapi", after: nil, limit: 5).items.isEmpty)
        #expect(try store.search.search("narwhal", after: nil, limit: 5).items.isEmpty)
        #expect(try store.search.search("words", after: nil, limit: 5).items.count == 2)
        #expect(try store.check().isHealthy)
        // The same conversation can come in later, whole.
        #expect(try store.upsert(conversation("second", [("bbbbbbbb-0000-4000-8000-000000000001", "zebrafish words")])) == .inserted)
        #expect(try store.search.search("zebrafish", after: nil, limit: 5).items.count == 1)
    }

    /// A conversation's message ids come from one look at the ids stored over its span of
    /// time (`Writer.FreeMessageIDs`): they must be the ids one query per message gave, each
    /// after the last of its millisecond, also when other conversations' messages share its
    /// milliseconds, when a millisecond is full (its first free id is in the next one's
    /// range, which a later message of that next millisecond must not take again), and when
    /// the span holds more stored rows than the look reads.
    @Test("message ids follow time: after the last of their millisecond, past a full one, among other conversations' messages")
    func messageIDsFollowTime() throws {
        let store = try Store.open(path: ":memory:")
        let t = Int64(1_772_323_200_000)
        func conversation(_ name: String, _ times: [Int64]) -> ImportedConversation {
            ImportedConversation(
                source: "test", sourceID: name, title: name, model: nil, createdAt: Timestamp(milliseconds: times.min() ?? t),
                updatedAt: Timestamp(milliseconds: times.max() ?? t),
                messages: times.map { ImportedMessage(role: .user, content: "\(name) at \($0)", createdAt: Timestamp(milliseconds: $0)) })
        }
        func ids(_ name: String) throws -> [Int64] {
            try store.database.query(
                "SELECT m.id FROM message AS m JOIN conversation AS c ON c.id = m.conversation_id WHERE c.source_id = ? ORDER BY m.position",
                [.text(name)]) { $0.int64(0) }
        }
        let base = { (time: Int64) in time * 65_536 }
        #expect(try store.upsert(conversation("first", [t, t + 1, t + 2, t + 5])) == .inserted)
        #expect(try ids("first") == [base(t), base(t + 1), base(t + 2), base(t + 5)])
        // The same milliseconds, twice within one conversation, and out of order.
        #expect(try store.upsert(conversation("second", [t + 5, t, t, t + 3, t + 1])) == .inserted)
        #expect(try ids("second") == [base(t + 5) + 1, base(t) + 1, base(t) + 2, base(t + 3), base(t + 1) + 1])

        // Millisecond t + 10 full: its last id taken by a stored row.
        let first = try store.database.scalarInt("SELECT id FROM conversation WHERE source_id = 'first'")
        try store.database.execute(
            "INSERT INTO message (id, public_id, conversation_id, position, role, content, created_at) VALUES (\(base(t + 11) - 1), 'full', \(first), 99, 'user', 'x', \(t + 10))")
        #expect(try store.upsert(conversation("third", [t + 10, t + 11, t + 11, t + 12])) == .inserted)
        let third = try ids("third")
        // The full millisecond's message goes to the first free id after it, the next
        // millisecond's messages after that one.
        #expect(third == [base(t + 11), base(t + 11) + 1, base(t + 11) + 2, base(t + 12)])

        // A span holding more stored rows than the look reads: each message asks.
        let crowd = (0..<(Writer.FreeMessageIDs.mostStored + 5)).map { t + 100 + Int64($0) }
        #expect(try store.upsert(conversation("crowd", crowd)) == .inserted)
        #expect(try store.upsert(conversation("among", [t + 100, t + 101, t + 2_000])) == .inserted)
        #expect(try ids("among") == [base(t + 100) + 1, base(t + 101) + 1, base(t + 2_000)])
        #expect(try store.check().isHealthy)
    }

    /// A bulk load indexes its rows in batches while it goes (whole rebuild only when it
    /// changed rows); with batches of 7, every path runs on a few hundred rows.
    @Test("a load indexed in batches finds exactly what a rebuild finds", arguments: [false, true])
    func indexedInBatches(replacing: Bool) throws {
        let store = try Store.open(path: ":memory:")
        try store.addConversation(title: "before the load", createdAt: 1, messages: ["an older walrus 東京"])
        let words = ["walrus", "東京タワー", "café", "résumé", "narwhal", "ラーメン", "zebra"]
        var random = SeededRandom(seed: replacing ? 3 : 4)
        func conversation(_ index: Int, version: Int = 0) -> ImportedConversation {
            ImportedConversation(
                source: "test", sourceID: "c\(index)", title: "title \(words[index % words.count]) \(version)", model: nil,
                // Times in no particular order, so that batches are not in id order.
                createdAt: Timestamp(milliseconds: Int64(random.next() % 1_000_000)), updatedAt: Timestamp(milliseconds: 0),
                messages: (0..<3).map { position in
                    ImportedMessage(
                        role: .user, content: "\(words[(index + position + version) % words.count]) \(index) \(position) v\(version)",
                        createdAt: Timestamp(milliseconds: Int64(random.next() % 1_000_000)))
                })
        }
        try store.inserting(about: 1_000_000, indexingBatch: 7) {
            for index in 0..<150 { _ = try store.upsert(conversation(index)) }
            // The same conversations again, changed, as an export may hold them twice.
            if replacing { for index in 0..<20 { _ = try store.upsert(conversation(index, version: 1)) } }
        }
        #expect(try store.check().isHealthy)
        try store.database.execute("INSERT INTO message_fts (message_fts) VALUES ('integrity-check')")
        try store.database.execute("INSERT INTO conversation_fts (conversation_fts) VALUES ('integrity-check')")
        // What the index finds is what the rows hold, message by message.
        let stored = try store.database.query("SELECT content FROM message") { $0.text(0) }
        for word in words {
            var hits = 0
            var cursor: Cursor?
            repeat {
                let page = try store.search.search(word, after: cursor, limit: 100)
                hits += page.items.filter { $0.message != nil }.count
                cursor = page.next
            } while cursor != nil
            #expect(hits == stored.filter { $0.contains(word) }.count, "\(word)")
        }
        #expect(try store.search.search("v1", after: nil, limit: 500).items.count == (replacing ? 60 : 0))
        // FTS5's defaults are back after the load.
        let config = try store.database.query("SELECT k, v FROM message_fts_config WHERE k IN ('automerge', 'crisismerge') ORDER BY k") {
            "\($0.text(0))=\($0.int(1))"
        }
        #expect(config == ["automerge=4", "crisismerge=16"])
    }

    @Test("rows inserted in bulk are searchable, and the schema's triggers are back as they were")
    func indexedAtTheEnd() throws {
        let store = try Store.open(path: ":memory:")
        try store.addConversation(title: "before the load", createdAt: 1, messages: ["an older walrus"])
        let schema = try Self.triggers(store)
        try store.inserting(about: .max) {
            for index in 0..<50 {
                try store.addConversation(title: "bulk \(index) walrus", createdAt: Int64(index), messages: ["walrus \(index) 東京タワー"])
            }
        }
        #expect(try Self.triggers(store) == schema)
        #expect(try store.check().isHealthy)
        // Counts and updated times are set at the end as the trigger would have set them.
        let bulk = try store.conversations.page(sort: .title, at: .first, limit: 100).items.filter { $0.title.hasPrefix("bulk") }
        #expect(bulk.count == 50 && bulk.allSatisfy { $0.messageCount == 1 })
        try store.inserting(about: .max) {
            let late = try store.conversations.create(NewConversation(title: "late", createdAt: Timestamp(milliseconds: 5)))
            _ = try store.messages.append([NewMessage(role: .user, content: "later", createdAt: Timestamp(milliseconds: 500))], to: late.id)
        }
        let late = try #require(try store.conversations.page(sort: .title, at: .first, limit: 200).items.first { $0.title == "late" })
        #expect(late.messageCount == 1 && late.updatedAt.milliseconds == 500)
        #expect(try store.search.search("walrus", after: nil, limit: 500).items.count == 50 + 51)
        #expect(try store.search.search("東京タワー", after: nil, limit: 500).items.count == 50)
        // Row-by-row indexing works again afterwards.
        try store.addConversation(title: "after", createdAt: 99, messages: ["a later walrus"])
        #expect(try store.search.search("later walrus", after: nil, limit: 5).items.count == 1)
        #expect(try store.check().isHealthy)
    }

    @Test("a load that fails leaves nothing behind: no rows, the triggers intact")
    func failureRollsBack() throws {
        struct Interrupted: Error {}
        let store = try Store.open(path: ":memory:")
        let schema = try Self.triggers(store)
        #expect(throws: Interrupted.self) {
            try store.inserting(about: .max) {
                try store.addConversation(title: "half", createdAt: 1, messages: ["x"])
                throw Interrupted()
            }
        }
        #expect(try store.conversations.count() == 0)
        #expect(try Self.triggers(store) == schema)
        try store.addConversation(title: "indexed", createdAt: 1, messages: ["findable text"])
        #expect(try store.search.search("findable", after: nil, limit: 5).items.count == 1)
    }

    @Test("deleting most of the database rebuilds the index once; search and check agree afterwards")
    func largeDelete() throws {
        let store = try Store.open(path: ":memory:")
        let schema = try Self.triggers(store)
        var ids: [Int64] = []
        try store.inserting(about: .max) {
            for index in 0..<1_600 {
                ids.append(try store.addConversation(title: "walrus \(index)", createdAt: Int64(index), messages: ["tusk \(index) ラーメン"]).id)
            }
        }
        let deleted = try store.conversations.delete(ids: Array(ids.prefix(1_200)))
        #expect(deleted == 1_200)
        // The count the list shows is counted again at the end (its trigger was set aside).
        #expect(try store.conversations.count() == 400)
        #expect(try Self.triggers(store) == schema)
        #expect(try store.check().isHealthy)
        #expect(try store.messages.count() == 400)
        var hits = 0
        var cursor: Cursor?
        repeat {
            let page = try store.search.search("ラーメン", after: cursor, limit: 100)
            hits += page.items.count
            cursor = page.next
        } while cursor != nil
        #expect(hits == 400)
        let kept = Set(ids.suffix(400))
        let titles = try store.search.search("walrus", after: nil, limit: 1_000).items.filter { $0.message == nil }
        #expect(titles.count == 400)
        #expect(titles.allSatisfy { kept.contains($0.conversation.id) })
    }
}
