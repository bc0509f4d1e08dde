import CSQLite
import Foundation
import ScrollbackModel

extension Store {
    /// Schema object by object, integrity, foreign keys, message counts and the full-text
    /// indexes. Each step that fails to run is itself reported; the report always comes back.
    public func check() throws -> CheckReport {
        DatabaseCheck.run(on: database, deepSearchCheck: !isReadOnly, migrator: migrator)
    }

    /// Checks a file that may not even open as a scrollback database, on a read-only
    /// connection: what could be read, and what is wrong. Never writes.
    public static func check(path: String, migrator: Migrator = .scrollback) -> CheckReport {
        let database: Database
        do {
            database = try Database.open(path: path, access: .readOnly)
        } catch let error as StorageError {
            return CheckReport(problems: ["open: \(error.description)"], skipped: ["every other check (the file does not open)"])
        } catch {
            return CheckReport(problems: ["open: \(error)"], skipped: ["every other check (the file does not open)"])
        }
        return DatabaseCheck.run(on: database, deepSearchCheck: false, migrator: migrator)
    }
}

enum DatabaseCheck {
    /// Objects SQLite itself may add to any database.
    static let allowedExtras: Set<String> = ["sqlite_stat1", "sqlite_stat4", "sqlite_sequence"]

    static func run(on database: Database, deepSearchCheck: Bool, migrator: Migrator) -> CheckReport {
        var problems: [String] = []
        var skipped: [String] = []
        /// Runs one step; a step that throws is a problem in itself, and the rest go on.
        func step(_ name: String, _ body: () throws -> Void) {
            do {
                try body()
            } catch let error as StorageError {
                problems.append("\(name): could not finish (\(error.detailForReport))")
            } catch {
                problems.append("\(name): could not finish (\(error))")
            }
        }
        var schemaMatches = false
        step("header") {
            let version = try database.scalarInt("PRAGMA user_version")
            let applicationID = try database.scalarInt("PRAGMA application_id")
            if applicationID != Migrator.applicationID {
                problems.append("header: application id \(applicationID) is not scrollback's (\(Migrator.applicationID))")
            }
            if version != Int64(migrator.latestVersion) {
                problems.append("header: schema version \(version), this scrollback writes \(migrator.latestVersion)")
            }
        }
        step("schema") {
            let found = try schema(of: database)
            let expected = try expectedSchema(migrator)
            var differences: [String] = []
            for (name, sql) in expected.sorted(by: { $0.key < $1.key }) {
                guard let actual = found[name] else {
                    differences.append("schema: \(name) is missing")
                    continue
                }
                if normalized(actual) != normalized(sql) { differences.append("schema: \(name) differs from scrollback's") }
            }
            for name in found.keys.sorted() where expected[name] == nil && !allowedExtras.contains(name) {
                differences.append("schema: \(name) is not part of scrollback's schema (added by another program?)")
            }
            problems += differences
            schemaMatches = differences.isEmpty
        }
        step("integrity") {
            let integrity = try database.query("PRAGMA integrity_check(20)") { $0.text(0) }
            if integrity != ["ok"] { problems += integrity.map { "integrity: \($0)" } }
        }
        guard schemaMatches else {
            skipped.append("foreign keys, message counts and search indexes (the schema is not scrollback's)")
            return CheckReport(problems: problems, skipped: skipped)
        }
        step("foreign keys") {
            let orphans = try database.query("PRAGMA foreign_key_check") {
                "\($0.text(0)) row \($0.int64(1)) refers to a missing \($0.text(2))"
            }
            problems += orphans.prefix(20).map { "foreign key: \($0)" }
        }
        step("values") {
            // What the schema's types do not stop: SQLite stores any type in any column.
            let range = "BETWEEN 0 AND 253402300799999"  // 1970-01-01 to 9999-12-31, in milliseconds
            let conversations = try database.query(
                """
                SELECT public_id FROM conversation
                WHERE typeof(created_at) <> 'integer' OR typeof(updated_at) <> 'integer' OR typeof(title) <> 'text'
                   OR created_at NOT \(range) OR updated_at NOT \(range)
                LIMIT 20
                """
            ) { "value: conversation \($0.text(0)) has a title that is not text or a time outside the years 1970–9999" }
            let messages = try database.query(
                """
                SELECT public_id FROM message
                WHERE typeof(created_at) <> 'integer' OR typeof(content) <> 'text' OR created_at NOT \(range)
                LIMIT 20
                """
            ) { "value: message \($0.text(0)) has content that is not text or a time outside the years 1970–9999" }
            problems += conversations + messages
        }
        step("message counts") {
            let miscounted = try database.query(
                """
                SELECT public_id, message_count, (SELECT count(*) FROM message WHERE conversation_id = conversation.id)
                FROM conversation
                WHERE message_count <> (SELECT count(*) FROM message WHERE conversation_id = conversation.id)
                LIMIT 20
                """
            ) { "conversation \($0.text(0)) says \($0.int(1)) messages but has \($0.int(2))" }
            problems += miscounted.map { "message count: \($0)" }
            let hidden = try database.query(
                """
                SELECT public_id, hidden_count, (SELECT count(*) FROM message WHERE conversation_id = conversation.id
                                                    AND kind IN (\(MessageKind.hiddenSQLList)))
                FROM conversation
                WHERE hidden_count <> (SELECT count(*) FROM message WHERE conversation_id = conversation.id
                                          AND kind IN (\(MessageKind.hiddenSQLList)))
                LIMIT 20
                """
            ) { "conversation \($0.text(0)) says \($0.int(1)) hidden messages but has \($0.int(2))" }
            problems += hidden.map { "message count: \($0)" }
            let counted = try database.scalarInt("SELECT value FROM tally WHERE name = 'conversations'")
            let conversations = try database.scalarInt("SELECT count(*) FROM conversation")
            if counted != conversations {
                problems.append("conversation count: kept as \(counted), there are \(conversations); run `scrollback check --repair`")
            }
        }
        step("branches") {
            // A catch-up cut short leaves conversations whose branch is still to come.
            let syncHint = (try? database.syncOutbox()) != nil ? " (if a sync did not finish, run `scrollback sync` first)" : ""
            let strays = try database.query(
                """
                SELECT m.public_id FROM message AS m LEFT JOIN message AS p ON p.id = m.parent_id
                 WHERE m.parent_id IS NOT NULL AND (p.id IS NULL OR p.conversation_id <> m.conversation_id)
                 LIMIT 20
                """
            ) { "branches: message \($0.text(0)) follows a message that is not in its conversation" }
            let leaves = try database.query(
                """
                SELECT c.public_id FROM conversation AS c LEFT JOIN message AS m ON m.id = c.current_leaf_id
                 WHERE (c.current_leaf_id IS NOT NULL OR c.message_count > 0)
                   AND (m.id IS NULL OR m.conversation_id <> c.id)
                 LIMIT 20
                """
            ) { "branches: conversation \($0.text(0)) shows a branch that is not its own\(syncHint)" }
            // Said to have one branch (and read by position) while two messages share a parent.
            let unsaid = try database.query(
                """
                SELECT c.public_id FROM conversation AS c
                 WHERE c.branch_length = c.message_count
                   AND EXISTS (SELECT 1 FROM message AS m WHERE m.conversation_id = c.id
                                GROUP BY m.parent_id HAVING count(*) > 1)
                 LIMIT 20
                """
            ) { "branches: conversation \($0.text(0)) has branches but is read as one; run `scrollback check --repair`" }
            // Scrollback stores parents before children; a message whose parent comes after
            // it is on a loop of parents, or was written by another program out of order
            // (an export would then name a parent before it).
            let disordered = try database.query(
                """
                SELECT c.public_id, m.public_id FROM message AS m
                  JOIN message AS p ON p.id = m.parent_id
                  JOIN conversation AS c ON c.id = m.conversation_id
                 WHERE p.conversation_id = m.conversation_id AND p.position >= m.position
                 LIMIT 20
                """
            ) { "branches: in conversation \($0.text(0)), message \($0.text(1)) follows one stored after it (a loop of parents?); run `scrollback check --repair`" }
            // A current branch that stops above its last message, or has no length.
            let short = try database.query(
                """
                SELECT c.public_id FROM conversation AS c
                 WHERE c.message_count > 0
                   AND (c.branch_length = 0 OR c.branch_length > c.message_count
                        OR EXISTS (SELECT 1 FROM message AS m WHERE m.conversation_id = c.id AND m.parent_id = c.current_leaf_id))
                 LIMIT 20
                """
            ) { "branches: conversation \($0.text(0)) shows a branch cut short or of a wrong length; run `scrollback check --repair`\(syncHint)" }
            problems += strays + leaves + unsaid + disordered + short
        }
        step("attachments") {
            // A database opened by an older schema's migrator (tests) has no attachments.
            guard try database.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name = 'attachment_content'") > 0 else { return }
            problems += try AttachmentTables(database: database).problems()
        }
        var building: Set<String> = []
        var countedOnly = false
        step("search backlog") {
            building = Set(try database.query("SELECT name FROM search_backlog") { $0.text(0) })
        }
        for (index, content) in [("message_fts", "message"), ("conversation_fts", "conversation")] {
            if building.contains(content) {
                skipped.append("\(index) (being built after an upgrade; scrollback goes on with it whenever it writes)")
                continue
            }
            step("search index \(index)") {
                if !deepSearchCheck {
                    // The deep check is an INSERT, which a read-only connection refuses; compare
                    // the number of indexed rows with the table instead.
                    let indexed = try database.scalarInt("SELECT count(*) FROM \(index)_docsize")
                    let rows = try database.scalarInt("SELECT count(*) FROM \(content)")
                    if indexed != rows {
                        problems.append("search index: \(index) holds \(indexed) rows, \(content) has \(rows)")
                    }
                    countedOnly = true
                    skipped.append("deep check of \(index) (it writes: done only on a writable file whose -wal holds no changes; this one's holds some, from a process that has the file open (a browser, a sync, an import) or one that was killed; once none has it open, any command that writes folds them in, and check runs it after that)")
                    return
                }
                do {
                    try database.write {
                        try database.run("INSERT INTO \(index) (\(index), rank) VALUES ('integrity-check', 1)")
                    }
                } catch StorageError.damaged(_, let detail) {
                    problems.append("search index: \(index) does not match \(content) (\(detail.message)); run `scrollback check --repair`")
                }
            }
        }
        return CheckReport(problems: problems, skipped: skipped, searchIndexesCountedOnly: countedOnly)
    }

