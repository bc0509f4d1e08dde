import ScrollbackModel

/// The conversation list in one order, narrowed by a filter, a keyset page at a time.
///
/// Every order's index starts with `pinned` (pinned conversations first), then the order's
/// key and the id. Each query stays inside one half of the index (`pinned = ?`), so that
/// the key and a time range are index ranges there; a page that crosses from the pinned
/// half to the rest is two queries. Filters on source and model are checked on the rows as
/// the index is walked: such a page costs in proportion to the rows it passes over.
struct ConversationListQuery {
    let sort: ConversationOrder
    let filter: ConversationFilter

    private var index: String { "conversation_by_\(sort.rawValue)" }

    /// The order's key after `pinned`, as a row value.
    private var key: String {
        switch sort {
        case .updated: "(updated_at, id)"
        case .created: "(created_at, id)"
        case .title: "(title, id)"
        }
    }

    private func order(forward: Bool) -> String {
        switch sort {
        case .updated: forward ? "updated_at DESC, id DESC" : "updated_at ASC, id ASC"
        case .created: forward ? "created_at DESC, id DESC" : "created_at ASC, id ASC"
        case .title: forward ? "title ASC, id ASC" : "title DESC, id DESC"
        }
    }

    /// How a row after the cursor compares to it, going forward.
    private func comparison(forward: Bool) -> String {
        let descending = sort != .title
        return descending == forward ? "<" : ">"
    }

    /// The cursor's half of the index and key values, or nil for another listing's cursor.
    private func parts(of cursor: Cursor) -> (pinned: Bool, values: [SQLValue])? {
        switch (sort, cursor.key) {
        case (.updated, .updated(let pinned, let updatedAt, let id)): (pinned, [.integer(updatedAt), .integer(id)])
        case (.created, .created(let pinned, let createdAt, let id)): (pinned, [.integer(createdAt), .integer(id)])
        case (.title, .title(let pinned, let title, let id)): (pinned, [.text(title), .integer(id)])
        default: nil
        }
    }

    /// The most candidates the title index may propose for the rows to be read by id and
    /// sorted, rather than found by walking the order's index.
    static let fewCandidates = 5_000

    /// What the title index proposes for the filter's words: its expression and whether the
    /// candidates are few; nil when the filter has no title, its words hold nothing the index
    /// can look up, or the index is being built (then the rule alone decides, row by row).
    /// Asked once per query: a page, a count.
    private func proposal(_ database: Database) throws -> (expression: String, few: Bool)? {
        guard let title = filter.title, let expression = SearchQuery(title).indexExpression,
            try database.queryFirst("SELECT below FROM search_backlog WHERE name = 'conversation'", [], { $0.int64(0) }) == nil
        else { return nil }
        let candidates = try database.scalarInt(
            "SELECT count(*) FROM (SELECT rowid FROM conversation_fts WHERE conversation_fts MATCH ? LIMIT ?)",
            [.text(expression), .integer(Int64(Self.fewCandidates + 1))])
        return (expression, candidates <= Self.fewCandidates)
    }

