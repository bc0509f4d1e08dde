import Foundation
import ScrollbackModel

/// `SearchRepository` over the FTS5 indexes (tokenizer `scrollback`), by the rules of
/// `SearchQuery`.
///
/// The index narrows (every term that has words becomes a quoted FTS5 string, so no user
/// text is ever FTS5 syntax), and each candidate is then checked against the rules, which
/// decide. Row ids follow time, so walking the index backwards by rowid is newest first
/// without sorting the matches. Rows an index rebuild has not reached yet (ids below
/// `search_backlog.below`) are read directly instead, after the indexed ones.
public final class SQLiteSearchRepository: SearchRepository {
    let database: Database

    init(database: Database) {
        self.database = database
    }

    public func search(_ query: String, filter: ConversationFilter, includingHidden: Bool, after cursor: Cursor?, limit: Int) throws
        -> Page<SearchHit>
    {
        let query = SearchQuery(query)
        let limit = max(1, limit)
        guard !query.isEmpty else { return Page(items: [], previous: nil, next: nil) }
        return try database.read {
            var hits: [(hit: SearchHit, cursor: Cursor)] = []
            var messagesBefore: Int64?
            var attachmentsBefore: Int64?
            // Titles, then messages, then attachments' names: a cursor says where it stopped.
            var phase = 0
            switch cursor?.key {
            case nil:
                hits = try self.hits(.titles, query, filter: filter, before: nil, limit: limit + 1)
            case .searchTitle(let id):
                hits = try self.hits(.titles, query, filter: filter, before: id, limit: limit + 1)
            case .searchMessage(let id):
                messagesBefore = id
                phase = 1
            case .searchAttachment(let id):
                attachmentsBefore = id
                phase = 2
            case .some:
                throw StorageError.invalidCursor(reason: "the token is for \(cursor?.listing ?? "another listing")")
            }
            if phase <= 1, hits.count <= limit {
                hits += try self.hits(
                    includingHidden ? .allMessages : .messages, query, filter: filter, before: messagesBefore, limit: limit + 1 - hits.count)
            }
            if hits.count <= limit {
                hits += try attachmentHits(
                    query, filter: filter, includingHidden: includingHidden, before: attachmentsBefore, limit: limit + 1 - hits.count)
            }
            let items = Array(hits.prefix(limit))
            return Page(items: try items.map { try self.placed($0.hit, includingHidden: includingHidden) }, previous: nil, next: hits.count > limit ? items.last?.cursor : nil)
        }
    }

    /// Attachments whose name holds every word, newest first (by id), below `before`: a
    /// scan of the attachment table (a history holds thousands of files, not millions),
    /// each hit the message it belongs to, its snippet the attachment's line.
    func attachmentHits(
        _ query: SearchQuery, filter: ConversationFilter, includingHidden: Bool, before: Int64?, limit: Int
    ) throws -> [(hit: SearchHit, cursor: Cursor)] {
        guard limit > 0, try AttachmentTables(database: database).any() else { return [] }
        var found: [(hit: SearchHit, cursor: Cursor)] = []
        var below = before ?? Int64.max
        let chunk = 2_000
        while found.count < limit {
            let rows = try database.query(
                """
                SELECT \(SQLiteConversationRepository.columns), message.id, message.position, message.role, message.created_at,
                       message.public_id, message.kind, attachment.id, attachment.name
                  FROM attachment JOIN message ON message.id = attachment.message_id
                  JOIN conversation ON conversation.id = message.conversation_id
                 WHERE attachment.id < ?\(includingHidden ? "" : " AND message.kind NOT IN (\(MessageKind.hiddenSQLList))")
                 ORDER BY attachment.id DESC LIMIT ?
                """, [.integer(below), .integer(Int64(chunk))]
            ) { row -> (id: Int64, hit: (hit: SearchHit, cursor: Cursor)?) in
                let extra = Source.extra
                let id = row.int64(extra + 6)
                let name = row.text(extra + 7)
                let conversation = SQLiteConversationRepository.conversation(row)
                guard filter.admits(conversation), let first = query.firstMatch(in: name) else { return (id, nil) }
                let (snippet, matches) = Snippet.make(from: name, query: query, firstMatch: first)
                let reference = SearchHit.MessageReference(
                    id: row.int64(extra), publicID: row.text(extra + 4), position: row.int(extra + 1),
                    role: Role(rawValue: row.text(extra + 2)) ?? .user, createdAt: Timestamp(milliseconds: row.int64(extra + 3)),
                    kind: MessageKind(rawValue: row.text(extra + 5)) ?? .unknown)
                // The snippet is the attachment's line: `▣ ` and its name, the matches moved on.
                let shifted = matches.map { ($0.lowerBound + 2)..<($0.upperBound + 2) }
                return (
                    id,
                    (SearchHit(conversation: conversation, message: reference, snippet: "▣ " + snippet, matches: shifted),
                     Cursor(.searchAttachment(id: id)))
                )
            }
            for row in rows {
                if let hit = row.hit { found.append(hit) }
                if found.count == limit { break }
            }
            guard rows.count == chunk, let last = rows.last else { break }
            below = last.id
        }
        return found
    }

