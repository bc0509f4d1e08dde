import CSQLite
import Foundation
import ScrollbackModel
import SearchTokenizer

/// One SQLite connection, used from one thread (or actor) at a time.
///
/// Read-write connections create the file and its folder, use WAL and a busy timeout.
/// Read-only connections never create anything: see `open(path:access:)`.
final class Database {
    enum Access: Sendable, Equatable {
        case readWrite
        case readOnly
    }

    let path: String
    let access: Access
    /// True when a read-only connection reads the file as an immutable snapshot: changes
    /// other processes make while it is open are not seen.
    let isSnapshot: Bool
    let handle: OpaquePointer
    /// The file as SQLite names it (a symlink's target; its `-wal` and `-shm` are beside it).
    var fileName: String {
        guard let name = sqlite3_db_filename(handle, "main"), name.pointee != 0 else { return path }
        return String(cString: name)
    }
    private var statements: [String: Statement] = [:]
    private var savepointDepth = 0

    /// No transaction is open: settings that SQLite refuses inside one can be changed.
    var isOutsideTransaction: Bool { savepointDepth == 0 && sqlite3_get_autocommit(handle) != 0 }
    /// Inside a write whose transaction SQLite rolled back by itself (after a full disk, an
    /// I/O error or a lack of memory, it may undo the whole transaction, not only the failed
    /// statement): nothing more of that write may run, as it would run outside it.
    var transactionLost: Bool { savepointDepth > 0 && sqlite3_get_autocommit(handle) != 0 }
    static let lostTransaction = "SQLite undid the whole change after an error (a full disk, a read error); nothing of it was kept"
    /// When not nil, the SQL of every statement run is appended, so that tests can assert on
    /// what ran (and on its `EXPLAIN QUERY PLAN`).
    var recordedSQL: [String]?
    /// While a bulk load runs (`SearchIndex.loading`): where `Writer` reports its rows.
    var indexingLoad: IndexingLoad?
    /// The sync outbox of the write transaction in progress, read at its first use.
    private var outboxState = OutboxState.unloaded
    private enum OutboxState {
        case unloaded
        case loaded(Outbox?)
    }
    /// While ops from other machines are applied: `Writer` appends no ops (they are in the
    /// log already), and records tombstones with the op's clock.
    var applyingRemote: HybridClock?
    /// While a repair changes what only this database got wrong: `Writer` appends no ops.
    var repairingLocally = false

    var isReadOnly: Bool { access == .readOnly }

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
    /// - Read-write: creates the file when missing, and its folder only when `createFolder`
    ///   is set (the default location); a typo in `--db` must not make a new database.
    ///   The connection does not checkpoint on close until `trustForCheckpoints()`: a stray
    ///   or foreign `-wal` beside a file that fails validation is never copied into it.
    /// - Read-only: a missing file is `StorageError.noDatabase`. Always `mode=ro`, which sees
    ///   other writers' commits; SQLite may create `-shm` (and an empty `-wal`) beside a WAL
    ///   database, as any reader does. Only where that is impossible (a folder nobody can
    ///   write, with no `-wal` in it, so nobody can be writing the file) is it read as an
    ///   immutable snapshot.
    static func open(path: String, access: Access, createFolder: Bool = true) throws -> Database {
        var flags = SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX
        let exists = try path != ":memory:" && Self.checkKind(of: path)
        if path != ":memory:" { try Self.checkCompanions(of: path) }
        switch access {
        case .readWrite:
            let folder = PathText.parent(of: path)
            if !folder.isEmpty && path != ":memory:" {
                try Self.makeFolder(folder, for: path, create: createFolder)
            }
            flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        case .readOnly:
            guard exists else { throw StorageError.noDatabase(path: path) }
            flags |= SQLITE_OPEN_READONLY
        }
        do {
            return try connect(path: path, access: access, flags: flags, immutable: false)
        } catch StorageError.cannotOpen where access == .readWrite && !Self.folderIsWritable(of: path) {
            let folder = PathText.parent(of: path)
            throw StorageError.cannotOpen(
                path: path,
                reason: "its folder \(folder.isEmpty ? "." : folder) is read-only, and SQLite writes a -wal file beside the database; look with --readonly, or move the file somewhere writable")
        } catch StorageError.cannotOpen(_, let reason) where access == .readOnly {
            if Self.canOnlyBeReadAsSnapshot(path) {
                return try connect(path: path, access: access, flags: flags, immutable: true)
            }
            if FileManager.default.fileExists(atPath: path + "-wal") {
                // A -wal holds changes not yet in the file; reading without it would show an
                // old or torn state, and SQLite needs a -shm beside it to read it.
                throw StorageError.cannotOpen(
                    path: path,
                    reason: "it has a -wal file (changes of a running or crashed writer) and SQLite cannot create the -shm it needs to read it in this folder; open it once where the folder is writable, or copy the file with its -wal elsewhere")
            }
            throw StorageError.cannotOpen(path: path, reason: reason)
        }
    }