    /// The filter's conditions besides pin, with their arguments, and how to reach the rows:
    /// through the order's index (`INDEXED BY`), or by id (`NOT INDEXED`: the title index
    /// proposes at most `fewCandidates`, read by id and sorted, where a walk of the order's
    /// index would pass over every row to find them).
    ///
    /// A title's words are checked on each row by the search's rules (the SQL function
    /// `scrollback_title_matches`); the rows the title index `proposal` finds for them are
    /// the only candidates. (The next rows of the walk are checked first: see `probeChunks`.)
    /// Without `title`, the conditions of the other filter words alone (that probe's).
    ///
    /// `walking`: the conditions of a walk of the pinned half, where many candidates are left
    /// to the rule alone: that half is short (what a person pins), and gathering the
    /// candidates for it costs more than reading it. The other half keeps them: checking a
    /// row's id against them needs no read of the row, so a walk past thousands of titles
    /// the index proposed and the rule refuses stays a walk of the index.
    private func conditions(
        proposal: (expression: String, few: Bool)?, title: Bool = true, walking: Bool = false
    ) -> (sql: String, arguments: [SQLValue], access: String) {
        var access = "INDEXED BY \(index)"
        var sql = ""
        var arguments: [SQLValue] = []
        if let since = filter.since {
            sql += " AND updated_at >= ?"
            arguments.append(.integer(since.milliseconds))
        }
        if let until = filter.until {
            sql += " AND updated_at < ?"
            arguments.append(.integer(until.milliseconds))
        }
        if let source = filter.source {
            sql += " AND source = ? COLLATE NOCASE"
            arguments.append(.text(source))
        }
        // LIKE folds ASCII case; its wildcards in the name are taken literally.
        func like(_ part: String) -> SQLValue {
            .text(
                "%" + part.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
                    .replacingOccurrences(of: "_", with: "\\_") + "%")
        }
        if let model = filter.model {
            sql += " AND model LIKE ? ESCAPE '\\'"
            arguments.append(like(model))
        }
        if let project = filter.project {
            sql += " AND project LIKE ? ESCAPE '\\'"
            arguments.append(like(project))
        }
        if title, let words = filter.title {
            if let proposal {
                if proposal.few { access = "NOT INDEXED" }
                if !walking || proposal.few {
                    sql += " AND id IN (SELECT rowid FROM conversation_fts WHERE conversation_fts MATCH ?)"
                    arguments.append(.text(proposal.expression))
                }
            }
            sql += " AND \(TitleMatchFunction.name)(title, ?)"
            arguments.append(.text(words))
        }
        return (sql, arguments, access)
    }

    /// The filter's conditions on a conversation's columns (unqualified), each after ` AND`,
    /// with their arguments: what the overview's grouped queries add to their own.
    func filterConditions(in database: Database) throws -> (sql: String, arguments: [SQLValue]) {
        let (sql, arguments, _) = conditions(proposal: try proposal(database))
        return (sql, arguments)
    }

    /// The filter's pin condition for a query over the whole table.
    private var pinCondition: String { filter.pinnedOnly ? "pinned = 1" : "1" }

    /// The halves of the index in the order a forward walk meets them.
    private var halves: [Bool] { filter.pinnedOnly ? [true] : [true, false] }

    /// How many rows of the order's index a title's words are checked on first, row by
    /// row, chunk after chunk while each turns up a tenth of a page or more: words in many
    /// titles (`a`, `py`, `react`) fill the page from them sooner than the title index
    /// could list its candidates; words in few leave it after the first chunk.
    static let probeChunks = [200, 1_800]

    /// Up to `limit` rows from `cursor` (exclusive) on, forward or backward.
    private func rows(_ database: Database, forward: Bool, from cursor: Cursor?, limit: Int) throws -> [ConversationDTO] {
        var groups = forward ? halves : halves.reversed()
        var start: (pinned: Bool, values: [SQLValue])?
        if let cursor {
            guard let parts = parts(of: cursor) else {
                throw StorageError.invalidCursor(reason: "the token is for \(cursor.listing)")
            }
            start = parts
            groups = Array(groups.drop { $0 != parts.pinned })
        }
        let probe = filter.title.map { SearchQuery($0) }
        var asked: (expression: String, few: Bool)??
        var found: [ConversationDTO] = []
        for (offset, pinned) in groups.enumerated() {
            var from = offset == 0 ? start?.values : nil
            if let probe {
                let (sql, arguments, _) = conditions(proposal: nil, title: false)
                var halfRead = false
                for chunk in Self.probeChunks {
                    let before = found.count
                    let walked = try query(
                        database, access: "INDEXED BY \(index)", pinned: pinned, conditions: (sql, arguments), from: from, forward: forward,
                        limit: chunk)
                    for row in walked where found.count < limit && probe.matches(row.title) { found.append(row) }
                    if found.count >= limit { return found }
                    guard walked.count == chunk, let last = walked.last, let parts = parts(of: Cursor.conversation(last, order: sort)) else {
                        halfRead = true
                        break
                    }
                    from = parts.values
                    // Too few here to fill the page soon: the title index is asked.
                    if (found.count - before) * 10 < limit { break }
                }
                if halfRead { continue }
            }
            let proposal = try asked ?? proposal(database)
            asked = proposal
            let conditions = conditions(proposal: proposal, walking: pinned)
            found += try query(
                database, access: conditions.access, pinned: pinned, conditions: (conditions.sql, conditions.arguments), from: from,
                forward: forward, limit: limit - found.count)
            if found.count >= limit { break }
        }
        return found
    }

