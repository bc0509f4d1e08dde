import ScrollbackModel
extension Store {
    /// The triggers that index new rows one at a time.
    static let indexingTriggers = ["message_fts_insert", "conversation_fts_insert"]

    /// Runs `body`, which only inserts, in one write transaction with the search index
    /// built once at the end instead of row by row: several times faster for large loads.
    ///
    /// The index is rebuilt whole, so this pays only when the load is large compared with
    /// what the database already holds. Everything, the rebuild included, commits together
    /// or not at all: an interruption leaves the database as it was.
    public func insertingInBulk<T>(_ body: () throws -> T) throws -> T {
        try database.write {
            let triggers = try database.query(
                "SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND name IN (?, ?) ORDER BY name",
                Self.indexingTriggers.map { .text($0) }
            ) { ($0.text(0), $0.text(1)) }
            for (name, _) in triggers {
                try database.execute("DROP TRIGGER \(name)")
            }
            let result = try body()
            try database.execute(
                """
                INSERT INTO message_fts (message_fts) VALUES ('rebuild');
                INSERT INTO conversation_fts (conversation_fts) VALUES ('rebuild');
                """)
            // Put back exactly the triggers the schema had.
            for (_, sql) in triggers {
                try database.execute(sql)
            }
            return result
        }
    }
}