    /// A hit in a conversation with branches, its position made its place along its branch
    /// (its depth), as in a conversation of one branch, where they are the same.
    /// Its place counts the messages above it that are shown: of the kinds seen, unless
    /// hidden ones are.
    private func placed(_ hit: SearchHit, includingHidden: Bool) throws -> SearchHit {
        guard hit.conversation.isBranched || (hit.conversation.hiddenCount > 0 && !includingHidden), var message = hit.message
        else { return hit }
        let depth = try database.scalarInt(
            """
            WITH RECURSIVE up(id, steps) AS (
                SELECT parent_id, 0 FROM message WHERE id = ?
                UNION ALL
                SELECT m.parent_id, up.steps + 1 FROM message AS m JOIN up ON m.id = up.id WHERE up.steps < ?
            )
            SELECT count(*) FROM up JOIN message AS a ON a.id = up.id
             WHERE ? OR a.kind NOT IN (\(MessageKind.hiddenSQLList))
            """, [.integer(message.id), .integer(Int64(hit.conversation.messageCount)), .integer(includingHidden ? 1 : 0)])
        message.position = Int(depth)
        var placed = hit
        placed.message = message
        return placed
    }

    public func matchingPositions(conversationID: Int64, query: String) throws -> [Int] {
        let query = SearchQuery(query)
        guard !query.isEmpty else { return [] }
        let rows = try database.query(
            "SELECT position, content FROM message WHERE conversation_id = ? ORDER BY position", [.integer(conversationID)]
        ) { row in query.matches(row.text(1)) ? row.int(0) : nil }
        return rows.compactMap { $0 }
    }

    public func matchingMessageIDs(conversationID: Int64, query: String) throws -> [Int64] {
        let query = SearchQuery(query)
        guard !query.isEmpty else { return [] }
        let rows = try database.query(
            "SELECT id, content FROM message WHERE conversation_id = ? ORDER BY position", [.integer(conversationID)]
        ) { row in query.matches(row.text(1)) ? row.int64(0) : nil }
        return rows.compactMap { $0 }
    }

    public func indexingProgress() throws -> Double? {
        try database.read {
            var progress: Double?
            for table in ["conversation", "message"] {
                guard
                    let below = try database.queryFirst(
                        "SELECT below FROM search_backlog WHERE name = ?", [.text(table)], { $0.int64(0) })
                else { continue }
                // By id, which is time: the share of the time span indexed, without counting.
                let bounds = try database.queryFirst("SELECT min(id), max(id) FROM \(table)") {
                    ($0.optionalInt64(0), $0.optionalInt64(1))
                }
                guard let low = bounds?.0, let high = bounds?.1, high > low else { continue }
                let done = (Double(high) - Double(below)) / (Double(high) - Double(low))
                progress = min(progress ?? 1, max(0, min(done, 0.999)))
            }
            return progress
        }
    }

