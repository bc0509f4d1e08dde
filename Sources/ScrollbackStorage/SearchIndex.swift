import ScrollbackModel

/// The one bulk policy: a change of many rows, large next to what the database holds, runs
/// with the search index's triggers set aside; the index is built in batches (a load) or
/// rebuilt once at the end (a delete, or a load that replaced rows).
enum SearchIndex {
    /// For loading many rows: every trigger of the indexes, and of the counts of each
    /// conversation's messages and hidden messages (added once per conversation at the end,
    /// instead of a conversation row rewritten per message; a trigger whose condition is
    /// false still runs a subprogram per row: kinds made a ChatGPT import 20% slower).
    /// Deletes and updates too: a load may replace what it loaded itself (a conversation
    /// twice in one export, one undone when its message failed), and FTS5 takes removing a
    /// row it never indexed for a damaged index.
    static let insertTriggers = [
        "conversation_fts_insert", "conversation_fts_delete", "conversation_fts_update",
        "message_fts_insert", "message_fts_delete", "message_fts_update", "message_counted", "message_uncounted",
        "message_hidden_counted", "message_hidden_uncounted", "message_hidden_recounted",
    ]
    /// For deleting whole conversations: their messages' count no longer matters either, and
    /// the count of conversations is counted once at the end.
    static let conversationDeleteTriggers = [
        "conversation_fts_delete", "message_fts_delete", "message_uncounted", "message_hidden_uncounted", "conversation_untallied",
    ]

    /// Whether changing `count` rows of a table holding `total` is cheaper with the index
    /// rebuilt whole than row by row: a thousand rows or more, and a quarter of the table.
    static func isLarge(_ count: Int, of total: Int) -> Bool {
        count >= largeAtLeast && count >= total / 4
    }

    /// The fewest rows a change must have to be large.
    static let largeAtLeast = 1_000

    /// Runs `body`, which deletes `count` of `total` conversations, in one write
    /// transaction: row by row, or by the bulk policy when the change is large.
    static func changing<T>(_ count: Int, of total: Int, _ database: Database, _ body: () throws -> T) throws -> T {
        if isLarge(count, of: total) {
            return try rebuildingAfter(database, suspending: conversationDeleteTriggers, body)
        }
        return try database.write(body)
    }

    /// Runs `body` in one write transaction with the named index triggers set aside, then
    /// rebuilds both indexes and puts back exactly the triggers the schema had. Everything
    /// commits together or not at all.
    static func rebuildingAfter<T>(_ database: Database, suspending names: [String], _ body: () throws -> T) throws -> T {
        try settingAside(names, database) {
            let result = try body()
            if names.contains("message_counted") {
                try Writer(database: database).recount()
            } else if names.contains("conversation_untallied") {
                try Writer(database: database).retally()
            }
            try rebuild(database)
            return result
        }
    }

    /// Runs `body`, which inserts many rows (and may replace a few), in one write transaction
    /// with every index and count trigger set aside. The new rows are indexed while they
    /// come, in batches (`IndexingLoad`), so that the index is built while an import's
    /// other thread reads the export, not after it; when the load changed or removed rows
    /// (a conversation twice in one export), or rows wait for an upgrade's index build, both
    /// indexes are rebuilt whole at the end instead.
    static func loading<T>(_ database: Database, batch: Int = IndexingLoad.batch, cacheKiB: Int = 65_536, _ body: () throws -> T) throws -> T {
        try settingAside(insertTriggers, database, cacheKiB: cacheKiB) {
            let load = try IndexingLoad(database: database, batch: batch)
            database.indexingLoad = load
            defer { database.indexingLoad = nil }
            let result = try body()
            if load.needsRebuild {
                try Writer(database: database).recount()
                try rebuild(database)
            } else {
                try load.finish()
            }
            return result
        }
    }

    /// Runs `body`, pages of ops from other machines, in one write transaction with the
    /// search index's and the message count's insert triggers set aside
    /// (`IndexingLoad(pageIn:)`): the rows it adds are indexed and counted at the end, in
    /// id order, or before a change to a row, which the triggers still in place handle.
    /// FTS5 starts a new piece of index whenever an id is
    /// lower than the one before, and synced rows come in the order they were made, not of
    /// their ids: row by row, a new machine's catch-up spent more than half its time on it.
    /// A database whose rows wait for an upgrade's index build keeps its triggers.
    static func applying<T>(_ database: Database, _ body: () throws -> T) throws -> T {
        guard try database.queryFirst("SELECT 1 FROM search_backlog LIMIT 1", [], { _ in true }) == nil else {
            return try database.write(body)
        }
        // Statement journals in memory for the page: once one spilled to a temporary file
        // (the index's batch), every later statement's went there too, a write per page it
        // changed. A page's statements each change a few pages; a transaction's own
        // temporary tables go with the setting.
        let outside = database.isOutsideTransaction
        if outside { try database.execute("PRAGMA temp_store = MEMORY") }
        defer { if outside { try? database.execute("PRAGMA temp_store = DEFAULT") } }
        // A page cache of 8 MiB meanwhile (SQLite's default is 2 MiB): a new machine's
        // catch-up of 10,000 conversations took 3.5 s with 4 MiB, 2.5 s with 8 or 16 MiB,
        // whose peak memory was 8 MiB more (65 MiB). The count trigger goes too: it moved
        // the conversation in its index by date once per message; the load counts each
        // conversation once.
        return try settingAside(
            ["conversation_fts_insert", "message_counted", "message_hidden_counted", "message_fts_insert"], database, cacheKiB: 8_192
        ) {
            let load = IndexingLoad(pageIn: database)
            database.indexingLoad = load
            defer { database.indexingLoad = nil }
            let result = try body()
            try load.finish()
            return result
        }
    }

