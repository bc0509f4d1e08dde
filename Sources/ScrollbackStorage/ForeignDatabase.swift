import ScrollbackModel

/// Another program's SQLite file (an `llm` log), read on a read-only connection: queries
/// only, nothing of it is ever written (not even a checkpoint on close).
public final class ForeignDatabase {
    let database: Database

    public var path: String { database.path }

    /// - Throws: `StorageError` when the file does not open as a SQLite database.
    public init(readingAt path: String) throws {
        database = try Database.open(path: path, access: .readOnly, createFolder: false)
    }

    public func query<T>(_ sql: String, _ arguments: [SQLValue] = [], _ map: (Row) throws -> T) throws -> [T] {
        try database.query(sql, arguments, map)
    }

    public func scalarInt(_ sql: String, _ arguments: [SQLValue] = []) throws -> Int64 {
        try database.scalarInt(sql, arguments)
    }
}