    /// Where one kind of hit comes from.
    struct Source {
        /// The FTS5 table, whose rowid is `table`'s id.
        let index: String
        /// The table holding the text.
        let table: String
        /// Columns selected after the conversation's, and any join to reach the conversation.
        let extraColumns: String
        let join: String
        /// The columns of the text and of the row's own id, in the selected row.
        let textColumn: Int32
        let idColumn: Int32
        /// A condition on the row, or "".
        var condition = ""

        var isTitles: Bool { table == "conversation" }

        /// The first column after the conversation's.
        static let extra = SQLiteConversationRepository.columnCount

        static let titles = Source(
            index: "conversation_fts", table: "conversation", extraColumns: "", join: "", textColumn: 2,
            idColumn: extra)
        static let messages = Source(
            index: "message_fts", table: "message",
            extraColumns: ", message.id, message.position, message.role, message.created_at, message.content, message.public_id, message.kind",
            join: " JOIN conversation ON conversation.id = message.conversation_id", textColumn: extra + 4, idColumn: extra + 7,
            condition: " AND message.kind NOT IN (\(MessageKind.hiddenSQLList))")
        /// Messages of every kind, the hidden ones too.
        static let allMessages = Source(
            index: messages.index, table: messages.table, extraColumns: messages.extraColumns, join: messages.join,
            textColumn: messages.textColumn, idColumn: messages.idColumn)
    }

    /// Up to `limit` rows of `source` that match, newest (highest id) first, below `before`.
    func hits(
        _ source: Source, _ query: SearchQuery, filter: ConversationFilter = .none, before: Int64?, limit: Int
    ) throws -> [(hit: SearchHit, cursor: Cursor)] {
        guard limit > 0 else { return [] }
        let backlog = try database.queryFirst(
            "SELECT below FROM search_backlog WHERE name = ?", [.text(source.table)], { $0.int64(0) })
        var found: [(hit: SearchHit, cursor: Cursor)] = []
        // First what the index holds (all of it, or the ids from `backlog` up), then the rest.
        var phases: [(indexed: Bool, from: Int64?)] = [(true, backlog)]
        if backlog != nil { phases.append((false, nil)) }
        var below = before
        for phase in phases {
            if !phase.indexed, let backlog { below = min(below ?? backlog, backlog) }
            var expression: String?
            if phase.indexed {
                expression = query.selectiveIndexExpression
                if expression == nil, let broad = query.indexExpression {
                    // Only short prefixes (`a`, `go`, `the`): FTS5 answers those by merging
                    // the lists of every word that starts so, which costs the same however
                    // few hits are wanted. Read the newest rows first: a prefix that common
                    // fills the page from them; one that is rare is cheap for the index.
                    var scanned = 0
                    for budget in Self.scanFirst {
                        let before = found.count
                        let rows = try candidates(source, query, filter, expression: nil, below: below, from: phase.from, limit: budget)
                        for row in rows where found.count < limit {
                            if let hit = row.hit { found.append(hit) }
                            below = row.id
                        }
                        scanned += rows.count
                        // Done, or too few hits so far to fill the page soon.
                        if found.count == limit || rows.count < budget || (found.count - before) * 10 < limit { break }
                    }
                    if found.count == limit { break }
                    if scanned < Self.scanFirst.reduce(0, +), found.count < limit,
                        try candidates(source, query, filter, expression: nil, below: below, from: phase.from, limit: 1).isEmpty
                    {
                        continue
                    }
                    expression = broad
                }
            }
            var chunk = limit + 1
            while found.count < limit {
                let rows = try candidates(source, query, filter, expression: expression, below: below, from: phase.from, limit: chunk)
                for row in rows {
                    if let hit = row.hit { found.append(hit) }
                    if found.count == limit { break }
                }
                guard rows.count == chunk, let last = rows.last else { break }
                below = last.id
                chunk = min(chunk * 2, 4_096)
            }
            if found.count == limit { break }
        }
        return found
    }

