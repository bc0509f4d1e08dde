import ScrollbackModel

/// How far building the search index has come.
public struct IndexingProgress: Sendable, Equatable {
    /// Rows indexed by this run so far, and rows left (both tables).
    public var done: Int
    public var remaining: Int
    public var fraction: Double { done + remaining == 0 ? 1 : Double(done) / Double(done + remaining) }

    public init(done: Int, remaining: Int) {
        self.done = done
        self.remaining = remaining
    }
}

extension Store {
    /// Whether an upgrade left rows for the index (without counting them).
    public func hasSearchBacklog() throws -> Bool {
        try !backlog().isEmpty
    }

    /// Rows an upgrade left for the index (the conversations', then the messages'), or 0.
    public func searchBacklog() throws -> Int {
        try database.read {
            var rows = 0
            for (table, below) in try backlog() {
                rows += Int(try database.scalarInt("SELECT count(*) FROM \(table) WHERE id < ?", [.integer(below)]))
            }
            return rows
        }
    }

    private func backlog() throws -> [(table: String, below: Int64)] {
        try database.query("SELECT name, below FROM search_backlog ORDER BY name") { ($0.text(0), $0.int64(1)) }
    }

    /// Indexes the rows an upgrade left out, newest first, `rowsPerStep` rows per
    /// transaction: each step commits its rows and how far it came together, so an
    /// interruption (or a kill) loses at most the step in hand, and the next call goes on
    /// from there. Searches are correct all along (rows not indexed yet are read directly).
    ///
    /// - Parameters:
    ///   - shouldStop: asked between steps; true stops (the work done is kept).
    ///   - progress: after each step.
    /// - Returns: whether the index is complete.
    public func buildSearchIndex(
        rowsPerStep: Int = 20_000, shouldStop: () -> Bool = { false }, progress: (IndexingProgress) -> Void = { _ in }
    ) throws -> Bool {
        let step = Int64(max(1, rowsPerStep))
        var done = 0
        var remaining = try searchBacklog()
        while true {
            if shouldStop() { return false }
            let indexed: Int? = try database.write {
                // Read again under the write lock: another process may be building too, and
                // may have finished.
                guard let (table, below) = try backlog().first else { return nil }
                let index = table == "message" ? "message_fts" : "conversation_fts"
                let column = table == "message" ? "content" : "title"
                let low = try database.queryFirst(
                    "SELECT id FROM \(table) WHERE id < ? ORDER BY id DESC LIMIT 1 OFFSET ?", [.integer(below), .integer(step - 1)]
                ) { $0.int64(0) }
                var arguments: [SQLValue] = [.integer(below)]
                var range = "id < ?"
                if let low {
                    range += " AND id >= ?"
                    arguments.append(.integer(low))
                }
                try database.run(
                    "INSERT INTO \(index) (rowid, \(column)) SELECT id, \(column) FROM \(table) WHERE \(range) ORDER BY id", arguments)
                let rows = database.changes
                if let low {
                    try database.run("UPDATE search_backlog SET below = ? WHERE name = ?", [.integer(low), .text(table)])
                } else {
                    try database.run("DELETE FROM search_backlog WHERE name = ?", [.text(table)])
                }
                return rows
            }
            guard let indexed else { break }
            done += indexed
            remaining = max(0, remaining - indexed)
            progress(IndexingProgress(done: done, remaining: remaining))
        }
        // Built here, in steps: one segment each, so that later small writes merge little.
        if done > 0 { try database.write { try SearchIndex.optimize(database) } }
        return true
    }
}
