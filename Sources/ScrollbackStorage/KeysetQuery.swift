import ScrollbackModel
/// A keyset-paginated query: rows are compared to the cursor as a row value in the order of
/// one index, so a page costs the same at any depth. Never OFFSET.
struct KeysetQuery: Sendable {
    /// `SELECT … FROM … [WHERE fixed filter]`, without ORDER BY.
    let select: String
    /// Whether `select` already has a WHERE clause.
    let hasFilter: Bool
    /// The sort key as a row value, e.g. `(pinned, updated_at, id)`.
    let key: String
    /// ORDER BY for the forward direction, e.g. `pinned DESC, updated_at DESC, id DESC`.
    let forwardOrder: String
    /// ORDER BY for the backward direction: every term reversed.
    let backwardOrder: String
    /// `<` when the forward order is descending, `>` when ascending.
    let forwardComparison: String
    /// The cursor's key as arguments, or nil for a cursor of another listing.
    let keyArguments: @Sendable (Cursor.Key) -> [SQLValue]?

    private var backwardComparison: String { forwardComparison == "<" ? ">" : "<" }

    func sql(forward: Bool, withKey: Bool) -> String {
        var sql = select
        if withKey {
            let placeholders = Array(repeating: "?", count: key.split(separator: ",").count).joined(separator: ", ")
            sql += (hasFilter ? " AND " : " WHERE ")
            sql += "\(key) \(forward ? forwardComparison : backwardComparison) (\(placeholders))"
        }
        sql += " ORDER BY \(forward ? forwardOrder : backwardOrder) LIMIT ?"
        return sql
    }

    func page<Item: Sendable>(
        in database: Database, at position: PagePosition, limit: Int, filter: [SQLValue] = [],
        map: (Row) throws -> Item, cursor: (Item) -> Cursor
    ) throws -> Page<Item> {
        let limit = max(1, limit)
        func fetch(forward: Bool, from key: Cursor?) throws -> [Item] {
            var arguments = filter
            if let key {
                guard let keyValues = keyArguments(key.key) else {
                    throw StorageError.invalidCursor(reason: "the token is for \(key.listing)")
                }
                arguments += keyValues
            }
            arguments.append(.integer(Int64(limit + 1)))
            return try database.query(sql(forward: forward, withKey: key != nil), arguments, map)
        }
        switch position {
        case .first:
            let rows = try fetch(forward: true, from: nil)
            let items = Array(rows.prefix(limit))
            return Page(items: items, previous: nil, next: rows.count > limit ? items.last.map(cursor) : nil)
        case .after(let start):
            let rows = try fetch(forward: true, from: start)
            let items = Array(rows.prefix(limit))
            return Page(
                items: items, previous: items.first.map(cursor), next: rows.count > limit ? items.last.map(cursor) : nil)
        case .last:
            let rows = try fetch(forward: false, from: nil)
            let items = Array(rows.prefix(limit).reversed())
            return Page(items: items, previous: rows.count > limit ? items.first.map(cursor) : nil, next: nil)
        case .before(let end):
            let rows = try fetch(forward: false, from: end)
            let items = Array(rows.prefix(limit).reversed())
            return Page(
                items: items, previous: rows.count > limit ? items.first.map(cursor) : nil, next: items.last.map(cursor))
        }
    }
}