    /// How many of the newest rows a query of short prefixes reads before asking the index:
    /// a probe, then more while a tenth of a page or more turns up in each.
    static let scanFirst = [400, 3_600]

    /// One chunk of candidates, newest first, each with its hit when it matches the rules.
    private func candidates(
        _ source: Source, _ query: SearchQuery, _ filter: ConversationFilter, expression: String?, below: Int64?, from: Int64?,
        limit: Int
    ) throws -> [(id: Int64, hit: (hit: SearchHit, cursor: Cursor)?)] {
        var arguments: [SQLValue] = []
        var sql = "SELECT \(SQLiteConversationRepository.columns)\(source.extraColumns), \(source.table).id FROM "
        let order: String
        if let expression {
            sql += "\(source.index) JOIN \(source.table) ON \(source.table).id = \(source.index).rowid\(source.join)"
            sql += " WHERE \(source.index) MATCH ?"
            arguments.append(.text(expression))
            order = "\(source.index).rowid"
        } else {
            sql += "\(source.table)\(source.join) WHERE 1"
            order = "\(source.table).id"
        }
        sql += source.condition
        if let below {
            sql += " AND \(order) < ?"
            arguments.append(.integer(below))
        }
        if let from {
            sql += " AND \(order) >= ?"
            arguments.append(.integer(from))
        }
        sql += " ORDER BY \(order) DESC LIMIT ?"
        arguments.append(.integer(Int64(limit)))
        return try database.query(sql, arguments) { row in
            let id = row.int64(source.idColumn)
            let text = row.text(source.textColumn)
            let conversation = SQLiteConversationRepository.conversation(row)
            // The filter is checked on each candidate's conversation, as the index is read.
            guard filter.admits(conversation), let first = query.firstMatch(in: text) else { return (id, nil) }
            let (snippet, matches) = Snippet.make(from: text, query: query, firstMatch: first)
            if source.isTitles {
                return (
                    id,
                    (SearchHit(conversation: conversation, message: nil, snippet: snippet, matches: matches),
                     Cursor(.searchTitle(id: conversation.id)))
                )
            }
            let reference = SearchHit.MessageReference(
                id: row.int64(Source.extra), publicID: row.text(Source.extra + 5), position: row.int(Source.extra + 1),
                role: Role(rawValue: row.text(Source.extra + 2)) ?? .user, createdAt: Timestamp(milliseconds: row.int64(Source.extra + 3)),
                kind: MessageKind(rawValue: row.text(Source.extra + 6)) ?? .unknown)
            return (
                id,
                (SearchHit(conversation: conversation, message: reference, snippet: snippet, matches: matches),
                 Cursor(.searchMessage(id: reference.id)))
            )
        }
    }
}

/// Cuts a snippet around the first match and finds every term in it.
enum Snippet {
    static let before = 30
    static let length = 120

    static func make(from text: String, query: SearchQuery, firstMatch: Int? = nil) -> (String, [Range<Int>]) {
        var start = text.startIndex
        if let first = firstMatch ?? query.matchRanges(in: text).first?.lowerBound {
            let match = text.index(text.startIndex, offsetBy: first, limitedBy: text.endIndex) ?? text.startIndex
            start = text.index(match, offsetBy: -before, limitedBy: text.startIndex) ?? text.startIndex
        }
        let end = text.index(start, offsetBy: length, limitedBy: text.endIndex) ?? text.endIndex
        var snippet = folded(text[start..<end])
        if start > text.startIndex { snippet = "…" + snippet }
        if end < text.endIndex { snippet += "…" }
        return (snippet, query.matchRanges(in: snippet))
    }

    /// Whitespace runs (newlines included) become one space; the ends are trimmed.
    private static func folded(_ text: Substring) -> String {
        var result = ""
        var pendingSpace = false
        for character in text {
            if character.isWhitespace {
                pendingSpace = !result.isEmpty
            } else {
                if pendingSpace { result.append(" ") }
                pendingSpace = false
                result.append(character)
            }
        }
        return result
    }
}
