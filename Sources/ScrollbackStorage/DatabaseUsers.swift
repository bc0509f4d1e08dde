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

    public static func lockPath(of database: String) -> String { database + ".in-use" }

    static func byte(_ role: Role, readOnly: Bool) -> Int { role.rawValue * 2 + (readOnly ? 1 : 0) }

    private static func key(_ database: String) -> String {
        URL(fileURLWithPath: database).standardizedFileURL.path
    }

    /// Notes that this process has `database` open as `role`. Waits (up to `patience`
    /// seconds) while a restore replaces it; throws `RestoreError.underWay` after.
    public func register(_ database: String, as role: Role, readOnly: Bool, patience: Double = 30) throws {
        guard database != ":memory:" else { return }
        // A reader of a file that is not there creates nothing (it fails next).
        if readOnly && !FileManager.default.fileExists(atPath: database) { return }
        let key = Self.key(database)
        lock.lock()
        defer { lock.unlock() }
        let byte = Self.byte(role, readOnly: readOnly)
        if let entry = registered[key], entry.bytes.contains(byte) { return }
        let descriptor: Int32
        if let entry = registered[key] {
            descriptor = entry.descriptor
        } else {
            let path = Self.lockPath(of: key)
            var opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            if opened < 0 { opened = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
            guard opened >= 0 else { return }
            descriptor = opened
            registered[key] = (descriptor, [])
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

    /// The processes (other than this one) that hold `database`, one per role.
    public static func holders(of database: String) -> [Holder] {
        let descriptor = open(lockPath(of: key(database)), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return [] }
        defer { close(descriptor) }
        return holders(descriptor)
    }

    private static func holders(_ descriptor: Int32) -> [Holder] {
        var found: [Holder] = []
        for role in Role.allCases {
            for readOnly in [false, true] {
                var record = Self.record(type: F_WRLCK, start: byte(role, readOnly: readOnly), length: 1)
                guard fcntl(descriptor, F_GETLK, &record) == 0, record.l_type != F_UNLCK else { continue }
                found.append(Holder(role: role, readOnly: readOnly, pid: record.l_pid))
            }
        }
        return found
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
    public static func takeExclusive(_ database: String) throws -> Exclusive {
        let path = lockPath(of: key(database))
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw RestoreError.folder(database, reason: String(cString: strerror(errno)).lowercased())
        }
        var record = Self.record(type: F_WRLCK, start: 0, length: span)
        guard fcntl(descriptor, F_SETLK, &record) == 0 else {
            let found = holders(descriptor)
            close(descriptor)
            throw RestoreError.inUse(path: database, by: found.map(\.description))
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
