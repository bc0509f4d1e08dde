import CSQLite
import Foundation
import ScrollbackModel

/// What `backup` made.
public struct BackupReport: Sendable, Equatable {
    public var path: String
    public var bytes: Int64
    public var conversations: Int
    /// What the check of the copy could not do (a deep check needs a writable file).
    public var skipped: [String]
    /// How long the copy of the pages took, and the check, the journal change and the sync
    /// after it.
    public var copySeconds: Double = 0
    public var checkSeconds: Double = 0
    /// Whether the files were copied by the kernel (`copyFiles`), not page by page by
    /// SQLite's online backup.
    public var byFiles = false
}

/// Why a backup was not made; each says what to do.
public enum BackupError: Error, Equatable, UserFacingError, CustomStringConvertible {
    case exists(String)
    case sameFile(String)
    case folder(String, reason: String)
    case failedCheck(path: String, problems: [String])
    case interrupted

    public var description: String {
        switch self {
        case .exists(let path): "\(path) exists; give another name, or --force to replace it"
        case .sameFile(let path): "\(path) is the database itself (or its -wal or -shm); give the backup another name"
        case .folder(let path, let reason): "cannot write a backup beside \(path) (\(reason)); give a path in a folder you may write"
        case .failedCheck(let path, let problems):
            "the copy did not pass the check (\(problems.prefix(2).joined(separator: "; "))); nothing was written to \(path); run `scrollback check` on the database"
        case .interrupted: "Interrupted: no backup was written (the partial copy was removed)"
        }
    }

    public var userLine: String { description }
}

extension Store {
    /// Pages copied a step: progress is told after each.
    public static let backupStep: Int32 = 4_096