    /// Runs `body` in one write transaction with the named triggers dropped, and puts back
    /// exactly the triggers the schema had; with a page cache of `cacheKiB` meanwhile.
    private static func settingAside<T>(
        _ names: [String], _ database: Database, cacheKiB: Int = 65_536, _ body: () throws -> T
    ) throws -> T {
        // A larger page cache for the duration (64 MiB for a load: random index pages stay
        // in memory, and the peak stays under 1.5× the size of an export being imported). Put
        // back afterwards.
        let cacheSize = try database.scalarInt("PRAGMA cache_size")
        try database.execute("PRAGMA cache_size = -\(max(1, cacheKiB))")
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
            for (_, sql) in triggers {
                try database.execute(sql)
            }
            return result
        }
    }

    /// Both indexes made again from their tables, whole: nothing is left to the backlog.
    ///
    /// FTS5 writes an index in pieces (a segment per megabyte or so of terms) and, by default,
    /// merges them four at a time as it goes, so that a rebuild rewrote the index several
    /// times; here they are left to pile up (up to 1,000 per level) and merged once, by
    /// `optimize`: 2.2 s instead of 3.2 s for 500,000 messages. Then the defaults are back.
    static func rebuild(_ database: Database) throws {
        try holdMerging(database)
        try database.execute(
            """
            INSERT INTO message_fts (message_fts) VALUES ('rebuild');
            INSERT INTO conversation_fts (conversation_fts) VALUES ('rebuild');
            DELETE FROM search_backlog;
            """)
        try mergeOnce(database)
    }

    /// Before adding much to the indexes: FTS5's merging held back (in this transaction).
    static func holdMerging(_ database: Database) throws {
        try database.execute(
            """
            INSERT INTO message_fts (message_fts, rank) VALUES ('automerge', 0);
            INSERT INTO message_fts (message_fts, rank) VALUES ('crisismerge', 1000);
            """)
    }

    /// After `holdMerging` and the additions: everything merged once (`optimize`), and
    /// FTS5's defaults back.
    static func mergeOnce(_ database: Database) throws {
        try optimize(database)
        try database.execute(
            """
            INSERT INTO message_fts (message_fts, rank) VALUES ('automerge', 4);
            INSERT INTO message_fts (message_fts, rank) VALUES ('crisismerge', 16);
            """)
    }

    /// Merges each index into one segment. A rebuild (or the upgrade's build) leaves several
    /// large ones, and FTS5 then merges them piecemeal during later small writes: a rename
    /// or an undo took 60–180 ms now and then on 1,000,000 conversations, 7 ms after this.
    static func optimize(_ database: Database) throws {
        try database.execute(
            """
            INSERT INTO message_fts (message_fts) VALUES ('optimize');
            INSERT INTO conversation_fts (conversation_fts) VALUES ('optimize');
            """)
    }
}

extension Store {
    /// In a bulk load, a savepoint was rolled back: the rows it reported may be gone and
    /// their ids taken again, so the load ends with the index rebuilt and the counts counted
    /// whole instead of in batches. Nothing outside a load.
    /// Whether SQLite itself rolled back the write transaction under way (a full disk): a
    /// caller that goes on after a failed part of it must stop instead.
    public var transactionLost: Bool { database.transactionLost }

    public func abandonBatchedIndexing() throws {
        try database.indexingLoad?.changedRows()
    }

    /// Runs `body`, which inserts about `count` messages, in one write transaction; when that
    /// is large next to the messages stored (`SearchIndex.isLarge`), as a bulk load
    /// (`SearchIndex.loading`): the index built in batches, not row by row. Everything, the
    /// index included, commits together or not at all.
    public func inserting<T>(about count: Int, _ body: () throws -> T) throws -> T {
        try inserting(about: count, indexingBatch: IndexingLoad.batch, body)
    }

    /// `inserting(about:_:)` with the rows indexed `indexingBatch` at a time in a bulk load
    /// (tests use small batches).
    public func inserting<T>(about count: Int, indexingBatch: Int, cacheKiB: Int = 65_536, _ body: () throws -> T) throws -> T {
        // Fewer than a thousand is never large: the messages are not counted then (a count
        // reads the whole table; a folder of small session files is thousands of imports).
        if count >= SearchIndex.largeAtLeast, SearchIndex.isLarge(count, of: try messages.count()) {
            return try SearchIndex.loading(database, batch: indexingBatch, cacheKiB: cacheKiB, body)
        }
        return try database.write(body)
    }
}