    /// Name → SQL of every object but SQLite's automatic indexes (whose SQL is null).
    static func schema(of database: Database) throws -> [String: String] {
        let rows = try database.query("SELECT name, sql FROM sqlite_schema WHERE sql IS NOT NULL") { ($0.text(0), $0.text(1)) }
        return Dictionary(rows, uniquingKeysWith: { first, _ in first })
    }

    /// The schema the migrations make, in a private in-memory database.
    static func expectedSchema(_ migrator: Migrator) throws -> [String: String] {
        Dictionary(try expectedObjects(migrator).map { ($0.name, $0.sql) }, uniquingKeysWith: { first, _ in first })
    }

    /// The same, as (name, SQL, whether it is a full-text index's shadow table, which its
    /// virtual table makes) in the order the migrations created them.
    static func expectedObjects(_ migrator: Migrator) throws -> [(name: String, sql: String, isShadow: Bool)] {
        let scratch = try Database.inMemory()
        for migration in migrator.migrations { try migration.apply(scratch) }
        let rows = try scratch.query("SELECT name, sql, type FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY rowid") {
            (name: $0.text(0), sql: $0.text(1), type: $0.text(2))
        }
        let virtualTables = rows.filter { $0.type == "table" && $0.sql.hasPrefix("CREATE VIRTUAL TABLE") }.map(\.name)
        return rows.map { row in
            (row.name, row.sql, row.type == "table" && virtualTables.contains { row.name.hasPrefix($0 + "_") })
        }
    }

