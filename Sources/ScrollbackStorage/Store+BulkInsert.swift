import ScrollbackModel

/// Large changes with the full-text index rebuilt once instead of row by row.
enum SearchIndex {
    static let insertTriggers = ["conversation_fts_insert", "message_fts_insert"]
    /// For deleting whole conversations: their messages' count no longer matters either.
    static let conversationDeleteTriggers = ["conversation_fts_delete", "message_fts_delete", "message_uncounted"]

    /// Runs `body` in one write transaction with the named index triggers set aside, then
    /// rebuilds both indexes and puts back exactly the triggers the schema had. Everything
    /// commits together or not at all.
    static func rebuildingAfter<T>(_ database: Database, suspending names: [String], _ body: () throws -> T) throws -> T {
        // A large page cache for the duration: random index pages (public ids are UUIDs)
        // and the rebuild's merges then stay in memory. Put back afterwards.
        let cacheSize = try database.scalarInt("PRAGMA cache_size")
        try database.execute("PRAGMA cache_size = -262144")
        defer { try? database.execute("PRAGMA cache_size = \(cacheSize)") }
        return try database.write {
            let placeholders = Array(repeating: "?", count: names.count).joined(separator: ", ")
            let triggers = try database.query(
                "SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND name IN (\(placeholders)) ORDER BY name",
                names.map { .text($0) }
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
            for (_, sql) in triggers {
                try database.execute(sql)
            }
            return result
        }
    }
}

extension Store {
    /// Runs `body`, which only inserts, in one write transaction with the search index
    /// built once at the end instead of row by row: several times faster for large loads.
    ///
    /// The index is rebuilt whole, so this pays only when the load is large compared with
    /// what the database already holds. Everything, the rebuild included, commits together
    /// or not at all: an interruption leaves the database as it was.
    public func insertingInBulk<T>(_ body: () throws -> T) throws -> T {
        try SearchIndex.rebuildingAfter(database, suspending: SearchIndex.insertTriggers, body)
    }
}
