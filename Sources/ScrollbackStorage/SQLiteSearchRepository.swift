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

    private func titleHits(_ terms: SearchTerms, before id: Int64?, limit: Int) throws -> [(hit: SearchHit, cursor: Cursor)] {
        var arguments: [SQLValue] = []
        var sql = "SELECT \(SQLiteConversationRepository.columns) FROM "
        if let match = terms.matchExpression {
            sql += "conversation_fts JOIN conversation ON conversation.id = conversation_fts.rowid WHERE conversation_fts MATCH ?"
            arguments.append(.text(match))
        } else {
            sql += "conversation WHERE 1"
        }
        for pattern in terms.likePatterns {
            sql += " AND conversation.title LIKE ? ESCAPE '\\'"
            arguments.append(.text(pattern))
        }
        // Order by the FTS table's own rowid where there is one: FTS5 then walks its index
        // backwards instead of sorting every match.
        let order = terms.matchExpression == nil ? "conversation.id" : "conversation_fts.rowid"
        if let id {
            sql += " AND \(order) < ?"
            arguments.append(.integer(id))
        }
        sql += " ORDER BY \(order) DESC LIMIT ?"
        arguments.append(.integer(Int64(limit)))
        return try database.query(sql, arguments) { row in
            let conversation = SQLiteConversationRepository.conversation(row)
            let (snippet, matches) = Snippet.make(from: conversation.title, terms: terms.all)
            return (
                SearchHit(conversation: conversation, message: nil, snippet: snippet, matches: matches),
                Cursor(.searchTitle(id: conversation.id))
            )
        }
    }

    private func messageHits(_ terms: SearchTerms, before id: Int64?, limit: Int) throws -> [(hit: SearchHit, cursor: Cursor)] {
        guard limit > 0 else { return [] }
        var arguments: [SQLValue] = []
        let columns = "\(SQLiteConversationRepository.columns), message.id, message.position, message.role, message.created_at, message.content, message.public_id"
        var sql = "SELECT \(columns) FROM "
        if let match = terms.matchExpression {
            sql += "message_fts JOIN message ON message.id = message_fts.rowid"
            sql += " JOIN conversation ON conversation.id = message.conversation_id WHERE message_fts MATCH ?"
            arguments.append(.text(match))
        } else {
            sql += "message JOIN conversation ON conversation.id = message.conversation_id WHERE 1"
        }
        for pattern in terms.likePatterns {
            sql += " AND message.content LIKE ? ESCAPE '\\'"
            arguments.append(.text(pattern))
        }
        let order = terms.matchExpression == nil ? "message.id" : "message_fts.rowid"
        if let id {
            sql += " AND \(order) < ?"
            arguments.append(.integer(id))
        }
        sql += " ORDER BY \(order) DESC LIMIT ?"
        arguments.append(.integer(Int64(limit)))
        return try database.query(sql, arguments) { row in
            let conversation = SQLiteConversationRepository.conversation(row)
            let roleText = row.text(12)
            let reference = SearchHit.MessageReference(
                id: row.int64(10), publicID: row.text(15), position: row.int(11), role: Role(rawValue: roleText) ?? .user,
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
        return (snippet, matches(of: terms, in: snippet))
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

    static func matches(of terms: [String], in snippet: String) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        for term in terms where !term.isEmpty {
            var searchStart = snippet.startIndex
            while searchStart < snippet.endIndex,
                  let found = snippet.range(of: term, options: [.caseInsensitive], range: searchStart..<snippet.endIndex) {
                let lower = snippet[..<found.lowerBound].count
                let upper = lower + snippet[found].count
                if upper > lower { ranges.append(lower..<upper) }
                searchStart = found.upperBound > found.lowerBound ? found.upperBound : snippet.index(after: found.lowerBound)
            }
        }
        ranges.sort { $0.lowerBound < $1.lowerBound }
        var merged: [Range<Int>] = []
        for range in ranges {
            if let last = merged.last, range.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }
}