    /// Up to `limit` rows of one half of the index that meet `conditions`, after the key `from`.
    private func query(
        _ database: Database, access: String, pinned: Bool, conditions: (sql: String, arguments: [SQLValue]), from: [SQLValue]?,
        forward: Bool, limit: Int
    ) throws -> [ConversationDTO] {
        var sql = "SELECT \(SQLiteConversationRepository.columns) FROM conversation \(access) WHERE pinned = ?" + conditions.sql
        var arguments: [SQLValue] = [SQLValue(pinned)] + conditions.arguments
        if let from {
            sql += " AND \(key) \(comparison(forward: forward)) (?, ?)"
            arguments += from
        }
        sql += " ORDER BY \(order(forward: forward)) LIMIT ?"
        arguments.append(.integer(Int64(limit)))
        return try database.query(sql, arguments, SQLiteConversationRepository.conversation)
    }

    func page(in database: Database, at position: PagePosition, limit: Int) throws -> Page<ConversationDTO> {
        let limit = max(1, limit)
        let cursor = { (conversation: ConversationDTO) in Cursor.conversation(conversation, order: sort) }
        switch position {
        case .first:
            let rows = try rows(database, forward: true, from: nil, limit: limit + 1)
            let items = Array(rows.prefix(limit))
            return Page(items: items, previous: nil, next: rows.count > limit ? items.last.map(cursor) : nil)
        case .after(let start):
            let rows = try rows(database, forward: true, from: start, limit: limit + 1)
            let items = Array(rows.prefix(limit))
            return Page(items: items, previous: items.first.map(cursor), next: rows.count > limit ? items.last.map(cursor) : nil)
        case .last:
            let rows = try rows(database, forward: false, from: nil, limit: limit + 1)
            let items = Array(rows.prefix(limit).reversed())
            return Page(items: items, previous: rows.count > limit ? items.first.map(cursor) : nil, next: nil)
        case .before(let end):
            let rows = try rows(database, forward: false, from: end, limit: limit + 1)
            let items = Array(rows.prefix(limit).reversed())
            return Page(items: items, previous: rows.count > limit ? items.first.map(cursor) : nil, next: items.last.map(cursor))
        }
    }

    /// Up to `limit` conversations that pass the filter, by id (the order they were made
    /// in, oldest first: ids follow the created time), after `id`.
    func oldestFirst(in database: Database, after id: Int64?, limit: Int) throws -> [ConversationDTO] {
        let (filterSQL, filterArguments, _) = conditions(proposal: try proposal(database))
        var arguments = filterArguments
        var sql = "SELECT \(SQLiteConversationRepository.columns) FROM conversation WHERE \(pinCondition)\(filterSQL)"
        if let id {
            sql += " AND id > ?"
            arguments.append(.integer(id))
        }
        sql += " ORDER BY id LIMIT ?"
        arguments.append(.integer(Int64(max(limit, 1))))
        return try database.query(sql, arguments, SQLiteConversationRepository.conversation)
    }

    /// How many conversations pass the filter (a scan unless the filter is empty or only
    /// on pin).
    func count(in database: Database) throws -> Int {
        if filter.isEmpty { return Int(try database.scalarInt("SELECT value FROM tally WHERE name = 'conversations'")) }
        let (filterSQL, arguments, _) = conditions(proposal: try proposal(database))
        return Int(try database.scalarInt("SELECT count(*) FROM conversation WHERE \(pinCondition)\(filterSQL)", arguments))
    }

    /// How many rows come before `conversation` in this order and filter.
    func index(of conversation: ConversationDTO, in database: Database) throws -> Int {
        guard let parts = parts(of: Cursor.conversation(conversation, order: sort)) else { return 0 }
        let (filterSQL, filterArguments, access) = conditions(proposal: try proposal(database))
        var before = 0
        for pinned in halves {
            var sql = "SELECT count(*) FROM conversation \(access) WHERE pinned = ?" + filterSQL
            var arguments: [SQLValue] = [SQLValue(pinned)] + filterArguments
            if pinned == parts.pinned {
                sql += " AND \(key) \(comparison(forward: false)) (?, ?)"
                arguments += parts.values
                before += Int(try database.scalarInt(sql, arguments))
                break
            }
            before += Int(try database.scalarInt(sql, arguments))
        }
        return before
    }
}
