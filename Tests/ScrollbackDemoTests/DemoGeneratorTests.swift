import Testing

import ScrollbackDemo
import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

@Suite("Demo data")
struct DemoGeneratorTests {
    static func fingerprint(_ store: Store) throws -> [String] {
        try store.database.query(
            """
            SELECT c.public_id, c.title, c.created_at, c.updated_at, c.message_count,
                   (SELECT group_concat(m.role || ':' || length(m.content) || ':' || m.public_id, ',') FROM message m
                     WHERE m.conversation_id = c.id ORDER BY m.position)
            FROM conversation c ORDER BY c.source_id
            """
        ) { row in (0..<6).map { row.text(Int32($0)) }.joined(separator: "|") }
    }

    @Test("the same seed gives the same conversations; another seed does not")
    func deterministic() throws {
        let first = try Store.open(path: ":memory:")
        let second = try Store.open(path: ":memory:")
        let third = try Store.open(path: ":memory:")
        _ = try DemoGenerator(seed: 42).fill(first, count: 300)
        _ = try DemoGenerator(seed: 42).fill(second, count: 300, batchSize: 7)
        _ = try DemoGenerator(seed: 43).fill(third, count: 300)
        #expect(try Self.fingerprint(first) == Self.fingerprint(second))
        #expect(try Self.fingerprint(first) != Self.fingerprint(third))
    }

    @Test("filling again with the same seed adds nothing")
    func idempotent() throws {
        let store = try Store.open(path: ":memory:")
        let made = try DemoGenerator(seed: 5).fill(store, count: 200)
        #expect(made.added == 200 && made.alreadyPresent == 0)
        #expect(made.messages == (try store.messages.count()))
        let again = try DemoGenerator(seed: 5).fill(store, count: 250)
        #expect(again.added == 50 && again.alreadyPresent == 200)
        #expect(try store.conversations.count() == 250)
        #expect(try store.check().isHealthy)
    }

    @Test("two seeds fill one database side by side: no id of one is made by the other (seeds 1001 and 1015 once shared a message id)")
    func seedsSideBySide() throws {
        let store = try Store.open(path: ":memory:")
        let first = try DemoGenerator(seed: 1001).fill(store, count: 2_000)
        let second = try DemoGenerator(seed: 1015).fill(store, count: 2_000)
        #expect(first.added == 2_000 && second.added == 2_000)
        #expect(try store.conversations.count() == 4_000)
        #expect(try store.check().problems.isEmpty)
    }

    @Test("the data is varied: every role, code, CJK, emoji, combining marks, long titles and messages")
    func varied() throws {
        let store = try Store.open(path: ":memory:")
        var done: [Int] = []
        _ = try DemoGenerator(seed: 1).fill(store, count: 3_000, batchSize: 1_000) { done.append($0) }
        #expect(done == [1_000, 2_000, 3_000])
        let database = store.database
        func count(_ sql: String) throws -> Int64 { try database.scalarInt(sql) }
        for role in Role.allCases {
            #expect(try count("SELECT count(*) FROM message WHERE role = '\(role.rawValue)'") > 0, "\(role)")
        }
        #expect(try count("SELECT count(*) FROM message WHERE content LIKE '%```%'") > 0)
        #expect(try count("SELECT count(*) FROM message WHERE length(content) > 3000") > 0)
        #expect(try count("SELECT count(*) FROM message WHERE length(content) < 80") > 0)
        #expect(try count("SELECT count(*) FROM conversation WHERE length(title) > 120") > 0)
        #expect(try count("SELECT count(*) FROM conversation WHERE message_count > 100") > 0)
        #expect(try count("SELECT count(*) FROM conversation WHERE pinned = 1") > 0)
        let titles = try database.query("SELECT title FROM conversation") { $0.text(0) }
        let scalars = titles.flatMap(\.unicodeScalars)
        #expect(scalars.contains { (0x4E00...0x9FFF).contains($0.value) }, "CJK")
        #expect(scalars.contains { $0.properties.isEmojiPresentation }, "emoji")
        #expect(scalars.contains { $0.properties.generalCategory == .nonspacingMark }, "combining marks")
        #expect(scalars.contains { $0.value == 0x200D }, "zero-width joiner")
        let times = try database.queryFirst("SELECT min(created_at), max(updated_at) FROM conversation") { ($0.int64(0), $0.int64(1)) }
        let anchor = DemoGenerator.defaultAnchor.milliseconds
        #expect(times.map { $0.0 > anchor - 3 * 366 * 86_400_000 && $0.1 <= anchor + 86_400_000 * 7 } == true)
    }

    @Test("a large load into an empty database is indexed at the end and comes out the same")
    func bulkMatchesRowByRow() throws {
        let bulk = try Store.open(path: ":memory:")
        let rowByRow = try Store.open(path: ":memory:")
        _ = try DemoGenerator(seed: 11).fill(bulk, count: 5_000)
        _ = try DemoGenerator(seed: 11).fill(rowByRow, count: 4_999)
        _ = try DemoGenerator(seed: 11).fill(rowByRow, count: 5_000)
        #expect(try Self.fingerprint(bulk) == Self.fingerprint(rowByRow))
        #expect(try bulk.check().isHealthy)
        for query in ["sourdough", "東京", "Zürich"] {
            let bulkHits = try bulk.search.search(query, after: nil, limit: 20).items.map(\.conversation.publicID)
            let rowHits = try rowByRow.search.search(query, after: nil, limit: 20).items.map(\.conversation.publicID)
            #expect(!bulkHits.isEmpty && bulkHits == rowHits, "\(query)")
        }
    }
}
