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

    /// The filter's conditions besides pin, with their arguments.
    private var conditions: (sql: String, arguments: [SQLValue]) {
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
        if let model = filter.model {
            // LIKE folds ASCII case; its wildcards in the name are taken literally.
            let escaped = model.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
                .replacingOccurrences(of: "_", with: "\\_")
            sql += " AND model LIKE ? ESCAPE '\\'"
            arguments.append(.text("%" + escaped + "%"))
        }
        return (sql, arguments)
    }

    /// The filter's pin condition for a query over the whole table.
    private var pinCondition: String { filter.pinnedOnly ? "pinned = 1" : "1" }

    /// The halves of the index in the order a forward walk meets them.
    private var halves: [Bool] { filter.pinnedOnly ? [true] : [true, false] }

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
        let (filterSQL, filterArguments) = conditions
        var found: [ConversationDTO] = []
        for (offset, pinned) in groups.enumerated() {
            var sql = "SELECT \(SQLiteConversationRepository.columns) FROM conversation INDEXED BY \(index) WHERE pinned = ?" + filterSQL
            var arguments: [SQLValue] = [SQLValue(pinned)] + filterArguments
            if offset == 0, let start {
                sql += " AND \(key) \(comparison(forward: forward)) (?, ?)"
                arguments += start.values
            }
            sql += " ORDER BY \(order(forward: forward)) LIMIT ?"
            arguments.append(.integer(Int64(limit - found.count)))
            found += try database.query(sql, arguments, SQLiteConversationRepository.conversation)
            if found.count >= limit { break }
        }
        return found
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
        let (filterSQL, filterArguments) = conditions
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
        let (filterSQL, arguments) = conditions
        return Int(try database.scalarInt("SELECT count(*) FROM conversation WHERE \(pinCondition)\(filterSQL)", arguments))
    }

    /// How many rows come before `conversation` in this order and filter.
    func index(of conversation: ConversationDTO, in database: Database) throws -> Int {
        guard let parts = parts(of: Cursor.conversation(conversation, order: sort)) else { return 0 }
        let (filterSQL, filterArguments) = conditions
        var before = 0
        for pinned in halves {
            var sql = "SELECT count(*) FROM conversation INDEXED BY \(index) WHERE pinned = ?" + filterSQL
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
