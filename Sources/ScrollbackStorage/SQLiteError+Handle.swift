import CSQLite
import ScrollbackModel

extension SQLiteError {
    init(code: Int32, handle: OpaquePointer?, sql: String?) {
        var message = String(cString: sqlite3_errstr(code))
        if let handle, sqlite3_extended_errcode(handle) == code {
            message = String(cString: sqlite3_errmsg(handle))
        }
        self.init(extendedCode: code, message: message, sql: sql)
    }
}
