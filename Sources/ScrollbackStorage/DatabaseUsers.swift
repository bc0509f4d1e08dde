import Foundation
import ScrollbackModel

/// Who has a database open, for `restore` (which must not swap a file under a process that
/// holds it: SQLite cannot tell that another process has a file open, only whether it is
/// in a transaction).
///
/// Every scrollback process that opens a database takes a shared POSIX record lock on one
/// byte of `DATABASE.in-use`, a file beside it: the byte names its role (`Role`, read-only
/// or not). `restore` takes a write lock over all the bytes: it is refused while any is
/// held, and it learns from `F_GETLK` which roles hold them and one process id of each.
/// A lock goes with its process, kill -9 included; the file itself stays, empty.
///
/// POSIX locks belong to the process and are dropped when it closes any descriptor of the
/// file, so the file is opened once per process and kept open (`shared`). A process that
/// cannot open the file (a read-only folder without it) registers nothing: a restore could
/// not write that folder either.
public final class DatabaseUsers: @unchecked Sendable {
    /// What a process does with the database.
    public enum Role: Int, CaseIterable, Sendable {
        case browser = 0, sync, importer, command, agentServer

        public var noun: String {
            switch self {
            case .browser: "browser"
            case .sync: "sync"
            case .importer: "import"
            case .command: "command"
            case .agentServer: "MCP server (scrollback mcp)"
            }
        }
    }

    /// A process found holding the database.
    public struct Holder: Equatable, Sendable {
        public var role: Role
        public var readOnly: Bool
        public var pid: Int32

        public var description: String {
            let article = readOnly ? "a read-only" : role == .browser ? "the" : role == .importer ? "an" : "a"
            return "\(article) \(role.noun) (pid \(pid))"
        }
    }

    /// The bytes a restore locks: room for roles to come.
    static let span: Int = 64

    public static let shared = DatabaseUsers()

    private let lock = NSLock()
    /// Per database (as given, made absolute): the descriptor and the bytes locked.
    private var registered: [String: (descriptor: Int32, bytes: Set<Int>)] = [:]
    /// The lock files this process made (they were not there): `forget` may remove them.
    private var made: Set<String> = []

    public static func lockPath(of database: String) -> String { database + ".in-use" }

    static func byte(_ role: Role, readOnly: Bool) -> Int { role.rawValue * 2 + (readOnly ? 1 : 0) }

    /// The database's own path, its symlinks followed: the lock is beside the file itself,
    /// whatever name each process gave it.
    static func key(_ database: String) -> String {
        URL(fileURLWithPath: database).standardizedFileURL.resolvingSymlinksInPath().path
    }

