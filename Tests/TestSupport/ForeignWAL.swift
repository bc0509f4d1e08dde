import CSQLite
import Foundation

/// A complete, self-consistent `-wal` of another SQLite database (a table `t`), as SQLite
/// would replay it beside any file with the same page size: what a stray or foreign `-wal`
/// looks like. `scratch` is a path for the other database.
public func foreignWAL(scratch: String) throws -> Data {
    var handle: OpaquePointer?
    guard sqlite3_open(scratch, &handle) == SQLITE_OK, let handle else { throw CocoaError(.fileReadUnknown) }
    defer { sqlite3_close(handle) }
    for sql in ["PRAGMA journal_mode = WAL", "PRAGMA wal_autocheckpoint = 0", "CREATE TABLE t (x)", "INSERT INTO t VALUES (1), (2), (3)"] {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else { throw CocoaError(.fileReadUnknown) }
    }
    // Read while the connection is open, before closing checkpoints it away.
    return try Data(contentsOf: URL(fileURLWithPath: scratch + "-wal"))
}
