import CSQLite
import ScrollbackModel

extension SQLiteError {
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
}
