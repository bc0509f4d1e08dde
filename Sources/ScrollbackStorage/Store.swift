import Foundation
import ScrollbackModel

/// A scrollback database, opened, validated and migrated, with its repositories.
///
/// Each `Store` owns one connection; use it from one thread or actor. Background work
/// opens a `Store` of its own.
public final class Store {
    let database: Database
    public let migration: MigrationOutcome
    /// The schema history this store was opened with (what `check` compares against).
    public let migrator: Migrator
    public let conversations: SQLiteConversationRepository
    public let messages: SQLiteMessageRepository
    public let settings: SQLiteSettingsRepository
    public let search: SQLiteSearchRepository
    public let activity: SQLiteActivityRepository

    /// What the imports since the last `takeAttachmentProblems` could not read of the
    /// attachments an export holds, one line each.
    var attachmentProblems: [String] = []
    /// The snapshot images this store wrote, with the descriptor of each one's lock.
    var imageLocks: [String: Int32] = [:]

    /// The attachment problems of the imports since the last call (for the import's summary).
    public func takeAttachmentProblems() -> [String] {
        defer { attachmentProblems = [] }
        return attachmentProblems
    }

    public var path: String { database.path }
    public var isReadOnly: Bool { database.isReadOnly }
    /// Opened as an immutable snapshot (an idle database in a folder nobody can write).
    public var isSnapshot: Bool { database.isSnapshot }

    /// Opens (read-write: creating or upgrading as needed) the database at `path`.
    ///
    /// An existing file is validated on a read-only connection first: a file that is not
    /// ours (or a good file with a foreign `-wal` beside it) is never opened read-write, so
    /// nothing of it is checkpointed or written.
    ///
    /// - Parameter createFolder: make the missing folders of `path` (for the default
    ///   location only: a mistyped `--db` must not create a new database).
    /// - Parameter willUpgrade: told before an existing database is backed up and upgraded.
    /// - Parameter keepingCopy: an upgrade backs the file up first (false only for a copy
    ///   whose original stays).
    /// - Throws: `StorageError` with a message fit for the user.
    public static func open(
        path: String, readOnly: Bool = false, createFolder: Bool = true, migrator: Migrator = .scrollback,
        keepingCopy: Bool = true, willUpgrade: ((_ from: Int, _ to: Int) -> Void)? = nil
    ) throws -> Store {
        if !readOnly && path != ":memory:" && FileManager.default.fileExists(atPath: path) {
            do {
                let probe = try Database.open(path: path, access: .readOnly)
                _ = try validate(probe, with: migrator, forUpgrade: true)
            } catch StorageError.cannotOpen(_, let reason) where reason == StorageError.hotJournalReason && Database.journalFits(path) {
                // A rollback journal a killed writer left (one switching the file to WAL, or
                // another program's): the connection below rolls it back, as SQLite does for
                // any program that may write; then the file is checked as ever.
            }
        }
        let database = try Database.open(path: path, access: readOnly ? .readOnly : .readWrite, createFolder: createFolder)
        // Connections start with trusted_schema off; our own schema's triggers write to the
        // FTS5 tables, which SQLite allows only in a trusted schema, so it is turned on once
        // the file is known to be a scrollback database (or a new, empty one).
        let version = try validate(database, with: migrator)
        try database.execute("PRAGMA trusted_schema = ON")
        if readOnly {
            return Store(
                database: database, migration: MigrationOutcome(fromVersion: version, toVersion: version, backupPath: nil),
                migrator: migrator)
        }
        database.trustForCheckpoints()
        if path != ":memory:" {
            let mode = try database.queryFirst("PRAGMA journal_mode = WAL") { $0.text(0) }
            if mode?.lowercased() != "wal" {
                throw StorageError.cannotOpen(path: path, reason: "cannot switch to WAL (journal mode is \(mode ?? "unknown"))")
            }
            try database.execute("PRAGMA synchronous = NORMAL")
        }
        let outcome = try migrator.migrate(database, keepingCopy: keepingCopy, willUpgrade: willUpgrade)
        return Store(database: database, migration: outcome, migrator: migrator)
    }

    /// `Migrator.validate`, saying so when a `-wal` beside the file may be what is foreign.
    private static func validate(_ database: Database, with migrator: Migrator, forUpgrade: Bool = false) throws -> Int {
        do {
            return try migrator.validate(database, forUpgrade: forUpgrade)
        } catch StorageError.notAScrollbackDatabase(let path, let reason) where hasWALContent(path) {
            throw StorageError.notAScrollbackDatabase(
                path: path,
                reason: "\(reason) as read with the -wal file beside it, which may belong to another database; nothing was changed: move \(PathText.lastComponent(of: path))-wal away and try again")
        }
    }

    /// Whether a `-wal` with content is beside `path`: changes not yet in the file (a live
    /// writer's, a crash's, or another database's).
    public static func hasWALContent(_ path: String) -> Bool {
        var status = stat()
        return stat(path + "-wal", &status) == 0 && status.st_size > 0
    }

