import Foundation
import ScrollbackModel

/// `SearchRepository` over the FTS5 trigram indexes.
///
/// The query is split at whitespace into terms that must all occur (case-insensitively) in
/// one title or one message. Terms of three or more characters go to FTS5 as quoted
/// strings, so no user text is ever FTS5 syntax; shorter terms (the trigram index cannot
/// look them up) filter with LIKE, or scan when the query has no longer term.
public final class SQLiteSearchRepository: SearchRepository {
    let database: Database

    public init(database: Database) {
        self.database = database
    }

    public func search(_ query: String, after cursor: Cursor?, limit: Int) throws -> Page<SearchHit> {
        let terms = SearchTerms(query)
        let limit = max(1, limit)
        guard !terms.all.isEmpty else { return Page(items: [], previous: nil, next: nil) }
        var hits: [(hit: SearchHit, cursor: Cursor)] = []
        var messagesAfter: Int64?
        switch cursor?.key {
        case nil:
            hits = try titleHits(terms, before: nil, limit: limit + 1)
        case .searchTitle(let id):
            hits = try titleHits(terms, before: id, limit: limit + 1)
        case .searchMessage(let id):
            messagesAfter = id
        case .some:
            throw StorageError.invalidCursor(reason: "the token is for \(cursor?.listing ?? "another listing")")
        }
        if hits.count <= limit {
            hits += try messageHits(terms, before: messagesAfter, limit: limit + 1 - hits.count)
        }
        let items = Array(hits.prefix(limit))
        return Page(
            items: items.map(\.hit), previous: nil, next: hits.count > limit ? items.last?.cursor : nil)
    }

    public func matchingPositions(conversationID: Int64, query: String) throws -> [Int] {
        let terms = SearchTerms(query)
        guard !terms.all.isEmpty else { return [] }
        var sql = "SELECT position FROM message WHERE conversation_id = ?"
        var arguments: [SQLValue] = [.integer(conversationID)]
        for term in terms.all {
            sql += " AND instr(lower(content), lower(?)) > 0"
            arguments.append(.text(term))
        }
        return try database.query(sql + " ORDER BY position", arguments) { $0.int(0) }
    }

    public func indexingProgress() throws -> Double? { nil }

    /// Where one kind of hit comes from.
    private struct Source {
        /// The FTS5 table, whose rowid is `table`'s id.
        let index: String
        /// The table holding the text, and the column searched.
        let table: String
        let column: String
        /// Columns selected after the conversation's, and any join to reach the conversation.
        let extraColumns: String
        let join: String

        static let titles = Source(index: "conversation_fts", table: "conversation", column: "title", extraColumns: "", join: "")
        static let messages = Source(
            index: "message_fts", table: "message", column: "content",
            extraColumns: ", message.id, message.position, message.role, message.created_at, message.content, message.public_id",
            join: " JOIN conversation ON conversation.id = message.conversation_id")
    }

    /// Up to `limit` rows of `source` matching every term, newest first, before `id`.
    ///
    /// With a term of three or more characters the FTS index drives the query, ordered by its
    /// own rowid (FTS5 then walks its index backwards instead of sorting every match);
    /// shorter terms filter with LIKE.
    private func rows<T>(
        _ source: Source, _ terms: SearchTerms, before id: Int64?, limit: Int, map: (Row) throws -> T
    ) throws -> [T] {
        guard limit > 0 else { return [] }
        var arguments: [SQLValue] = []
        var sql = "SELECT \(SQLiteConversationRepository.columns)\(source.extraColumns) FROM "
        let order: String
        if let match = terms.matchExpression {
            sql += "\(source.index) JOIN \(source.table) ON \(source.table).id = \(source.index).rowid\(source.join)"
            sql += " WHERE \(source.index) MATCH ?"
            arguments.append(.text(match))
            order = "\(source.index).rowid"
        } else {
            sql += "\(source.table)\(source.join) WHERE 1"
            order = "\(source.table).id"
        }
        for pattern in terms.likePatterns {
            sql += " AND \(source.table).\(source.column) LIKE ? ESCAPE '\\'"
            arguments.append(.text(pattern))
        }
        if let id {
            sql += " AND \(order) < ?"
            arguments.append(.integer(id))
        }
        sql += " ORDER BY \(order) DESC LIMIT ?"
        arguments.append(.integer(Int64(limit)))
        return try database.query(sql, arguments, map)
    }

    private func titleHits(_ terms: SearchTerms, before id: Int64?, limit: Int) throws -> [(hit: SearchHit, cursor: Cursor)] {
        try rows(.titles, terms, before: id, limit: limit) { row in
            let conversation = SQLiteConversationRepository.conversation(row)
            let (snippet, matches) = Snippet.make(from: conversation.title, terms: terms.all)
            return (
                SearchHit(conversation: conversation, message: nil, snippet: snippet, matches: matches),
                Cursor(.searchTitle(id: conversation.id))
            )
        }
    }

    private func messageHits(_ terms: SearchTerms, before id: Int64?, limit: Int) throws -> [(hit: SearchHit, cursor: Cursor)] {
        try rows(.messages, terms, before: id, limit: limit) { row in
            let conversation = SQLiteConversationRepository.conversation(row)
            let reference = SearchHit.MessageReference(
                id: row.int64(10), publicID: row.text(15), position: row.int(11), role: Role(rawValue: row.text(12)) ?? .user,
                createdAt: Timestamp(milliseconds: row.int64(13)))
            let (snippet, matches) = Snippet.make(from: row.text(14), terms: terms.all)
            return (
                SearchHit(conversation: conversation, message: reference, snippet: snippet, matches: matches),
                Cursor(.searchMessage(id: reference.id))
            )
        }
    }
}

/// A query split into terms.
struct SearchTerms {
    let all: [String]
    /// For FTS5: every term of three or more characters as a quoted string, ANDed.
    let matchExpression: String?
    /// For LIKE: every shorter term as `%term%` with `%`, `_` and `\` escaped.
    let likePatterns: [String]

    init(_ query: String) {
        all = query.split(whereSeparator: { $0.isWhitespace }).map(String.init)
        let long = all.filter { $0.unicodeScalars.count >= 3 }
        matchExpression =
            long.isEmpty ? nil : long.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }.joined(separator: " AND ")
        likePatterns = all.filter { $0.unicodeScalars.count < 3 }.map { term in
            var escaped = ""
            for character in term {
                if character == "%" || character == "_" || character == "\\" { escaped.append("\\") }
                escaped.append(character)
            }
            return "%" + escaped + "%"
        }
    }
}

/// Cuts a snippet around the first match and finds every term in it.
enum Snippet {
    static let before = 30
    static let length = 120

    static func make(from text: String, terms: [String]) -> (String, [Range<Int>]) {
        let first = terms.compactMap { text.range(of: $0, options: [.caseInsensitive]) }.min { $0.lowerBound < $1.lowerBound }
        var start = text.startIndex
        if let first {
            start = text.index(first.lowerBound, offsetBy: -before, limitedBy: text.startIndex) ?? text.startIndex
        }
        let end = text.index(start, offsetBy: length, limitedBy: text.endIndex) ?? text.endIndex
        var snippet = folded(text[start..<end])
        if start > text.startIndex { snippet = "…" + snippet }
        if end < text.endIndex { snippet += "…" }
        return (snippet, TextMatches.ranges(of: terms, in: snippet))
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
