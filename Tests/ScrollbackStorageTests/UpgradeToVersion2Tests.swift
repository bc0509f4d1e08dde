import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// A database made by the previous release (schema 1, written with that release's SQL)
/// opens, upgrades, and answers searches by the new rules: before its index is rebuilt,
/// while it is, and after.
@Suite("Upgrade from schema 1")
struct UpgradeToVersion2Tests {
    static let version1 = Migrator(migrations: [Migrator.scrollback.migrations[0]])

    /// The corpus written as release 0.1 wrote it: ids from SQLite, in insertion order.
    static func makeVersion1(at path: String, corpus: SearchRulesTests.Corpus) throws {
        let store = try Store.open(path: path, migrator: version1)
        let database = store.database
        try database.write {
            for (index, title) in corpus.titles.enumerated() {
                let publicID = StableID.uuid("v1", String(index))
                try database.run(
                    """
                    INSERT INTO conversation (public_id, title, model, source, source_id, created_at, updated_at, pinned)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                    [.text(publicID), .text(title.text), .text("m"), .text("local"), .null, .integer(title.time), .integer(title.time), .integer(0)])
                let conversationID = database.lastInsertRowID
                for (position, message) in corpus.messages.filter({ $0.conversation == index }).enumerated() {
                    try database.run(
                        """
                        INSERT INTO message (public_id, conversation_id, position, role, content, created_at, model)
                        VALUES (?, ?, ?, ?, ?, ?, ?)
                        """,
                        [.text(StableID.uuid(publicID, String(position))), .integer(conversationID), .integer(Int64(position)),
                         .text("user"), .text(message.text), .integer(message.time), .null])
                }
            }
        }
    }

    /// Every row, as text, so that before and after compare whole.
    static func rows(_ database: Database) throws -> [String] {
        try database.query(
            """
            SELECT c.public_id || '|' || c.title || '|' || c.created_at || '|' || c.updated_at || '|' || c.message_count
                   || '|' || coalesce(m.public_id, '') || '|' || coalesce(m.position, '') || '|' || coalesce(m.content, '')
                   || '|' || coalesce(m.created_at, '')
              FROM conversation AS c LEFT JOIN message AS m ON m.conversation_id = c.id
             ORDER BY c.public_id, m.position
            """
        ) { $0.text(0) }
    }

    static func expectSearchesMatch(_ store: Store, _ corpus: SearchRulesTests.Corpus, _ label: String) throws {
        // Conversation ids in corpus order, by their public ids.
        let ids = try corpus.titles.indices.map { index in
            try store.conversations.conversation(matching: StableID.uuid("v1", String(index))).id
        }
        for query in ["the", "refactor", "東京", "会議", "東", "go", "\"quick brown\"", "C#", "std::vector", "zzzqx", "cafe", "->"] {
            let expected = SearchRulesTests.canonical(SearchRulesTests.bruteForce(query, corpus), corpus)
            let found = SearchRulesTests.canonical(try SearchRulesTests.allHits(query, in: store, ids: ids, corpus: corpus), corpus)
            #expect(found == expected, "\(label): query \(query): \(found.count) found, \(expected.count) expected")
        }
    }

    @Test("every row is kept, the index is rebuilt in steps that survive interruption, and searches are right throughout")
    func upgrade() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("old.sqlite")
        let corpus = SearchRulesTests.corpus(seed: 11, conversations: 150)
        try Self.makeVersion1(at: path, corpus: corpus)
        let before = try Self.rows(Store.open(path: path, readOnly: true, migrator: Self.version1).database)

        let store = try Store.open(path: path)
        #expect(store.migration.fromVersion == 1 && store.migration.toVersion == Migrator.scrollback.latestVersion)
        #expect(store.migration.backupPath != nil)
        #expect(try Self.rows(store.database) == before)
        #expect(try store.conversations.count() == corpus.titles.count)
        // Ids now follow time.
        let order = try store.database.query("SELECT created_at FROM message ORDER BY id") { $0.int64(0) }
        #expect(order == order.sorted())
        let backlog = try store.searchBacklog()
        #expect(backlog == corpus.titles.count + corpus.messages.count)
        #expect(try store.search.indexingProgress() != nil)
        try Self.expectSearchesMatch(store, corpus, "nothing indexed yet")
        let report = try store.check()
        #expect(report.isHealthy, "\(report.problems)")

        // Three steps, then a stop: what was done is kept.
        var steps = 0
        let finished = try store.buildSearchIndex(rowsPerStep: 200, shouldStop: { steps += 1; return steps > 3 })
        #expect(!finished)
        let reopened = try Store.open(path: path)
        let left = try reopened.searchBacklog()
        // One table per step: the 150 conversations, then 200 messages twice.
        #expect(left == backlog - 150 - 400)
        try Self.expectSearchesMatch(reopened, corpus, "partly indexed")

        // Writes meanwhile, below and above the rebuild's mark.
        try reopened.addConversation(title: "old refactor news", createdAt: 1_500_000_000_000, messages: ["the old one"])
        try reopened.addConversation(title: "new refactor news", createdAt: 1_900_000_000_000, messages: ["the new one"])
        let oldest = try #require(try reopened.database.queryFirst("SELECT id FROM conversation WHERE title NOT LIKE '% news' ORDER BY id LIMIT 1") { $0.int64(0) })
        _ = try reopened.conversations.rename(id: oldest, to: "renamed while waiting")
        #expect(try reopened.search.search("\"old one\"", after: nil, limit: 5).items.count == 1)
        #expect(try reopened.search.search("waiting", after: nil, limit: 5).items.map(\.conversation.id) == [oldest])
        _ = try reopened.conversations.delete(id: oldest)
        #expect(try reopened.check().isHealthy)

        #expect(try reopened.buildSearchIndex(rowsPerStep: 500))
        #expect(try reopened.searchBacklog() == 0)
        #expect(try reopened.search.indexingProgress() == nil)
        let final = try reopened.check()
        #expect(final.isHealthy, "\(final.problems)")
        #expect(final.skipped.allSatisfy { !$0.contains("being built") })
        #expect(try reopened.search.search("\"old one\"", after: nil, limit: 5).items.count == 1)
        #expect(try reopened.search.search("waiting", after: nil, limit: 5).items.isEmpty)
    }

    @Test("the stock sqlite3 shell opens the upgraded file, reads every table and passes quick_check")
    func stockShell() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("old.sqlite")
        try Self.makeVersion1(at: path, corpus: SearchRulesTests.corpus(seed: 5, conversations: 20))
        do {
            let store = try Store.open(path: path)
            _ = try store.buildSearchIndex()
        }
        let shell = try runSQLiteShell(
            path,
            "PRAGMA quick_check; SELECT count(*) FROM conversation; SELECT count(*) > 0 FROM message; SELECT value FROM tally; SELECT count(*) FROM settings WHERE key <> 'database.id'; SELECT length(value) FROM settings WHERE key = 'database.id'; SELECT count(*) FROM search_backlog;"
        )
        #expect(shell.status == 0, "\(shell.error)")
        #expect(shell.output == "ok\n20\n1\n20\n0\n32\n0\n")
    }

    @Test("rows crowded into one millisecond, and times past the ids' range, upgrade in order")
    func crowdedTimes() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("crowded.sqlite")
        do {
            let store = try Store.open(path: path, migrator: Self.version1)
            let database = store.database
            try database.write {
                // 70,000 messages at one millisecond, 67,000 at the last millisecond of 9999,
                // and one ordinary conversation between.
                for (index, time) in [Int64(1_700_000_000_000), 1_750_000_000_000, 253_402_300_799_999].enumerated() {
                    try database.run(
                        "INSERT INTO conversation (public_id, title, source, created_at, updated_at) VALUES (?, ?, 'local', ?, ?)",
                        [.text(StableID.uuid("crowd", String(index))), .text("crowd \(index)"), .integer(time), .integer(time)])
                    let conversation = database.lastInsertRowID
                    let count = index == 1 ? 2 : (index == 0 ? 70_000 : 67_000)
                    for position in 0..<count {
                        try database.run(
                            "INSERT INTO message (public_id, conversation_id, position, role, content, created_at) VALUES (?, ?, ?, 'user', ?, ?)",
                            [.text(StableID.uuid("crowd", String(index), String(position))), .integer(conversation),
                             .integer(Int64(position)), .text("m \(index) \(position)"), .integer(time)])
                    }
                }
            }
        }
        let store = try Store.open(path: path)
        #expect(store.migration.toVersion == Migrator.scrollback.latestVersion)
        let rows = try store.database.query("SELECT created_at, conversation_id, position FROM message ORDER BY id") {
            [$0.int64(0), $0.int64(1), $0.int64(2)]
        }
        #expect(rows.count == 137_002)
        #expect(rows == rows.sorted { ($0[0], $0[1], $0[2]) < ($1[0], $1[1], $1[2]) })
        // New rows at those times still get free ids, in order.
        let crowded = try store.conversations.conversation(matching: StableID.uuid("crowd", "0"))
        let added = try store.messages.append(
            [NewMessage(role: .user, content: "one more", createdAt: Timestamp(milliseconds: 1_700_000_000_000))], to: crowded.id)
        let newest = try store.database.scalarInt("SELECT max(id) FROM message WHERE created_at = 1700000000000")
        #expect(added.first?.id == newest)
        #expect(try store.buildSearchIndex())
        #expect(try store.check().isHealthy)
    }

    @Test("two processes building the index at once both finish, whoever does the last step")
    func twoBuilders() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("two.sqlite")
        try Self.makeVersion1(at: path, corpus: SearchRulesTests.corpus(seed: 3, conversations: 60))
        let first = try Store.open(path: path)
        let second = try Store.open(path: path)
        // The second process finishes the work between two of the first's steps; the first
        // then finds nothing left and returns (it once went on asking forever; the count of
        // questions stops it here if it does again).
        var asked = 0
        var secondFinished = false
        let finished = try first.buildSearchIndex(
            rowsPerStep: 50,
            shouldStop: {
                asked += 1
                if asked == 3 { secondFinished = (try? second.buildSearchIndex(rowsPerStep: 50)) == true }
                return asked > 1_000
            })
        #expect(secondFinished)
        #expect(finished)
        #expect(asked < 10)
        #expect(try first.check().isHealthy)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".partial") }.isEmpty)
    }
}
