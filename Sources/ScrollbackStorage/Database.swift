import CSQLite
import Foundation
import ScrollbackModel

/// One SQLite connection, used from one thread (or actor) at a time.
///
/// Read-write connections create the file and its folder, use WAL and a busy timeout.
/// Read-only connections never create anything: see `open(path:access:)`.
public final class Database {
    public enum Access: Sendable, Equatable {
        case readWrite
        case readOnly
    }

    public let path: String
    public let access: Access
    /// True when a read-only connection reads the file as an immutable snapshot: changes
    /// other processes make while it is open are not seen.
    public let isSnapshot: Bool
    let handle: OpaquePointer
    private var statements: [String: Statement] = [:]
    private var savepointDepth = 0
    /// When not nil, the SQL of every statement run is appended, so that tests can assert on
    /// what ran (and on its `EXPLAIN QUERY PLAN`).
    public var recordedSQL: [String]?

    public var isReadOnly: Bool { access == .readOnly }

    private init(path: String, access: Access, isSnapshot: Bool, handle: OpaquePointer) {
        self.path = path
        self.access = access
        self.isSnapshot = isSnapshot
        self.handle = handle
    }

    deinit {
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Opens a connection.
    ///
    /// - Read-write: creates the parent folder and the file when missing.
    /// - Read-only: a missing file is `StorageError.noDatabase`. A WAL database with no
    ///   `-wal` file beside it is opened `immutable`, so that no `-wal`/`-shm` files are
    ///   left behind; otherwise `mode=ro`, which sees other writers' commits.
    public static func open(path: String, access: Access) throws -> Database {
        let fileManager = FileManager.default
        var flags = SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX
        var isSnapshot = false
        var isDirectory: ObjCBool = false
        let exists = path != ":memory:" && fileManager.fileExists(atPath: path, isDirectory: &isDirectory)
        if exists && isDirectory.boolValue {
            throw StorageError.notAScrollbackDatabase(path: path, reason: "it is a folder")
        }
        switch access {
        case .readWrite:
            let folder = (path as NSString).deletingLastPathComponent
            if !folder.isEmpty && path != ":memory:" {
                try Self.makeFolder(folder, for: path)
            }
            flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        case .readOnly:
            guard exists else { throw StorageError.noDatabase(path: path) }
            flags |= SQLITE_OPEN_READONLY
            isSnapshot = Self.headerSaysWAL(path: path) && !fileManager.fileExists(atPath: path + "-wal")
        }
        let uri = Self.uri(path: path, readOnly: access == .readOnly, immutable: isSnapshot)
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(uri, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close_v2(handle)
            throw StorageError.cannotOpen(path: path, reason: message)
        }
        let database = Database(path: path, access: access, isSnapshot: isSnapshot, handle: handle)
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, 5_000)
        var ignored: Int32 = 0
        _ = scrollback_sqlite3_db_config_int(handle, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, &ignored)
        _ = scrollback_sqlite3_db_config_int(handle, SQLITE_DBCONFIG_ENABLE_FKEY, 1, &ignored)
        do {
            // "file is not a database" surfaces at the first statement, not at open.
            _ = try database.scalarInt("PRAGMA schema_version")
        } catch let error as StorageError {
            if case .sqlite(let sqliteError) = error, sqliteError.code == SQLITE_NOTADB {
                throw StorageError.notAScrollbackDatabase(path: path, reason: "not a SQLite file")
            }
            if case .sqlite(let sqliteError) = error, sqliteError.code == SQLITE_CANTOPEN {
                throw StorageError.cannotOpen(path: path, reason: sqliteError.message)
            }
            throw error
        }
        return database
    }

    /// Opens a private in-memory database (read-write), for tests and scratch work.
    public static func inMemory() throws -> Database {
        try open(path: ":memory:", access: .readWrite)
    }

    private static func uri(path: String, readOnly: Bool, immutable: Bool) -> String {
        if path == ":memory:" { return path }
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        let encoded = path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
        var uri = "file:" + encoded
        if readOnly { uri += immutable ? "?mode=ro&immutable=1" : "?mode=ro" }
        return uri
    }