    /// Opens the lock file (made when `create`), refusing anything but a regular file: a
    /// FIFO there would block, a folder or a link would mislead. Nil with the reason.
    static func openLockFile(_ path: String, create: Bool) -> (descriptor: Int32?, problem: String?) {
        var descriptor = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | (create ? O_CREAT : 0), 0o600)
        if descriptor < 0 && (errno == EACCES || errno == EROFS) { descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) }
        guard descriptor >= 0 else {
            if errno == ENOENT { return (nil, nil) }
            return (nil, "\(path) (the lock beside the database) cannot be opened: " + String(cString: strerror(errno)).lowercased())
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            return (nil, "\(path) (the lock beside the database) is not a regular file; move it away")
        }
        return (descriptor, nil)
    }

    /// Notes that this process has `database` open as `role`. Waits (up to `patience`
    /// seconds) while a restore replaces it; throws `RestoreError.underWay` after.
    public func register(_ database: String, as role: Role, readOnly: Bool, patience: Double = 30) throws {
        guard database != ":memory:" else { return }
        // A reader of a file that is not there creates nothing (it fails next).
        if readOnly && !FileManager.default.fileExists(atPath: database) { return }
        // Nor does one of a folder, a FIFO or a device: it is refused next, and nothing may
        // be made beside it (`--db /etc`).
        var status = stat()
        if stat(database, &status) == 0 && (status.st_mode & S_IFMT) != S_IFREG { return }
        let key = Self.key(database)
        lock.lock()
        defer { lock.unlock() }
        let byte = Self.byte(role, readOnly: readOnly)
        if let entry = registered[key], entry.bytes.contains(byte) { return }
        let descriptor: Int32
        if let entry = registered[key] {
            descriptor = entry.descriptor
        } else {
            var existing = stat()
            let there = lstat(Self.lockPath(of: key), &existing) == 0
            guard let opened = Self.openLockFile(Self.lockPath(of: key), create: true).descriptor else { return }
            descriptor = opened
            registered[key] = (descriptor, [])
            if !there { made.insert(key) }
        }
        let deadline = Date().addingTimeInterval(patience)
        while true {
            var record = Self.record(type: F_RDLCK, start: byte, length: 1)
            if fcntl(descriptor, F_SETLK, &record) == 0 { break }
            guard errno == EAGAIN || errno == EACCES else { return }
            guard Date() < deadline else { throw RestoreError.underWay(path: database) }
            usleep(50_000)
        }
        registered[key]?.bytes.insert(byte)
    }

    /// After `database` could not be opened (not a scrollback database, damaged): its lock
    /// file goes again when this process made it and nobody else holds it, so that a path
    /// refused leaves nothing beside it.
    public func forget(_ database: String) {
        let key = Self.key(database)
        lock.lock()
        defer { lock.unlock() }
        guard let entry = registered.removeValue(forKey: key) else { return }
        if made.remove(key) != nil {
            var record = Self.record(type: F_WRLCK, start: 0, length: Self.span)
            if fcntl(entry.descriptor, F_SETLK, &record) == 0 { unlink(Self.lockPath(of: key)) }
        }
        close(entry.descriptor)
    }

    /// Takes again the bytes this process registered for `database` (after an `Exclusive`
    /// of its own let go of them).
    func reassert(_ database: String) {
        lock.lock()
        defer { lock.unlock() }
        guard let entry = registered[Self.key(database)] else { return }
        for byte in entry.bytes {
            var record = Self.record(type: F_RDLCK, start: byte, length: 1)
            _ = fcntl(entry.descriptor, F_SETLK, &record)
        }
    }

    /// The processes (other than this one) that hold `database`, one per role (a restore
    /// under way alone, when there is one), then those that hold SQLite's own lock of its
    /// `-shm` (every connection to a database in WAL mode holds a read lock on its byte 128)
    /// and are not named yet: another program (the `sqlite3` shell), or a scrollback from
    /// before this lock; said with the name the system gives the process.
    public static func holders(of database: String) -> [String] {
        let path = key(database)
        var found: [String] = []
        var pids: Set<Int32> = []
        let opened = openLockFile(lockPath(of: path), create: false)
        if let problem = opened.problem { return [problem] }
        if let descriptor = opened.descriptor {
            defer { close(descriptor) }
            let registered = holders(descriptor)
            if case .restore(let pid)? = registered.first { return ["another restore (pid \(pid))"] }
            for case .holder(let holder) in registered {
                found.append(holder.description)
                pids.insert(holder.pid)
            }
        }
        for pid in sqliteHolders(path) where !pids.contains(pid) {
            found.append("another program (pid \(pid), \(processName(pid)))")
        }
        return found
    }

    private enum Found {
        case holder(Holder)
        case restore(Int32)
    }

    private static func holders(_ descriptor: Int32) -> [Found] {
        var found: [Found] = []
        for role in Role.allCases {
            for readOnly in [false, true] {
                var record = Self.record(type: F_WRLCK, start: byte(role, readOnly: readOnly), length: 1)
                guard fcntl(descriptor, F_GETLK, &record) == 0, record.l_type != F_UNLCK else { continue }
                // A write lock is a restore's: it holds every byte.
                if record.l_type == F_WRLCK { return [.restore(record.l_pid)] }
                found.append(.holder(Holder(role: role, readOnly: readOnly, pid: record.l_pid)))
            }
        }
        return found
    }

    /// The processes other than this one with a connection to the database in WAL mode: the
    /// holders of a read lock on byte 128 of its `-shm` (SQLite's unix VFS), one at a time.
    static func sqliteHolders(_ database: String) -> [Int32] {
        // Never closed: closing a descriptor of the -shm would drop the locks this process's
        // own connections hold in it (`HeldOpen`).
        guard let descriptor = HeldOpen.descriptor(database + "-shm") else { return [] }
        var record = Self.record(type: F_WRLCK, start: 128, length: 1)
        guard fcntl(descriptor, F_GETLK, &record) == 0, record.l_type != F_UNLCK else { return [] }
        return [record.l_pid]
    }

    /// What the system calls process `pid` (`/proc/PID/comm`), or "unknown".
    static func processName(_ pid: Int32) -> String {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8) else { return "unknown" }
        let name = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return name.isEmpty ? "unknown" : String(name.prefix(32))
    }

    /// Held by `restore` while it replaces the database: nobody else holds it, and nobody
    /// opens it until `release`.
    public final class Exclusive {
        let descriptor: Int32

        init(descriptor: Int32, path: String) {
            self.descriptor = descriptor
            self.path = path
        }

        let path: String

        public func release() {
            var record = DatabaseUsers.record(type: F_UNLCK, start: 0, length: DatabaseUsers.span)
            _ = fcntl(descriptor, F_SETLK, &record)
            // Closing any descriptor of the file drops every lock this process holds on it:
            // those it registered are taken again.
            close(descriptor)
            DatabaseUsers.shared.reassert(path)
        }

        deinit {}
    }

    /// Takes every byte for writing, or throws `RestoreError.inUse` naming who holds it.
    /// Also refused while a SQLite connection of another program holds it (`sqliteHolders`).
    public static func takeExclusive(_ database: String) throws -> Exclusive {
        let opened = openLockFile(lockPath(of: key(database)), create: true)
        guard let descriptor = opened.descriptor else {
            throw RestoreError.lockFile(opened.problem ?? "\(lockPath(of: key(database))) cannot be made")
        }
        var record = Self.record(type: F_WRLCK, start: 0, length: span)
        guard fcntl(descriptor, F_SETLK, &record) == 0 else {
            close(descriptor)
            throw RestoreError.inUse(path: database, by: holders(of: database))
        }
        let others = sqliteHolders(key(database))
        guard others.isEmpty else {
            record = Self.record(type: F_UNLCK, start: 0, length: span)
            _ = fcntl(descriptor, F_SETLK, &record)
            close(descriptor)
            DatabaseUsers.shared.reassert(database)
            throw RestoreError.inUse(path: database, by: others.map { "another program (pid \($0), \(processName($0)))" })
        }
        return Exclusive(descriptor: descriptor, path: key(database))
    }

    static func record(type: Int32, start: Int, length: Int) -> flock {
        var record = flock()
        record.l_type = Int16(truncatingIfNeeded: type)
        record.l_whence = Int16(truncatingIfNeeded: SEEK_SET)
        record.l_start = off_t(start)
        record.l_len = off_t(length)
        return record
    }
}
