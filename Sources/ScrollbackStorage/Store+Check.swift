import ScrollbackModel

extension Store {
    /// Integrity, foreign keys, message counts and the full-text indexes.
    public func check() throws -> CheckReport {
        var problems: [String] = []
        var skipped: [String] = []
        let integrity = try database.query("PRAGMA integrity_check") { $0.text(0) }
        if integrity != ["ok"] {
            problems += integrity.prefix(20).map { "integrity: \($0)" }
        }
        let orphans = try database.query("PRAGMA foreign_key_check") { "\($0.text(0)) row \($0.int64(1)) refers to a missing \($0.text(2))" }
        problems += orphans.prefix(20).map { "foreign key: \($0)" }
        let miscounted = try database.query(
            """
            SELECT public_id, message_count, (SELECT count(*) FROM message WHERE conversation_id = conversation.id)
            FROM conversation
            WHERE message_count <> (SELECT count(*) FROM message WHERE conversation_id = conversation.id)
            LIMIT 20
            """
        ) { "conversation \($0.text(0)) says \($0.int(1)) messages but has \($0.int(2))" }
        problems += miscounted.map { "message count: \($0)" }
        for (index, content) in [("message_fts", "message"), ("conversation_fts", "conversation")] {
            if isReadOnly {
                // The deep check is an INSERT, which a read-only connection refuses; compare
                // the number of indexed rows with the table instead.
                let indexed = try database.scalarInt("SELECT count(*) FROM \(index)_docsize")
                let rows = try database.scalarInt("SELECT count(*) FROM \(content)")
                if indexed != rows {
                    problems.append("search index: \(index) holds \(indexed) rows, \(content) has \(rows)")
                }
                skipped.append("deep check of \(index) (needs a writable database)")
            } else {
                do {
                    try database.write {
                        try database.run("INSERT INTO \(index) (\(index), rank) VALUES ('integrity-check', 1)")
                    }
                } catch StorageError.sqlite(let error) where error.code == 11 {
                    problems.append("search index: \(index) does not match \(content) (\(error.message)); run `scrollback check --repair`")
                }
            }
        }
        return CheckReport(problems: problems, skipped: skipped)
    }
}

extension Store {
    /// Rebuilds both full-text indexes and recounts messages, in one transaction.
    public func repair() throws {
        try database.write {
            try database.execute(
                """
                INSERT INTO message_fts (message_fts) VALUES ('rebuild');
                INSERT INTO conversation_fts (conversation_fts) VALUES ('rebuild');
                UPDATE conversation SET message_count =
                    (SELECT count(*) FROM message WHERE conversation_id = conversation.id)
                WHERE message_count <> (SELECT count(*) FROM message WHERE conversation_id = conversation.id);
                """)
        }
    }
}