    /// Bytes 18 and 19 of the header are 2 for a database in WAL mode.
    private static func headerSaysWAL(path: String) -> Bool {
        guard let file = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? file.close() }
        guard let header = try? file.read(upToCount: 20), header.count == 20 else { return false }
        return header[18] == 2 && header[19] == 2
    }

    /// `mkdir -p`, with the system's own words for what went wrong.
    private static func makeFolder(_ folder: String, for path: String) throws {
        var current = folder.hasPrefix("/") ? "" : "."
        for component in folder.split(separator: "/", omittingEmptySubsequences: true) {
            current += "/" + component
            var status = stat()
            if stat(current, &status) == 0 {
                if (status.st_mode & S_IFMT) != S_IFDIR {
                    throw StorageError.cannotOpen(path: path, reason: "\(current) is a file, not a folder")
                }
                continue
            }
            if mkdir(current, 0o755) != 0 && errno != EEXIST {
                let reason = String(cString: strerror(errno)).lowercased()
                throw StorageError.cannotOpen(path: path, reason: "cannot create folder \(current): \(reason)")
            }
        }
    }

    // MARK: Errors

    func error(code: Int32, sql: String?) -> any Error {
        let error = SQLiteError(code: code, handle: handle, sql: sql)
        if error.code == SQLITE_READONLY { return StorageError.readOnly }
        if error.code == SQLITE_BUSY { return StorageError.busy }
        return StorageError.sqlite(error)
    }

    // MARK: Statements

    func statement(_ sql: String) throws -> Statement {
        recordedSQL?.append(sql)
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        let statement = try Statement(database: self, sql: sql)
        statements[sql] = statement
        return statement
    }

    /// Runs one statement that returns no rows of interest.
    public func run(_ sql: String, _ arguments: [SQLValue] = []) throws {
        let statement = try statement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        while try statement.step() {}
    }

    /// Runs a script of statements without arguments (schema, pragmas).
    public func execute(_ script: String) throws {
        let code = sqlite3_exec(handle, script, nil, nil, nil)
        guard code == SQLITE_OK else { throw error(code: code, sql: script) }
    }

    /// Runs a query and maps each row.
    public func query<T>(_ sql: String, _ arguments: [SQLValue] = [], _ map: (Row) throws -> T) throws -> [T] {
        let statement = try statement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        var results: [T] = []
        while try statement.step() {
            results.append(try map(Row(handle: statement.handle)))
        }
        return results
    }

    /// Runs a query and maps its first row, if any.
    public func queryFirst<T>(_ sql: String, _ arguments: [SQLValue] = [], _ map: (Row) throws -> T) throws -> T? {
        let statement = try statement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        guard try statement.step() else { return nil }
        return try map(Row(handle: statement.handle))
    }

    /// The first column of the first row as an integer (0 when there is no row).
    public func scalarInt(_ sql: String, _ arguments: [SQLValue] = []) throws -> Int64 {
        try queryFirst(sql, arguments) { $0.int64(0) } ?? 0
    }

    public var changes: Int { Int(sqlite3_changes64(handle)) }
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// The rows of `EXPLAIN QUERY PLAN` for a statement, for tests that guard index use.
    public func queryPlan(_ sql: String, _ arguments: [SQLValue] = []) throws -> [String] {
        try query("EXPLAIN QUERY PLAN " + sql, arguments) { $0.text(3) }
    }

    /// How long to wait for another connection's write lock before `StorageError.busy`.
    public func setBusyTimeout(milliseconds: Int) {
        sqlite3_busy_timeout(handle, Int32(clamping: milliseconds))
    }

    /// `PRAGMA data_version`: changes when another connection commits.
    public func dataVersion() throws -> Int64 { try scalarInt("PRAGMA data_version") }

    // MARK: Transactions

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`, or a savepoint when nested),
    /// committed when it returns and rolled back when it throws.
    public func write<T>(_ body: () throws -> T) throws -> T {
        guard access == .readWrite else { throw StorageError.readOnly }
        let outermost = savepointDepth == 0
        let name = "scrollback_\(savepointDepth)"
        try execute(outermost ? "BEGIN IMMEDIATE" : "SAVEPOINT \(name)")
        savepointDepth += 1
        let result: T
        do {
            result = try body()
        } catch {
            savepointDepth -= 1
            if outermost {
                try? execute("ROLLBACK")
            } else {
                try? execute("ROLLBACK TO \(name); RELEASE \(name)")
            }
            throw error
        }
        savepointDepth -= 1
        do {
            try execute(outermost ? "COMMIT" : "RELEASE \(name)")
        } catch {
            if outermost { try? execute("ROLLBACK") }
            throw error
        }
        return result
    }

    /// Runs `body` in a read transaction, so that several queries see one state.
    public func read<T>(_ body: () throws -> T) throws -> T {
        guard savepointDepth == 0, sqlite3_get_autocommit(handle) != 0 else { return try body() }
        try execute("BEGIN DEFERRED")
        savepointDepth += 1
        defer {
            savepointDepth -= 1
            try? execute("COMMIT")
        }
        return try body()
    }
}