    /// SQL with runs of white space made one space, so reformatting is no difference.
    static func normalized(_ sql: String) -> String {
        sql.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }
}

extension StorageError {
    /// SQLite's own words where there are any: a check report is for a person looking for
    /// what is wrong.
    var detailForReport: String {
        switch self {
        case .damaged(_, let detail), .inputOutput(_, let detail), .sqlite(let detail): return detail.message
        default: return description
        }
    }
}

extension Store {
    /// The file and its `-wal`, byte for byte, beside it (`PATH.before-repair-TIME`, and
    /// `…-wal`), synced, made under the write lock before `repair` writes: a repair
    /// checkpoints the log, and frames of it SQLite will not use (a write cut short, or a
    /// damaged frame, which hides the transactions after it) are then gone for good; this
    /// copy keeps them for a person who would recover them by hand. Returns the paths.
    public func keepCopyBeforeRepair() throws -> [String] {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withYear, .withMonth, .withDay, .withTime, .withTimeZone]
        var base = "\(database.path).before-repair-\(formatter.string(from: Date()))"
        var suffix = 1
        while FileManager.default.fileExists(atPath: base) {
            suffix += 1
            base = "\(database.path).before-repair-\(formatter.string(from: Date()))-\(suffix)"
        }
        var copies: [String] = []
        try database.write {
            let file = database.fileName
            for (from, to) in [(file, base), (file + "-wal", base + "-wal")] {
                guard FileManager.default.fileExists(atPath: from) else { continue }
                do {
                    // Read through a descriptor never closed: closing one would drop this
                    // connection's locks (`HeldOpen`).
                    guard let source = HeldOpen.descriptor(from), let length = HeldOpen.size(source) else {
                        throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                    }
                    try Self.copyOut(source, to: to, length: length, step: 64 << 20, shouldStop: { false })
                    try Migrator.fsync(path: to)
                    copies.append(to)
                } catch {
                    for copy in copies { try? FileManager.default.removeItem(atPath: copy) }
                    try? FileManager.default.removeItem(atPath: to)
                    throw StorageError.inputOutput(
                        path: to, detail: SQLiteError(extendedCode: SQLITE_IOERR, message: "could not keep a copy before the repair: \(error.localizedDescription)"))
                }
            }
        }
        return copies
    }

    /// Puts back scrollback's own schema objects that are missing (a dropped trigger or
    /// index), rebuilds both full-text indexes (finishing any backlog) and recounts, in one transaction.
    /// Objects that are not scrollback's are left alone: `check` names them.
    ///
    /// - Returns: the copies of the file and its `-wal` kept before it wrote
    ///   (`keepCopyBeforeRepair`).
    /// - Throws: `StorageError.damaged`, before writing or copying anything, when SQLite's own
    ///   pages are damaged: rebuilding on a damaged b-tree spreads the damage, and what it
    ///   rebuilds from cannot be trusted.
    @discardableResult
    public func repair() throws -> [String] {
        let sound = try database.query("PRAGMA quick_check(1)") { $0.text(0) }
        guard sound == ["ok"] else {
            throw StorageError.damaged(
                path: database.path, detail: SQLiteError(extendedCode: SQLITE_CORRUPT, message: sound.first.map { String($0.prefix(200)) } ?? "quick_check"))
        }
        let expected = try DatabaseCheck.expectedObjects(migrator)
        let found = try DatabaseCheck.schema(of: database)
        // A schema without the tables the data is in is a damaged schema page, not a dropped
        // index: making the tables again would write over what is still in the file.
        guard found["conversation"] != nil, found["message"] != nil else {
            throw StorageError.damaged(
                path: database.path, detail: SQLiteError(extendedCode: SQLITE_CORRUPT, message: "its schema names no conversation or message table"))
        }
        let copies = try keepCopyBeforeRepair()
        try database.write {
            for object in expected where found[object.name] == nil && !object.isShadow {
                try database.execute(object.sql)
            }
            try SearchIndex.rebuild(database)
            try Writer(database: database).recount()
            try repairOrder()
            try repairBranches()
            if found["attachment_content"] != nil { try AttachmentTables(database: database).repairDamaged() }
        }
        return copies
    }

    /// Each conversation whose messages are not stored parents first made so again: a loop of
    /// parents is cut at its earliest message (which becomes a first message), and the
    /// messages are numbered again in tree order.
    private func repairOrder() throws {
        let conversations = try database.query(
            """
            SELECT DISTINCT m.conversation_id FROM message AS m JOIN message AS p ON p.id = m.parent_id
             WHERE p.conversation_id = m.conversation_id AND p.position >= m.position
            """
        ) { $0.int64(0) }
        for conversation in conversations {
            var rows = try database.query(
                "SELECT id, parent_id, position FROM message WHERE conversation_id = ? ORDER BY position", [.integer(conversation)]
            ) { (id: $0.int64(0), parent: $0.optionalInt64(1), position: $0.int64(2)) }
            var order: [Int64] = []
            // A message that is its own parent becomes a first message.
            for index in rows.indices where rows[index].parent == rows[index].id {
                try Writer(database: database).detach(message: rows[index].id)
                rows[index].parent = nil
            }
            while true {
                let tree = ConversationTree(nodes: rows.map { (id: $0.id, parentID: $0.parent) })
                order = tree.order
                guard order.count < rows.count else { break }
                // A loop: its earliest stored message becomes a first one.
                let reached = Set(order)
                guard let cut = rows.firstIndex(where: { !reached.contains($0.id) }) else { break }
                try Writer(database: database).detach(message: rows[cut].id)
                rows[cut].parent = nil
            }
            try Writer(database: database).renumber(order, above: (rows.map(\.position).max() ?? 0) + 1)
        }
    }

    /// Each conversation's current branch made whole again: a current leaf of its own (else
    /// its newest leaf) and the length of the branch to it, where they are wrong.
    private func repairBranches() throws {
        let suspects = try database.query(
            """
            SELECT c.id, c.current_leaf_id, c.branch_length FROM conversation AS c
             WHERE (c.message_count > 0 AND NOT EXISTS (SELECT 1 FROM message AS m WHERE m.id = c.current_leaf_id AND m.conversation_id = c.id))
                OR c.branch_length > c.message_count
                OR (c.message_count > 0 AND c.branch_length = 0)
                OR EXISTS (SELECT 1 FROM message AS m WHERE m.conversation_id = c.id AND m.parent_id = c.current_leaf_id)
                OR (c.branch_length = c.message_count
                    AND EXISTS (SELECT 1 FROM message AS m WHERE m.conversation_id = c.id GROUP BY m.parent_id HAVING count(*) > 1))
            """
        ) { (id: $0.int64(0), leaf: $0.optionalInt64(1), length: $0.int(2)) }
        // Not sent to the other machines: their branch is whole, and a branch chosen here
        // would replace it (a catch-up cut short leaves conversations whose branch comes
        // later; a repair then sent its own choice everywhere). A later change of the branch,
        // here or there, is sent as usual.
        database.repairingLocally = true
        defer { database.repairingLocally = false }
        for suspect in suspects {
            let tree = try messages.tree(conversationID: suspect.id, showingHidden: true)
            // Its own leaf, on to the newest leaf below when it has answers; else the newest.
            let leaf = suspect.leaf.flatMap { tree.contains($0) ? tree.newestLeaf(under: $0) : nil } ?? tree.newestLeaf
            try Writer(database: database).setBranch(
                conversation: suspect.id, leaf: leaf, length: leaf.map { tree.path(to: $0).count } ?? 0)
        }
    }
}
