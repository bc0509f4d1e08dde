import CSQLite

/// An error reported by SQLite, with the extended result code, SQLite's message and the
/// SQL that was running.
public struct SQLiteError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The extended result code (`SQLITE_CONSTRAINT_UNIQUE`, `SQLITE_BUSY_SNAPSHOT`, …).
    public let extendedCode: Int32
    public let message: String
    public let sql: String?

    /// The primary result code (`SQLITE_CONSTRAINT`, `SQLITE_BUSY`, …), for matching.
    public var code: Int32 { extendedCode & 0xFF }

    public init(extendedCode: Int32, message: String, sql: String? = nil) {
        self.extendedCode = extendedCode
        self.message = message
        self.sql = sql
    }

    init(handle: OpaquePointer?, sql: String?) {
        let code = handle.map { sqlite3_extended_errcode($0) } ?? SQLITE_ERROR
        let message = handle.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "unknown error"
        self.init(extendedCode: code, message: message, sql: sql)
    }

    init(code: Int32, handle: OpaquePointer?, sql: String?) {
        var message = String(cString: sqlite3_errstr(code))
        if let handle, sqlite3_extended_errcode(handle) == code {
            message = String(cString: sqlite3_errmsg(handle))
        }
        self.init(extendedCode: code, message: message, sql: sql)
    }

    public var description: String {
        var text = "SQLite error \(extendedCode): \(message)"
        if let sql { text += " - while executing `\(sql)`" }
        return text
    }
}