    private init(database: Database, migration: MigrationOutcome, migrator: Migrator) {
        self.database = database
        self.migration = migration
        self.migrator = migrator
        conversations = SQLiteConversationRepository(database: database)
        messages = SQLiteMessageRepository(database: database)
        settings = SQLiteSettingsRepository(database: database)
        search = SQLiteSearchRepository(database: database)
        activity = SQLiteActivityRepository(database: database)
    }

    /// How long a write waits for another process's write to end before it fails with
    /// `StorageError.busy` (5 s unless set).
    public func waitForWriteLock(atMost milliseconds: Int) {
        database.setBusyTimeout(milliseconds: milliseconds)
    }

    /// The words a filter may take here, for shell completion: every source (a skip scan of
    /// the source index: one lookup per source, however many conversations), and the models
    /// of the `recent` most recently updated conversations (the updated index; no index
    /// covers the model), each sorted.
    public func filterWords(recent: Int = 5_000) throws -> (sources: [String], models: [String]) {
        try database.read {
            let sources = try database.query(
                """
                WITH RECURSIVE next (source) AS (
                    SELECT min(source) FROM conversation
                    UNION ALL
                    SELECT (SELECT min(source) FROM conversation WHERE source > next.source) FROM next WHERE next.source IS NOT NULL
                )
                SELECT source FROM next WHERE source IS NOT NULL
                """
            ) { $0.text(0) }
            let models = try database.query(
                """
                SELECT DISTINCT model FROM (
                    SELECT model FROM conversation ORDER BY pinned DESC, updated_at DESC, id DESC LIMIT ?
                ) WHERE model IS NOT NULL AND model <> '' ORDER BY model
                """, [.integer(Int64(max(recent, 0)))]
            ) { $0.text(0) }
            return (sources, models)
        }
    }

    /// Counts, size, schema version, oldest and newest, read in one transaction.
    ///
    /// - Parameter perModel: also count conversations, messages and tokens per model (see
    ///   `modelStats`), which reads every message.
    public func stats(perModel: Bool = false) throws -> DatabaseStats {
        try database.read {
            let bounds = try database.queryFirst("SELECT min(created_at), max(updated_at) FROM conversation") {
                ($0.optionalInt64(0).map(Timestamp.init(milliseconds:)), $0.optionalInt64(1).map(Timestamp.init(milliseconds:)))
            }
            var bytes: Int64 = 0
            for suffix in ["", "-wal"] {
                let attributes = try? FileManager.default.attributesOfItem(atPath: path + suffix)
                bytes += (attributes?[.size] as? NSNumber)?.int64Value ?? 0
            }
            let hidden = Int(clamping: try database.scalarInt("SELECT coalesce(sum(hidden_count), 0) FROM conversation"))
            var stats = DatabaseStats(
                conversations: try conversations.count(), messages: max(0, try messages.count() - hidden), fileBytes: bytes,
                schemaVersion: Int(try database.scalarInt("PRAGMA user_version")), oldest: bounds?.0, newest: bounds?.1,
                models: perModel ? try database.query(Self.modelStatsSQL, [], Self.modelStats) : [])
            stats.hiddenMessages = hidden
            stats.attachments = try AttachmentTables(database: database).totals()
            return stats
        }
    }

    /// Per model: conversations, the messages the person saw and the known input and output
    /// tokens (of every message, hidden ones too: their tokens were spent), most messages
    /// first (then by name). A message counts under its own model, else its
    /// conversation's, else under none; an empty name is none.
    ///
    /// One pass over the messages, each joined to its conversation by primary key, and one
    /// sort of them by name: it reads the whole message table (about 5 s for 3.4 million
    /// messages, 2.3 GB, when the file is in the page cache; about 35 s when it is read from
    /// disk), where the other counts read small indexes.
    /// Sums are `total()`: a file with absurd counts cannot make it fail with an integer
    /// overflow.
    public func modelStats() throws -> [ModelStats] {
        try database.read { try database.query(Self.modelStatsSQL, [], Self.modelStats) }
    }

    private static func modelStats(_ row: Row) -> ModelStats {
        ModelStats(
            model: row.optionalText(0), conversations: row.int(1), messages: row.int(2),
            inputTokens: row.isNull(3) ? nil : Self.tokenSum(row.double(3)),
            outputTokens: row.isNull(4) ? nil : Self.tokenSum(row.double(4)))
    }

    static let modelStatsSQL = """
        SELECT coalesce(nullif(m.model, ''), nullif(c.model, '')) AS name, count(DISTINCT m.conversation_id),
               count(*) FILTER (WHERE m.kind NOT IN (\(MessageKind.hiddenSQLList))) AS seen,
               CASE WHEN count(m.input_tokens) > 0 THEN total(m.input_tokens) END,
               CASE WHEN count(m.output_tokens) > 0 THEN total(m.output_tokens) END
          FROM message AS m JOIN conversation AS c ON c.id = m.conversation_id
         GROUP BY name
         ORDER BY seen DESC, name IS NULL, name
        """

    /// A sum of token counts as a whole number: negative (impossible by the schema) is 0,
    /// beyond Int64 the largest Int64.
    static func tokenSum(_ value: Double) -> Int64 {
        guard value.isFinite, value > 0 else { return 0 }
        return Int64(exactly: value.rounded(.down)) ?? Int64.max
    }
}