    /// SQLite configured once, before its first connection (see the shim).
    private static let configured: Int32 = scrollback_sqlite3_config_no_memory_statistics()

    private static func connect(path: String, access: Access, flags: Int32, immutable: Bool) throws -> Database {
        _ = configured
        let uri = Self.uri(path: path, readOnly: access == .readOnly, immutable: immutable)
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(uri, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close_v2(handle)
            throw StorageError.cannotOpen(path: path, reason: message)
        }
        let database = Database(path: path, access: access, isSnapshot: immutable, handle: handle)
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, 5_000)
        var ignored: Int32 = 0
        _ = scrollback_sqlite3_db_config_int(handle, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, &ignored)
        _ = scrollback_sqlite3_db_config_int(handle, SQLITE_DBCONFIG_ENABLE_FKEY, 1, &ignored)
        if access == .readWrite {
            _ = scrollback_sqlite3_db_config_int(handle, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, &ignored)
        }
        do {
            // "file is not a database" surfaces at the first statement, not at open.
            _ = try database.scalarInt("PRAGMA schema_version")
        } catch StorageError.inputOutput(_, let detail) where detail.code == SQLITE_CANTOPEN {
            throw StorageError.cannotOpen(path: path, reason: detail.message)
        } catch StorageError.readOnly {
            // A rollback journal a crashed writer left: a reader cannot roll it back.
            var journal = stat()
            if lstat(path + "-journal", &journal) == 0, journal.st_size > 0 {
                throw StorageError.cannotOpen(path: path, reason: StorageError.hotJournalReason)
            }
            // SQLITE_READONLY_CANTINIT and kin: a reader that cannot make its `-shm`.
            throw StorageError.cannotOpen(path: path, reason: "cannot create its -shm file beside it (the folder is read-only)")
        } catch StorageError.damaged(_, let detail) where detail.code == SQLITE_NOTADB {
            throw StorageError.notAScrollbackDatabase(path: path, reason: "not a SQLite file")
        }
        // The FTS tables' tokenizer (tokenize = 'scrollback') lives in this connection only.
        let registered = scrollback_register_tokenizer(handle)
        guard registered == SQLITE_OK else {
            throw StorageError.cannotOpen(
                path: path, reason: "cannot set up its search tokenizer: \(String(cString: sqlite3_errstr(registered)))")
        }
        let function = TitleMatchFunction.register(handle)
        guard function == SQLITE_OK else {
            throw StorageError.cannotOpen(
                path: path, reason: "cannot set up its title match: \(String(cString: sqlite3_errstr(function)))")
        }
        return database
    }

    /// Lets the connection checkpoint its `-wal` into the file when it closes, as SQLite
    /// normally does: only once the file is known to be ours.
    func trustForCheckpoints() {
        var ignored: Int32 = 0
        _ = scrollback_sqlite3_db_config_int(handle, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, &ignored)
    }

    /// Whether a file exists at `path`; throws for anything that is not a regular file (a
    /// folder, a FIFO, a device), before SQLite opens it (a FIFO would block).
    private static func checkKind(of path: String) throws -> Bool {
        var status = stat()
        guard stat(path, &status) == 0 else { return false }
        switch status.st_mode & S_IFMT {
        case S_IFREG: return true
        case S_IFDIR: throw StorageError.notAScrollbackDatabase(path: path, reason: "it is a folder")
        case S_IFIFO: throw StorageError.notAScrollbackDatabase(path: path, reason: "it is a FIFO, not a file")
        case S_IFCHR, S_IFBLK: throw StorageError.notAScrollbackDatabase(path: path, reason: "it is a device, not a file")
        default: throw StorageError.notAScrollbackDatabase(path: path, reason: "it is not a regular file")
        }
    }

    /// SQLite's `-wal` and `-shm` beside the file must be its own regular files: a symlink or a
    /// folder there is refused before SQLite follows or trips over it.
    private static func checkCompanions(of path: String) throws {
        for suffix in ["-wal", "-shm"] {
            var status = stat()
            guard lstat(path + suffix, &status) == 0 else { continue }
            if (status.st_mode & S_IFMT) != S_IFREG {
                throw StorageError.cannotOpen(
                    path: path,
                    reason: "\(PathText.lastComponent(of: path))\(suffix) beside it is not a regular file (a symlink or a folder?); move it away")
            }
        }
    }

    private static func folderIsWritable(of path: String) -> Bool {
        let folder = PathText.parent(of: path)
        return Glibc.access(folder.isEmpty ? "." : folder, W_OK) == 0
    }

    /// A WAL database that no process can be writing: no `-wal` beside it, in a folder where
    /// none can be created. SQLite cannot read it `mode=ro` (it needs a `-shm`), but the file
    /// cannot change while it is read, so an immutable connection tells no lies.
    private static func canOnlyBeReadAsSnapshot(_ path: String) -> Bool {
        let fileManager = FileManager.default
        return Self.headerSaysWAL(path: path) && !fileManager.fileExists(atPath: path + "-wal")
            && !fileManager.fileExists(atPath: path + "-shm") && !folderIsWritable(of: path)
    }

    /// Whether the `-journal` beside `path` is a SQLite rollback journal of a file of its page
    /// size: its header's magic, and its page size the file's. (Nothing in a journal names
    /// its database; this keeps out what is plainly no journal of this file.)
    static func journalFits(_ path: String) -> Bool {
        guard let journal = HeldOpen.read(path + "-journal", at: 0, count: 28), journal.count == 28,
            let header = HeldOpen.read(path, at: 0, count: 18, following: true), header.count == 18
        else { return false }
        guard journal[0..<8].elementsEqual([0xD9, 0xD5, 0x05, 0xF9, 0x20, 0xA1, 0x63, 0xD7]) else { return false }
        let journalPageSize = journal[24..<28].reduce(0) { $0 << 8 | Int($1) }
        let stored = Int(header[16]) << 8 | Int(header[17])
        let pageSize = stored == 1 ? 65_536 : stored
        return journalPageSize == pageSize
    }

    /// Opens a private in-memory database (read-write), for tests and scratch work.
    static func inMemory() throws -> Database {
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
        // Another connection of this process may have the file open: a descriptor closed
        // here would drop its locks (`HeldOpen`).
        guard let header = HeldOpen.read(path, at: 0, count: 20, following: true), header.count == 20 else { return false }
        return header[18] == 2 && header[19] == 2
    }

    /// `mkdir -p` when `create` is set, else a clear error for a missing folder, with the
    /// system's own words for what went wrong.
    private static func makeFolder(_ folder: String, for path: String, create: Bool) throws {
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
            guard create else {
                throw StorageError.cannotOpen(path: path, reason: "there is no folder \(current); create it first, or check the path")
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
        if error.code == SQLITE_CORRUPT || error.code == SQLITE_NOTADB { return StorageError.damaged(path: path, detail: error) }
        if error.code == SQLITE_FULL { return StorageError.diskFull(path: path) }
        if error.extendedCode == scrollback_sqlite_constraint_trigger {
            return StorageError.conflict(
                "a trigger that is not scrollback's refused the change (\(error.message)); nothing was changed; `scrollback check` lists what is foreign in \(path)")
        }
        if error.code == SQLITE_IOERR || error.code == SQLITE_CANTOPEN {
            return StorageError.inputOutput(path: path, detail: error)
        }
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
    func run(_ sql: String, _ arguments: [SQLValue] = []) throws {
        let statement = try statement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        while try statement.step() {}
    }

    /// Runs a script of statements without arguments (schema, pragmas).
    func execute(_ script: String) throws {
        let code = sqlite3_exec(handle, script, nil, nil, nil)
        guard code == SQLITE_OK else { throw error(code: code, sql: script) }
    }

    /// Runs a query and maps each row.
    func query<T>(_ sql: String, _ arguments: [SQLValue] = [], _ map: (Row) throws -> T) throws -> [T] {
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
    func queryFirst<T>(_ sql: String, _ arguments: [SQLValue] = [], _ map: (Row) throws -> T) throws -> T? {
        let statement = try statement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        guard try statement.step() else { return nil }
        return try map(Row(handle: statement.handle))
    }

    /// The first column of the first row as an integer (0 when there is no row).
    func scalarInt(_ sql: String, _ arguments: [SQLValue] = []) throws -> Int64 {
        try queryFirst(sql, arguments) { $0.int64(0) } ?? 0
    }

    var changes: Int { Int(sqlite3_changes64(handle)) }
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// The rows of `EXPLAIN QUERY PLAN` for a statement, for tests that guard index use.
    func queryPlan(_ sql: String, _ arguments: [SQLValue] = []) throws -> [String] {
        try query("EXPLAIN QUERY PLAN " + sql, arguments) { $0.text(3) }
    }

    /// How long to wait for another connection's write lock before `StorageError.busy`.
    func setBusyTimeout(milliseconds: Int) {
        sqlite3_busy_timeout(handle, Int32(clamping: milliseconds))
    }

    /// `PRAGMA data_version`: changes when another connection commits.
    func dataVersion() throws -> Int64 { try scalarInt("PRAGMA data_version") }

    // MARK: Transactions

    /// Where `Writer` appends the ops of this transaction's changes: nil when sync is off,
    /// while remote ops are applied, or during a local repair.
    func outbox() throws -> Outbox? {
        applyingRemote == nil && !repairingLocally ? try syncOutbox() : nil
    }

    /// The sync outbox as stored (nil when sync is off), read once per write transaction.
    func syncOutbox() throws -> Outbox? {
        if case .loaded(let outbox) = outboxState { return outbox }
        guard savepointDepth > 0 else { return try Outbox.load(self) }
        let outbox = try Outbox.load(self)
        outboxState = .loaded(outbox)
        return outbox
    }

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`, or a savepoint when nested),
    /// committed when it returns and rolled back when it throws.
    ///
    /// - Parameter savepoint: false runs a nested `body` in the enclosing transaction as it
    ///   is, for a caller that undoes its own partial work when it throws. A savepoint makes
    ///   SQLite copy every page the body touches to a journal first; once per imported
    ///   conversation that was 3.5 GB written for a 225 MB export.
    func write<T>(savepoint: Bool = true, _ body: () throws -> T) throws -> T {
        guard access == .readWrite else { throw StorageError.readOnly }
        let outermost = savepointDepth == 0
        if !outermost && !savepoint { return try body() }
        let name = "scrollback_\(savepointDepth)"
        if transactionLost { throw StorageError.conflict(Self.lostTransaction) }
        try execute(outermost ? "BEGIN IMMEDIATE" : "SAVEPOINT \(name)")
        if outermost {
            // Another process may have changed the schema (a bulk import sets triggers aside
            // and puts them back) since this connection last read it. Reading it now, under
            // the write lock, keeps a stale schema out of the statements below, where
            // SQLite's automatic re-prepare cannot reach a virtual table's own statements
            // (seen: "no such table: conversation" from a DELETE).
            do {
                _ = try scalarInt("SELECT count(*) FROM sqlite_schema WHERE type = 'trigger'")
            } catch {
                try? execute("ROLLBACK")
                throw error
            }
        }
        if outermost { outboxState = .unloaded }
        savepointDepth += 1
        let result: T
        do {
            result = try body()
            if outermost, case .loaded(let outbox?) = outboxState {
                try outbox.save(in: self)
            }
        } catch {
            savepointDepth -= 1
            if outermost {
                outboxState = .unloaded
                try? execute("ROLLBACK")
            } else if transactionLost {
                // Nothing to roll back to: the callers above end the write too.
                throw error
            } else {
                try? execute("ROLLBACK TO \(name); RELEASE \(name)")
                // The ops of the rolled-back part are gone: number the next one after those left.
                if case .loaded(let outbox?) = outboxState { try? outbox.renumber(in: self) }
            }
            throw error
        }
        savepointDepth -= 1
        if outermost { outboxState = .unloaded }
        do {
            try execute(outermost ? "COMMIT" : "RELEASE \(name)")
        } catch {
            if outermost { try? execute("ROLLBACK") }
            throw error
        }
        return result
    }

    /// Runs `body` in a read transaction, so that several queries see one state.
    func read<T>(_ body: () throws -> T) throws -> T {
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