    /// Writes a consistent copy of the database to `path`, while others may write it (the
    /// browser, an import, a sync): SQLite's online backup, every step inside one read
    /// transaction of this connection, so that the copy is the database as it was when the
    /// backup began and a writer beside it never makes it start again. The copy is made
    /// beside `path` under a hidden name, made a single file (no `-wal`), synced, checked
    /// (SQLite's integrity check and scrollback's own `check`), and only then moved to
    /// `path`, which it never replaces unless `force`. A failed or interrupted backup leaves
    /// nothing behind.
    /// - Parameter progress: pages done and in all, after each step.
    /// - Parameter shouldStop: asked between steps; true ends it with `BackupError.interrupted`.
    public func backup(
        to path: String, force: Bool, progress: ((Int, Int) -> Void)? = nil, shouldStop: () -> Bool = { false },
        pagesPerStep: Int32 = Store.backupStep
    ) throws -> BackupReport {
        let target = URL(fileURLWithPath: path).standardizedFileURL.path
        let own = URL(fileURLWithPath: self.path).resolvingSymlinksInPath().path
        let resolved = URL(fileURLWithPath: target).resolvingSymlinksInPath().path
        if [own, own + "-wal", own + "-shm", own + "-journal"].contains(resolved) { throw BackupError.sameFile(path) }
        var status = stat()
        if lstat(target, &status) == 0 {
            guard force else { throw BackupError.exists(path) }
            guard (status.st_mode & S_IFMT) == S_IFREG else { throw BackupError.exists(path + " (not a file)") }
        }
        let folder = (target as NSString).deletingLastPathComponent
        let name = (target as NSString).lastPathComponent
        Self.removeAbandonedCopies(of: name, in: folder)
        var template = Array((folder + "/." + name + ".partial-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.map { mkstemp($0) } ?? -1 }
        guard descriptor >= 0 else { throw BackupError.folder(path, reason: String(cString: strerror(errno)).lowercased()) }
        // Held while this backup lives: a partial copy whose lock is free was left by a
        // backup that was killed, and the next one removes it.
        flock(descriptor, LOCK_EX)
        defer { Glibc.close(descriptor) }
        let partial = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var kept = false
        defer {
            if !kept {
                for suffix in ["", "-journal", "-wal", "-shm"] { unlink(partial + suffix) }
            }
        }
        let started = Date()
        var byFiles = try Self.copyFiles(of: database, into: partial, pagesPerStep: pagesPerStep, progress: progress, shouldStop: shouldStop)
        if !byFiles {
            try Self.copyPages(of: database, into: partial, pagesPerStep: pagesPerStep, progress: progress, shouldStop: shouldStop)
        }
        var copied = Date()
        // Checked whole (the deep check of the search indexes too: nobody else has the copy
        // open), then made one file, then synced: a crash never leaves a torn file there.
        func checked() throws -> (CheckReport, Int) {
            do {
                // What the copied -wal holds goes into the file first.
                if FileManager.default.fileExists(atPath: partial + "-wal") { try Self.makeSingleFile(partial) }
                let copy = try Store.open(path: partial, createFolder: false, migrator: migrator)
                return (try copy.check(), try copy.conversations.count(filter: .none))
            } catch StorageError.diskFull {
                throw StorageError.diskFull(path: folder)
            } catch {
                throw BackupError.failedCheck(path: path, problems: ["the copy does not open: \((error as? any UserFacingError)?.userLine ?? "\(error)")"])
            }
        }
        var (report, conversations) = try {
            do { return try checked() } catch let error as BackupError where byFiles { return (CheckReport(problems: ["\(error)"], skipped: []), 0) }
        }()
        if byFiles && !report.isHealthy {
            // A kernel copy that does not pass (seen under a writer that checkpoints after
            // every commit; the cause is not found yet): made again page by page, by SQLite.
            for suffix in ["-journal", "-wal", "-shm"] { unlink(partial + suffix) }
            guard truncate(partial, 0) == 0 else { throw StorageError.cannotOpen(path: partial, reason: String(cString: strerror(errno)).lowercased()) }
            byFiles = false
            try Self.copyPages(of: database, into: partial, pagesPerStep: pagesPerStep, progress: progress, shouldStop: shouldStop)
            copied = Date()
            (report, conversations) = try checked()
        }
        guard report.isHealthy else { throw BackupError.failedCheck(path: path, problems: report.problems) }
        try Self.makeSingleFile(partial)
        try Self.syncToDisk(partial)
        let bytes: Int64 = lstat(partial, &status) == 0 ? Int64(status.st_size) : 0
        if shouldStop() { throw BackupError.interrupted }
        // Named: over the old file only with force (rename); else a hard link, which fails
        // when the name is taken meanwhile.
        if force {
            guard rename(partial, target) == 0 else { throw BackupError.folder(path, reason: String(cString: strerror(errno)).lowercased()) }
        } else {
            guard link(partial, target) == 0 else {
                if errno == EEXIST { throw BackupError.exists(path) }
                throw BackupError.folder(path, reason: String(cString: strerror(errno)).lowercased())
            }
            unlink(partial)
        }
        kept = true
        let folderHandle = Glibc.open(folder, O_RDONLY | O_DIRECTORY)
        if folderHandle >= 0 {
            fsync(folderHandle)
            Glibc.close(folderHandle)
        }
        return BackupReport(
            path: path, bytes: bytes, conversations: conversations, skipped: report.skipped,
            copySeconds: copied.timeIntervalSince(started), checkSeconds: Date().timeIntervalSince(copied), byFiles: byFiles)
    }

    /// Removes the hidden partial copies of a backup to `name` that no running backup holds
    /// (a `kill -9` leaves its copy; its lock went with it).
    /// One younger than five seconds is left alone: it may be another's, made a moment ago and
    /// not locked yet; and so is `sparing` (a file given to read, whatever its name).
    static func removeAbandonedCopies(of name: String, in folder: String, kind: String = "partial", sparing: String? = nil) {
        let prefix = "." + name + "." + kind + "-"
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        var spared = stat()
        let hasSpared = sparing.map { stat($0, &spared) == 0 } ?? false
        let now = time(nil)
        for entry in entries where entry.hasPrefix(prefix) && !entry.hasSuffix("-journal") && !entry.hasSuffix("-wal") && !entry.hasSuffix("-shm") {
            let path = folder + "/" + entry
            var status = stat()
            guard lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { continue }
            if hasSpared && status.st_dev == spared.st_dev && status.st_ino == spared.st_ino { continue }
            guard now - status.st_mtim.tv_sec > 5 else { continue }
            let handle = Glibc.open(path, O_RDONLY | O_NOFOLLOW)
            guard handle >= 0 else { continue }
            defer { Glibc.close(handle) }
            guard flock(handle, LOCK_EX | LOCK_NB) == 0 else { continue }
            for suffix in ["", "-journal", "-wal", "-shm"] { unlink(path + suffix) }
        }
    }

    /// What the wal-index (the `-shm`) says of a database in WAL mode, read as a reader
    /// reads it: its two copies of the header alike.
    struct WALIndex: Equatable {
        var change: UInt32
        var pageSize: Int
        var lastFrame: Int
        var salts: [UInt8]
        var backfilled: Int
    }

    static func walIndex(_ path: String) -> WALIndex? {
        let descriptor = Glibc.open(path + "-shm", O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return nil }
        defer { Glibc.close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 136)
        guard bytes.withUnsafeMutableBytes({ pread(descriptor, $0.baseAddress, 136, 0) }) == 136 else { return nil }
        guard bytes[0..<48] == bytes[48..<96], bytes[12] == 1 else { return nil }
        func u32(_ offset: Int) -> UInt32 {
            bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
        }
        let size = Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 14, as: UInt16.self) })
        let pageSize = size == 1 ? 65_536 : size
        guard pageSize >= 512, pageSize <= 65_536, pageSize & (pageSize - 1) == 0 else { return nil }
        return WALIndex(change: u32(8), pageSize: pageSize, lastFrame: Int(u32(16)), salts: Array(bytes[32..<40]), backfilled: Int(u32(96)))
    }

    /// The database's file, and the part of its `-wal` that its snapshot reads, copied by the
    /// kernel into `partial` (and `partial-wal`), inside one read transaction: while it is
    /// held, no writer restarts the `-wal`, and a checkpoint writes into the file only the
    /// frames that transaction reads, which the copied frames then give again, so that the
    /// copy opens as the database as it was when the transaction began. The frames are those
    /// the wal-index named, read the same before and after the transaction began (else it
    /// begins again). False, with nothing copied, when the files cannot be copied so (no
    /// wal-index, another page size, a `-wal` shorter than it says): the pages are copied by
    /// SQLite's online backup then (`copyPages`). A database in another journal mode is
    /// copied whole under the read transaction's shared lock, which keeps every writer out.
    static func copyFiles(
        of database: Database, into partial: String, pagesPerStep: Int32, progress: ((Int, Int) -> Void)?, shouldStop: () -> Bool
    ) throws -> Bool {
        let path = database.path
        guard path != ":memory:" else { return false }
        let mode = try database.queryFirst("PRAGMA journal_mode") { $0.text(0) }?.lowercased() ?? ""
        let wal = mode == "wal"
        for _ in 0..<20 {
            let outcome: Bool? = try database.read {
                let before = wal ? walIndex(path) : nil
                if wal && before == nil {
                    // No wal-index to read: the pages, then. One being written: again.
                    return FileManager.default.fileExists(atPath: path + "-shm") ? nil : false
                }
                // The read transaction begins here: its snapshot is the one copied.
                _ = try database.scalarInt("SELECT count(*) FROM sqlite_schema")
                let pageSize = Int(try database.scalarInt("PRAGMA page_size"))
                var frames = 0
                if wal {
                    guard let after = walIndex(path), let before, after == before, after.pageSize == pageSize else { return nil }
                    frames = after.lastFrame > after.backfilled ? after.lastFrame : 0
                    if frames > 0 {
                        // The -wal's header must be of the generation the index describes.
                        let header = Glibc.open(path + "-wal", O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
                        guard header >= 0 else { return false }
                        defer { Glibc.close(header) }
                        var salts = [UInt8](repeating: 0, count: 8)
                        guard salts.withUnsafeMutableBytes({ pread(header, $0.baseAddress, 8, 16) }) == 8, salts == after.salts else { return nil }
                        var status = stat()
                        guard fstat(header, &status) == 0, Int64(status.st_size) >= Int64(32 + frames * (24 + pageSize)) else { return false }
                    }
                }
                // Pieces of a step's pages, at least 64 MiB by default (fewer calls; Ctrl-C
                // and progress are looked at between them).
                let step = Int64(max(pagesPerStep, 1)) * Int64(pageSize) * (pagesPerStep == Store.backupStep ? 4 : 1)
                var status = stat()
                guard stat(path, &status) == 0 else { return false }
                let mainBytes = Int64(status.st_size)
                let walBytes = frames > 0 ? Int64(32 + frames * (24 + pageSize)) : 0
                let total = Int((mainBytes + walBytes + Int64(pageSize) - 1) / Int64(pageSize))
                var done: Int64 = 0
                func copy(_ from: String, _ to: String, _ length: Int64) throws {
                    let source = Glibc.open(from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
                    guard source >= 0 else { throw StorageError.cannotOpen(path: from, reason: String(cString: strerror(errno)).lowercased()) }
                    defer { Glibc.close(source) }
                    _ = posix_fadvise(source, 0, 0, POSIX_FADV_SEQUENTIAL)
                    let target = Glibc.open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
                    guard target >= 0 else { throw StorageError.cannotOpen(path: to, reason: String(cString: strerror(errno)).lowercased()) }
                    defer { Glibc.close(target) }
                    var left = length
                    while left > 0 {
                        if shouldStop() { throw BackupError.interrupted }
                        let piece = min(step, left)
                        var moved = scrollback_copy_file_range(source, target, piece)
                        if moved < 0 && (errno == ENOSYS || errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP) {
                            moved = Self.copyPiece(source, target, piece)
                        }
                        if moved < 0 {
                            if errno == EINTR { continue }
                            if errno == ENOSPC || errno == EDQUOT { throw StorageError.diskFull(path: to) }
                            throw StorageError.cannotOpen(path: to, reason: String(cString: strerror(errno)).lowercased())
                        }
                        // The file grew shorter meanwhile (a checkpoint that truncated it):
                        // what is missing is in the copied frames.
                        if moved == 0 { break }
                        left -= moved
                        done += moved
                        progress?(Int(done / Int64(pageSize)), total)
                    }
                }
                try copy(path, partial, mainBytes)
                if walBytes > 0 { try copy(path + "-wal", partial + "-wal", walBytes) }
                progress?(total, total)
                return true
            }
            if let outcome { return outcome }
        }
        return false
    }

    /// `length` bytes from one file's position to another's, through a buffer: where the
    /// kernel cannot copy between them.
    private static func copyPiece(_ source: Int32, _ target: Int32, _ length: Int64) -> Int64 {
        var buffer = [UInt8](repeating: 0, count: Int(min(length, 1 << 20)))
        let read = buffer.withUnsafeMutableBytes { Glibc.read(source, $0.baseAddress, $0.count) }
        guard read > 0 else { return Int64(read) }
        var written = 0
        while written < read {
            let wrote = buffer.withUnsafeBytes { Glibc.write(target, $0.baseAddress.map { $0 + written }, read - written) }
            guard wrote > 0 else { return -1 }
            written += wrote
        }
        return Int64(read)
    }

    /// The pages of `database` into the new file `partial`, as one read transaction sees
    /// them.
    static func copyPages(
        of database: Database, into partial: String, pagesPerStep: Int32, progress: ((Int, Int) -> Void)?, shouldStop: () -> Bool
    ) throws {
        var destination: OpaquePointer?
        let opened = sqlite3_open_v2(partial, &destination, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        guard opened == SQLITE_OK, let destination else {
            sqlite3_close(destination)
            throw StorageError.cannotOpen(path: partial, reason: "SQLite could not open it (\(opened))")
        }
        defer { sqlite3_close(destination) }
        try database.read {
            // The read transaction begins here: every step reads this state.
            _ = try database.scalarInt("SELECT count(*) FROM sqlite_schema")
            guard let backup = sqlite3_backup_init(destination, "main", database.handle, "main") else {
                throw StorageError.cannotOpen(path: partial, reason: String(cString: sqlite3_errmsg(destination)))
            }
            var code: Int32 = SQLITE_OK
            while true {
                if shouldStop() {
                    sqlite3_backup_finish(backup)
                    throw BackupError.interrupted
                }
                code = sqlite3_backup_step(backup, max(pagesPerStep, 1))
                let total = Int(sqlite3_backup_pagecount(backup))
                progress?(total - Int(sqlite3_backup_remaining(backup)), total)
                if code == SQLITE_DONE { break }
                if code == SQLITE_OK { continue }
                if code == SQLITE_BUSY || code == SQLITE_LOCKED {
                    usleep(10_000)
                    continue
                }
                break
            }
            let finished = sqlite3_backup_finish(backup)
            guard code == SQLITE_DONE, finished == SQLITE_OK else {
                let failed = code == SQLITE_DONE ? finished : code
                if failed == SQLITE_FULL { throw StorageError.diskFull(path: partial) }
                throw StorageError.cannotOpen(path: partial, reason: String(cString: sqlite3_errmsg(destination)))
            }
        }
    }

    /// The file at `path` on the disk (`fsync`); a failure is a full disk, as it most often is.
    static func syncToDisk(_ path: String) throws {
        let handle = Glibc.open(path, O_RDONLY)
        guard handle >= 0, fsync(handle) == 0 else {
            if handle >= 0 { Glibc.close(handle) }
            throw StorageError.diskFull(path: path)
        }
        Glibc.close(handle)
    }

    /// The copy as one file (a rollback journal, no `-wal`): it took the source's WAL mode
    /// with its header; a backup is read by anything, a read-only mount included. On a new
    /// connection: the one that wrote the pages still takes the file for what it was.
    static func makeSingleFile(_ path: String) throws {
        var connection: OpaquePointer?
        let opened = sqlite3_open_v2(path, &connection, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        defer { sqlite3_close(connection) }
        guard opened == SQLITE_OK, let connection else { throw StorageError.cannotOpen(path: path, reason: "SQLite could not open it (\(opened))") }
        var error: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(connection, "PRAGMA journal_mode = DELETE", nil, nil, &error)
        sqlite3_free(error)
        if code == SQLITE_FULL { throw StorageError.diskFull(path: path) }
        guard code == SQLITE_OK else { throw StorageError.cannotOpen(path: path, reason: "its journal mode could not be set (\(code))") }
    }
}
