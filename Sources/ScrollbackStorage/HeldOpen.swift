import Foundation

/// Descriptors for reading a database's file, `-wal` or `-shm` outside SQLite: opened once
/// and never closed.
///
/// POSIX drops every lock a process holds on a file when the process closes any descriptor
/// of that file, whichever descriptor took them. SQLite's locks are such locks: its
/// connections' read locks and the lock that says a connection is there are on the `-shm`,
/// and a shared lock is on the database file. A read here that opened and closed a
/// descriptor would silently take them away from this process's own connections: `backup`
/// once read the wal-index while its read transaction was open, lost that transaction's
/// lock, and a checkpoint by another process wrote into the file it was copying (3 copies
/// in 40 did not pass the check). So every such read goes through here.
///
/// Descriptors are kept by file (device and inode): as many as files were read, bounded
/// (`limit`); past it, `descriptor` is nil and the caller does without (SQLite reads for it).
enum HeldOpen {
    /// How many files one process may hold this way.
    static let limit = 64

    private struct Key: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    private final class Table: @unchecked Sendable {
        let lock = NSLock()
        var descriptors: [Key: Int32] = [:]
    }

    private static let table = Table()

    /// A read-only descriptor of the regular file at `path` (a symlink is followed only when
    /// `following`), or nil with `errno` set. Never close it.
    static func descriptor(_ path: String, following: Bool = false) -> Int32? {
        var status = stat()
        let found = following ? stat(path, &status) : lstat(path, &status)
        guard found == 0 else { return nil }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            errno = EINVAL
            return nil
        }
        let key = Key(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        table.lock.lock()
        defer { table.lock.unlock() }
        if let held = table.descriptors[key] { return held }
        guard table.descriptors.count < limit else {
            errno = EMFILE
            return nil
        }
        let opened = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (following ? 0 : O_NOFOLLOW))
        guard opened >= 0 else { return nil }
        var openedStatus = stat()
        guard fstat(opened, &openedStatus) == 0 else { return nil }
        // Another file took the name between the look and the open: held under its own key
        // (closing it would drop locks too), and the caller is given that one.
        let openedKey = Key(device: UInt64(openedStatus.st_dev), inode: UInt64(openedStatus.st_ino))
        if let held = table.descriptors[openedKey] { return held }
        table.descriptors[openedKey] = opened
        guard (openedStatus.st_mode & S_IFMT) == S_IFREG else {
            errno = EINVAL
            return nil
        }
        return opened
    }

    /// Up to `count` bytes of the file at `path` from `offset` (fewer at its end), or nil.
    static func read(_ path: String, at offset: Int64, count: Int, following: Bool = false) -> [UInt8]? {
        guard let descriptor = descriptor(path, following: following) else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(offset)) }
        guard got >= 0 else { return nil }
        return Array(bytes.prefix(got))
    }

    /// The size of the file `descriptor` reads now.
    static func size(_ descriptor: Int32) -> Int64? {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        return Int64(status.st_size)
    }
}
