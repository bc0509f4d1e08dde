import Foundation
import Testing

@testable import ScrollbackImport
import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// A database made by an earlier release (schema 1 or 2, written with that schema's SQL),
/// holding what that release imported from the samples (one branch per conversation), is
/// upgraded to trees in place; importing the same exports again then adds the branches the
/// earlier release dropped, once, keeping every earlier message's row and public id.
@Suite("Upgrade to conversations as trees")
struct UpgradeToTreesTests {
    /// The samples' conversations as an earlier release stored them: the current branch.
    static func earlierRelease(at path: String, schema version: Int) throws {
        let reference = try Store.open(path: ":memory:")
        _ = Importer(store: reference).run(paths: [ImportTests.chatgpt, ImportTests.claude], format: nil)
        let conversations = try reference.database.query(
            "SELECT \(SQLiteConversationRepository.columns) FROM conversation ORDER BY id", [], SQLiteConversationRepository.conversation)

        let migrator = Migrator(migrations: Array(Migrator.scrollback.migrations.prefix(version)))
        let store = try Store.open(path: path, migrator: migrator)
        let database = store.database
        try database.write {
            for conversation in conversations {
                let publicID = StableID.uuid(conversation.source, conversation.sourceID ?? "")
                try database.run(
                    """
                    INSERT INTO conversation (id, public_id, title, model, source, source_id, created_at, updated_at, pinned)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)
                    """,
                    [.integer(conversation.createdAt.milliseconds * 65_536), .text(publicID), .text(conversation.title),
                     SQLValue(conversation.model), .text(conversation.source), SQLValue(conversation.sourceID),
                     .integer(conversation.createdAt.milliseconds), .integer(conversation.updatedAt.milliseconds)])
                let branch = try reference.messages.page(conversationID: conversation.id, at: .first, limit: 1_000).items
                for (position, message) in branch.enumerated() {
                    try database.run(
                        """
                        INSERT INTO message (id, public_id, conversation_id, position, role, content, created_at, model)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                        [.integer(message.createdAt.milliseconds * 65_536 + Int64(position)),
                         .text(StableID.uuid(publicID, String(position))), .integer(conversation.createdAt.milliseconds * 65_536),
                         .integer(Int64(position)), .text(message.role.rawValue), .text(message.content),
                         .integer(message.createdAt.milliseconds), SQLValue(message.model)])
                }
            }
        }
    }

    static func rows(_ database: Database) throws -> [String] {
        try database.query(
            """
            SELECT c.public_id || '|' || c.title || '|' || c.updated_at || '|' || m.id || '|' || m.public_id || '|'
                   || m.role || '|' || m.content || '|' || m.created_at
              FROM message AS m JOIN conversation AS c ON c.id = m.conversation_id ORDER BY m.id
            """
        ) { $0.text(0) }
    }

    @Test("each earlier schema: every row kept as one branch with a backup; a re-import adds the dropped branches once", arguments: [1, 2])
    func upgrade(from version: Int) throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("old.sqlite")
        try Self.earlierRelease(at: path, schema: version)
        let before = try Self.rows(Store.open(path: path, readOnly: true, migrator: Migrator(migrations: Array(Migrator.scrollback.migrations.prefix(version)))).database)
        #expect(before.count == 15)

        let store = try Store.open(path: path)
        #expect(store.migration.fromVersion == version && store.migration.toVersion == Migrator.scrollback.latestVersion)
        let backup = try #require(store.migration.backupPath)
        #expect(FileManager.default.fileExists(atPath: backup))
        if version == 2 { #expect(try Self.rows(store.database) == before) } else { #expect(try Self.rows(store.database).count == before.count) }
        // Each conversation one chain: every message follows the one before, the last current.
        let chains = try store.database.query(
            """
            SELECT count(*) FROM message AS m
             WHERE m.parent_id IS NOT (SELECT p.id FROM message AS p WHERE p.conversation_id = m.conversation_id
                                         AND p.position = m.position - 1)
            """) { $0.int(0) }
        #expect(chains == [0])
        let conversations = try store.conversations.page(sort: .created, at: .first, limit: 10).items
        for conversation in conversations {
            #expect(!conversation.isBranched && conversation.branchLength == conversation.messageCount)
            let last = try store.messages.page(conversationID: conversation.id, at: .last, limit: 1).items.last
            #expect(conversation.currentLeafID == last?.id)
        }
        #expect(try store.check().problems.isEmpty)
        let transcriptBefore = try ImportTests.transcript(store, source: "chatgpt", id: "11111111-aaaa-4bbb-8ccc-000000000001")

        // The same exports again: the regenerated answer the earlier release dropped is added
        // beside the one it kept; nothing else is new; node ids are recorded.
        let first = Importer(store: store).run(paths: [ImportTests.chatgpt, ImportTests.claude], format: nil)
        #expect(first.failed.isEmpty && first.inserted == 0, "\(first)")
        let oldRows = try Self.rows(store.database)
        let id = "11111111-aaaa-4bbb-8ccc-000000000001"
        let nodes = try TreeImportTests.nodes(store, source: "chatgpt", id: id)
        // The reasoning the earlier release dropped (t1) goes back where it stood: the code
        // cell stored under the question now hangs under it, keeping its ids.
        #expect(nodes.map(\.node) == ["u1", "a1", "a2", "u2", "t1", "c1", "x1", "a3"], "\(nodes)")
        #expect(nodes.map(\.parent) == [nil, "u1", "u1", "a2", "u2", "t1", "c1", "x1"])
        let claude = try TreeImportTests.nodes(store, source: "claude", id: "aaaaaaaa-1111-4222-8333-000000000001")
        #expect(claude.map(\.node) == ["m1", "m2", "m3", "m3#2", "m3#3", "m4"], "\(claude)")
        #expect(try ImportTests.transcript(store, source: "chatgpt", id: id) == transcriptBefore)
        // Every earlier message keeps its public id (and, from schema 2, its row id).
        let keyFields = version == 1 ? 4..<5 : 3..<5
        func keys(_ rows: [String]) -> Set<String> { Set(rows.map { $0.split(separator: "|")[keyFields].joined(separator: "|") }) }
        #expect(keys(before).isSubset(of: keys(oldRows)))
        // a1, t1 and Claude's m2, which the earlier release dropped.
        #expect(oldRows.count == 18)

        let second = Importer(store: store).run(paths: [ImportTests.chatgpt, ImportTests.claude], format: nil)
        #expect(second.updated == 0 && second.inserted == 0, "\(second)")
        #expect(try Self.rows(store.database) == oldRows)
        #expect(try store.check().problems.isEmpty)
    }
}
