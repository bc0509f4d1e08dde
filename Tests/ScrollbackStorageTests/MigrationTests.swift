import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

@Suite("Migrations")
struct MigrationTests {
    /// The real schema plus one test-only step, as a later version would add.
    static func upgraded(with step: Migration) -> Migrator {
        Migrator(migrations: Migrator.scrollback.migrations + [step])
    }

    /// The schema version this scrollback writes; the test step makes it one more.
    static let latest = Migrator.scrollback.latestVersion

    static let addNotes = Migration(name: "test: notes", sql: "CREATE TABLE note (id INTEGER PRIMARY KEY, text TEXT NOT NULL);")

    func makeVersion1(at path: String) throws {
        let store = try Store.open(path: path)
        try store.addConversation(title: "Kept through upgrades", createdAt: 1_000, messages: ["hello", "hi there"])
    }

    @Test("v9: a session that version 8 dated 1970 (a first line without a time) starts at its first message with a time, backup first; other sources are left as they are")
    func undatedSessions() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("v8.sqlite")
        let start = Timestamp(milliseconds: 1_764_496_800_000)
        func session(_ source: String, _ id: String) -> ImportedConversation {
            ImportedConversation(
                source: source, sourceID: id, title: id, model: nil, createdAt: Timestamp(milliseconds: 0), updatedAt: start,
                messages: [
                    ImportedMessage(role: .system, content: "{\"type\":\"file-history-snapshot\"}", createdAt: Timestamp(milliseconds: 0), nodeID: "s", kind: .internal),
                    ImportedMessage(role: .user, content: "Fix it", createdAt: start, nodeID: "u", parent: .node("s")),
                    ImportedMessage(role: .assistant, content: "Done", createdAt: Timestamp(milliseconds: start.milliseconds + 1_000), nodeID: "a", parent: .node("u")),
                ])
        }
        do {
            let old = try Store.open(path: path, migrator: Migrator(migrations: Array(Migrator.scrollback.migrations.prefix(8))))
            #expect(old.migration.toVersion == 8)
            for conversation in [session("claude-code", "cc"), session("codex", "cx"), session("local", "kept")] {
                #expect(try old.upsert(conversation) == .inserted)
            }
        }
        let store = try Store.open(path: path, migrator: Migrator(migrations: Array(Migrator.scrollback.migrations.prefix(9))))
        #expect(store.migration.fromVersion == 8 && store.migration.toVersion == 9)
        #expect(store.migration.backupPath.map { FileManager.default.fileExists(atPath: $0) } == true)
        let rows = try store.conversations.page(sort: .title, at: .first, limit: 5).items
        for row in rows {
            let times = try store.messages.all(conversationID: row.id, showingHidden: true).map(\.createdAt.milliseconds)
            if row.source == "local" {
                #expect(row.createdAt.milliseconds == 0 && times.contains(0))
            } else {
                #expect(row.createdAt == start, "\(row.source)")
                #expect(times.sorted() == [start.milliseconds, start.milliseconds, start.milliseconds + 1_000], "\(row.source): \(times)")
            }
        }
        #expect(try store.check().problems.isEmpty)
    }

    @Test("v10: a version 9 database gains the overview's indexes, backup first; its charts count what it held, and `check` passes")
    func overviewIndexes() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("v9.sqlite")
        let march = Timestamp(milliseconds: 1_772_323_200_000)  // 2026-03-01
        do {
            let old = try Store.open(path: path, migrator: Migrator(migrations: Array(Migrator.scrollback.migrations.prefix(9))))
            #expect(old.migration.toVersion == 9)
            for (index, model) in ["gpt-4o", "gpt-4o", "claude-sonnet"].enumerated() {
                let time = Timestamp(milliseconds: march.milliseconds + Int64(index) * 3_600_000)
                _ = try old.upsert(
                    ImportedConversation(
                        source: "claude-code", sourceID: "s\(index)", title: "Session \(index)", model: model, createdAt: time, updatedAt: time,
                        messages: [
                            ImportedMessage(role: .user, content: "Hi", createdAt: time),
                            ImportedMessage(
                                role: .assistant, content: "Hello", createdAt: time, usage: MessageUsage(inputTokens: 100, outputTokens: 20)),
                        ]))
            }
        }
        let store = try Store.open(path: path, migrator: Migrator(migrations: Array(Migrator.scrollback.migrations.prefix(10))))
        #expect(store.migration.fromVersion == 9 && store.migration.toVersion == 10)
        #expect(store.migration.backupPath.map { FileManager.default.fileExists(atPath: $0) } == true)
        #expect(try store.database.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name IN ('conversation_by_model', 'conversation_by_source')") == 2)
        let window = ActivityWindow(filter: ConversationFilter(since: march, until: Timestamp(milliseconds: march.milliseconds + 86_400_000)), now: march)
        let models = try store.activity.chart(.models, filter: .none, window: window)
        #expect(models.bars.map(\.shownLabel) == ["gpt-4o", "claude-sonnet"] && models.bars.map(\.value) == [2, 1])
        let tokens = try store.activity.chart(.tokens, filter: .none, window: window)
        #expect(tokens.bars.map(\.shownLabel) == ["2026-03"] && tokens.bars.map(\.value) == [360])
        #expect(try store.check().problems.isEmpty)
    }

    @Test("v11: a version 10 database keeps its rules on a message's role and kind, now without IN lists, backup first; hidden counts still follow inserts, kind changes and deletes, and `check` passes")
    func checksWithoutTemporaryTables() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("v10.sqlite")
        let time = Timestamp(milliseconds: 1_772_323_200_000)
        do {
            let old = try Store.open(path: path, migrator: Migrator(migrations: Array(Migrator.scrollback.migrations.prefix(10))))
            #expect(old.migration.toVersion == 10)
            _ = try old.upsert(
                ImportedConversation(
                    source: "claude-code", sourceID: "s", title: "Session", model: nil, createdAt: time, updatedAt: time,
                    messages: [
                        ImportedMessage(role: .user, content: "Hi", createdAt: time, nodeID: "u"),
                        ImportedMessage(role: .assistant, content: "thinking", createdAt: time, nodeID: "r", parent: .node("u"), kind: .reasoning),
                        ImportedMessage(role: .assistant, content: "Hello", createdAt: time, nodeID: "a", parent: .node("r")),
                    ]))
        }
        let store = try Store.open(path: path, migrator: Migrator(migrations: Array(Migrator.scrollback.migrations.prefix(11))))
        #expect(store.migration.fromVersion == 10 && store.migration.toVersion == 11)
        #expect(store.migration.backupPath.map { FileManager.default.fileExists(atPath: $0) } == true)
        let database = store.database
        let messageSQL = try database.query("SELECT sql FROM sqlite_schema WHERE name = 'message' OR name LIKE 'message_hidden_%'") { $0.text(0) }
        #expect(messageSQL.count == 4)
        #expect(messageSQL.allSatisfy { !$0.contains(" IN (") }, "\(messageSQL)")
        #expect(try store.check().problems.isEmpty)

        let conversation = try database.scalarInt("SELECT id FROM conversation")
        func hidden() throws -> Int64 { try database.scalarInt("SELECT hidden_count FROM conversation") }
        #expect(try hidden() == 1)
        func insert(role: String, kind: String, position: Int) throws {
            try database.execute(
                "INSERT INTO message (public_id, conversation_id, position, role, content, created_at, kind) VALUES ('p\(position)', \(conversation), \(position), '\(role)', 'x', 0, '\(kind)')")
        }
        // The same rules as before: what was refused is refused, what was taken is taken.
        for (role, kind) in [("bogus", "text"), ("user", "x"), ("User", "text"), ("user", "Reasoning"), ("", "text")] {
            #expect(throws: (any Error).self, "\(role)/\(kind)") { try insert(role: role, kind: kind, position: 10) }
        }
        #expect(try database.scalarInt("SELECT count(*) FROM message") == 3)
        let roles = ["system", "user", "assistant", "tool"]
        for (index, kind) in ["text", "document", "tool", "reasoning", "internal", "unknown"].enumerated() {
            try insert(role: roles[index % roles.count], kind: kind, position: 20 + index)
        }
        #expect(try hidden() == 4)
        try database.execute("UPDATE message SET kind = 'text' WHERE position = 23")
        #expect(try hidden() == 3)
        try database.execute("UPDATE message SET kind = 'internal' WHERE position = 24")
        #expect(try hidden() == 3)
        try database.execute("UPDATE message SET kind = 'unknown' WHERE position = 20")
        #expect(try hidden() == 4)
        #expect(throws: (any Error).self) { try database.execute("UPDATE message SET role = 'nobody' WHERE position = 20") }
        try database.execute("DELETE FROM message WHERE position >= 20")
        #expect(try hidden() == 1)
        #expect(try store.check().problems.isEmpty)

        // A new database has the same schema as an upgraded one.
        let fresh = try Store.open(path: folder.file("new.sqlite"), migrator: Migrator(migrations: Array(Migrator.scrollback.migrations.prefix(11))))
        #expect(try DatabaseCheck.schema(of: fresh.database).mapValues(DatabaseCheck.normalized) == DatabaseCheck.schema(of: database).mapValues(DatabaseCheck.normalized))
    }

    @Test("a new database is created at the latest version, without a backup")
    func newDatabase() throws {
        let folder = try TemporaryDirectory()
        let store = try Store.open(path: folder.file("h.sqlite"), migrator: Self.upgraded(with: Self.addNotes))
        #expect(store.migration == MigrationOutcome(fromVersion: 0, toVersion: Self.latest + 1, backupPath: nil))
        #expect(try store.database.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name = 'note'") == 1)
        #expect(try folder.listing().filter { $0.contains("backup") } == [])
    }

    @Test("an older database is upgraded after a fsynced backup beside it")
    func upgradeWithBackup() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        try makeVersion1(at: path)
        let store = try Store.open(path: path, migrator: Self.upgraded(with: Self.addNotes))
        #expect(store.migration.fromVersion == Self.latest)
        #expect(store.migration.toVersion == Self.latest + 1)
        let backup = try #require(store.migration.backupPath)
        #expect(backup.hasPrefix(path + ".schema-\(Self.latest)-"))
        #expect(FileManager.default.fileExists(atPath: backup))
        // The backup is the old database: version 1, with the data.
        let old = try Store.open(path: backup, readOnly: true)
        #expect(old.migration.toVersion == Self.latest)
        #expect(try old.conversations.count() == 1)
        #expect(try store.database.scalarInt("PRAGMA user_version") == Int64(Self.latest + 1))
        #expect(try store.conversations.count() == 1)
    }

    @Test("the backup exists before the first step runs")
    func backupBeforeFirstStep() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        try makeVersion1(at: path)
        let directory = folder.path
        let probe = Migration(name: "test: probe") { database in
            let names = try FileManager.default.contentsOfDirectory(atPath: directory)
            guard names.contains(where: { $0.hasPrefix("h.sqlite.schema-\(Self.latest)-") && $0.hasSuffix(".backup") }) else {
                throw StorageError.invalidTitle  // any error: the test then fails below
            }
            try database.execute("CREATE TABLE probe (id INTEGER PRIMARY KEY)")
        }
        let store = try Store.open(path: path, migrator: Self.upgraded(with: probe))
        #expect(store.migration.toVersion == Self.latest + 1)
    }

    @Test("a step that fails midway leaves the database at the old version and intact")
    func failingStep() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        try makeVersion1(at: path)
        let failing = Migration(
            name: "test: fails midway",
            sql: """
                CREATE TABLE half (id INTEGER PRIMARY KEY);
                INSERT INTO half VALUES (1);
                UPDATE conversation SET title = 'changed';
                INSERT INTO conversation (id) VALUES (NULL);
                """)
        do {
            _ = try Store.open(path: path, migrator: Self.upgraded(with: failing))
            Issue.record("the failing step should throw")
        } catch let error as StorageError {
            guard case .migrationFailed(_, let step, let version, let backup, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(step == "test: fails midway")
            #expect(version == Self.latest)
            #expect(backup.map { FileManager.default.fileExists(atPath: $0) } == true)
            #expect(error.description.contains("the database is unchanged at schema \(Self.latest)"))
        }
        let store = try Store.open(path: path)
        #expect(try store.database.scalarInt("PRAGMA user_version") == Int64(Self.latest))
        #expect(try store.database.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name = 'half'") == 0)
        let page = try store.conversations.page(sort: .updated, at: .first, limit: 10)
        #expect(page.items.map(\.title) == ["Kept through upgrades"])
        #expect(try store.check().isHealthy)
    }

    @Test("a database from a newer scrollback is refused and its bytes stay the same")
    func newerRefused() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        do {
            let newer = try Store.open(path: path, migrator: Self.upgraded(with: Self.addNotes))
            try newer.addConversation(title: "From the future", createdAt: 5)
        }
        // Close it as a rollback-journal file so that even switching to WAL would show.
        do {
            let database = try Database.open(path: path, access: .readWrite)
            try database.execute("PRAGMA journal_mode = DELETE")
        }
        let before = try sha256(ofFile: path)
        let names = try folder.listing()
        for readOnly in [false, true] {
            #expect(throws: StorageError.newerSchema(path: path, found: Self.latest + 1, known: Self.latest)) {
                try Store.open(path: path, readOnly: readOnly)
            }
        }
        #expect(try sha256(ofFile: path) == before)
        #expect(try folder.listing() == names)
        #expect(
            StorageError.newerSchema(path: path, found: Self.latest + 1, known: Self.latest).description
                == "\(path) was written by a newer scrollback (schema \(Self.latest + 1), this one knows \(Self.latest)); upgrade scrollback")
    }

    @Test("read-only opening never migrates")
    func readOnlyNeverMigrates() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        try makeVersion1(at: path)
        let before = try sha256(ofFile: path)
        #expect(throws: StorageError.needsUpgrade(path: path, found: Self.latest, needed: Self.latest + 1)) {
            try Store.open(path: path, readOnly: true, migrator: Self.upgraded(with: Self.addNotes))
        }
        #expect(try sha256(ofFile: path) == before)
        #expect(try folder.listing().filter { !$0.hasSuffix("-shm") && !$0.hasSuffix("-wal") } == ["h.sqlite"])
    }
}
