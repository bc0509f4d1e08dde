import CSQLite
import SearchTokenizer

/// The baseline: the same queries through the SQLite C API, one prepared statement, no DTOs.
final class RawSQLite {
    let handle: OpaquePointer

    init(path: String, create: Bool = false) throws {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)
        guard sqlite3_open_v2(path, &handle, flags, nil) == SQLITE_OK, let handle else {
            throw BenchError("cannot open \(path)")
        }
        self.handle = handle
        // The same tokenizer as scrollback's connections: the baseline reads the same index.
        guard scrollback_register_tokenizer(handle) == SQLITE_OK else { throw BenchError("cannot register the tokenizer") }
    }

    deinit { sqlite3_close_v2(handle) }

    final class Statement {
        let handle: OpaquePointer
        let sql: String
        init(_ database: RawSQLite, _ sql: String) throws {
            self.sql = sql
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(database.handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
                throw BenchError("cannot prepare: \(String(cString: sqlite3_errmsg(database.handle)))")
            }
            handle = statement
        }
        deinit { sqlite3_finalize(handle) }

        /// Resets, then binds the integers first and the texts after them.
        private func bind(_ integers: [Int64], text: [String]) {
            sqlite3_reset(handle)
            for (index, value) in integers.enumerated() { sqlite3_bind_int64(handle, Int32(index + 1), value) }
            for (offset, value) in text.enumerated() {
                sqlite3_bind_text(handle, Int32(integers.count + offset + 1), value, -1, unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self))
            }
        }

        /// The first row's integer columns, after binding integers then text.
        func first(_ integers: [Int64], text: [String]) -> [Int64]? {
            bind(integers, text: text)
            guard sqlite3_step(handle) == SQLITE_ROW else { return nil }
            return (0..<sqlite3_column_count(handle)).map { sqlite3_column_int64(handle, $0) }
        }

        /// Binds integers and runs to the end, touching every column; returns the row count.
        @discardableResult
        func run(_ integers: [Int64] = [], text: [String] = []) -> Int {
            bind(integers, text: text)
            var rows = 0
            var checksum: Int64 = 0
            while sqlite3_step(handle) == SQLITE_ROW {
                rows += 1
                // Every value is read as what it is, without making Swift values of it.
                for column in 0..<sqlite3_column_count(handle) {
                    switch sqlite3_column_type(handle, column) {
                    case SQLITE_INTEGER: checksum &+= sqlite3_column_int64(handle, column)
                    case SQLITE_TEXT:
                        if let text = sqlite3_column_text(handle, column) { checksum &+= Int64(text.pointee) }
                        checksum &+= Int64(sqlite3_column_bytes(handle, column))
                    default: break
                    }
                }
            }
            if checksum == 42 { rows += 0 }
            return rows
        }
    }

    func execute(_ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else {
            throw BenchError("\(String(cString: sqlite3_errmsg(handle))) in \(sql.prefix(80))")
        }
    }

    /// The first column of every row, as integers or as text.
    func integers(_ sql: String) throws -> [Int64] {
        try rows(sql) { sqlite3_column_int64($0, 0) }
    }

    func texts(_ sql: String) throws -> [String] {
        try rows(sql) { statement in sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? "" }
    }

    private func rows<T>(_ sql: String, _ map: (OpaquePointer) -> T) throws -> [T] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw BenchError("cannot prepare: \(String(cString: sqlite3_errmsg(handle)))")
        }
        defer { sqlite3_finalize(statement) }
        var result: [T] = []
        while sqlite3_step(statement) == SQLITE_ROW { result.append(map(statement)) }
        return result
    }
}
