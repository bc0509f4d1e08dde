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
    /// Whether a kernel copy did not pass the check and was made again by SQLite.
    public var redone = false
}

/// Why a backup was not made; each says what to do.
public enum BackupError: Error, Equatable, UserFacingError, CustomStringConvertible {
    case exists(String)
    case sameFile(String)
    case folder(String, reason: String)
    case failedCheck(path: String, problems: [String])
    case interrupted
    case notAFile(String)
    case cannotReplace(String, reason: String)

    public var description: String {
        switch self {
        case .exists(let path): "\(path) exists; give another name, or --force to replace it"
        case .sameFile(let path): "\(path) is the database itself (or its -wal or -shm); give the backup another name"
        case .folder(let path, let reason): "cannot write a backup beside \(path) (\(reason)); give a path in a folder you may write"
        case .failedCheck(let path, let problems):
            "the copy did not pass the check (\(problems.prefix(2).joined(separator: "; "))); nothing was written to \(path); run `scrollback check` on the database"
        case .interrupted: "Interrupted: no backup was written (the partial copy was removed)"
        case .notAFile(let path): "\(path) is not a regular file (a folder, a symlink or a device); --force replaces only a file: give another name"
        case .cannotReplace(let path, let reason):
            "cannot replace \(path) (\(reason)): the file itself may not be changed (chattr +i?); give another name, nothing was written"
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
            guard (status.st_mode & S_IFMT) == S_IFREG else { throw BackupError.notAFile(path) }
        }
        let folder = (target as NSString).deletingLastPathComponent
        let name = (target as NSString).lastPathComponent
        Self.removeAbandonedCopies(of: name, in: folder)
        var template = Array((folder + "/." + name + ".partial-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.map { mkstemp($0) } ?? -1 }
        // Not inherited by a program started meanwhile (nor, with it, a lock on it).
        if descriptor >= 0 { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
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
        var redone = false
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
            // A kernel copy that does not pass: made again page by page, by SQLite. (One
            // failed 3 times in 40 while reads here closed descriptors of the database's
            // files, which dropped the read transaction's lock: `HeldOpen`. Kept for a
            // program beside it that breaks SQLite's rules.)
            for suffix in ["-journal", "-wal", "-shm"] { unlink(partial + suffix) }
            guard truncate(partial, 0) == 0 else { throw StorageError.cannotOpen(path: partial, reason: String(cString: strerror(errno)).lowercased()) }
            byFiles = false
            redone = true
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
            guard rename(partial, target) == 0 else {
                let reason = String(cString: strerror(errno)).lowercased()
                // The folder was written (the partial copy is in it): it is the file that refuses.
                if errno == EPERM { throw BackupError.cannotReplace(path, reason: reason) }
                throw BackupError.folder(path, reason: reason)
            }
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
            copySeconds: copied.timeIntervalSince(started), checkSeconds: Date().timeIntervalSince(copied), byFiles: byFiles, redone: redone)
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
        // Through a descriptor never closed (`HeldOpen`): closing one would drop the locks
        // of this process's connections in the -shm, the read transaction's among them.
        guard let bytes = HeldOpen.read(path + "-shm", at: 0, count: 136), bytes.count == 136 else { return nil }
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
        guard database.path != ":memory:" else { return false }
        // SQLite's own name for the file (a symlink's target): its -wal and -shm are beside it.
        let path = database.fileName
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
                // Every file is read through a descriptor never closed (`HeldOpen`): closing
                // one drops the locks this transaction holds, and a checkpoint would then
                // write into the file while it is copied.
                guard let main = HeldOpen.descriptor(path) else { return false }
                var frames = 0
                var log: Int32?
                if wal {
                    guard let after = walIndex(path), let before, after == before, after.pageSize == pageSize else { return nil }
                    frames = after.lastFrame > after.backfilled ? after.lastFrame : 0
                    if frames > 0 {
                        // The -wal's header must be of the generation the index describes.
                        guard let descriptor = HeldOpen.descriptor(path + "-wal") else { return false }
                        guard let salts = HeldOpen.read(path + "-wal", at: 16, count: 8), salts == after.salts else { return nil }
                        guard let size = HeldOpen.size(descriptor), size >= Int64(32 + frames * (24 + pageSize)) else { return false }
                        log = descriptor
                    }
                }
                // Pieces of a step's pages, at least 64 MiB by default (fewer calls; Ctrl-C
                // and progress are looked at between them).
                let step = Int64(max(pagesPerStep, 1)) * Int64(pageSize) * (pagesPerStep == Store.backupStep ? 4 : 1)
                guard let mainBytes = HeldOpen.size(main) else { return false }
                let walBytes = frames > 0 ? Int64(32 + frames * (24 + pageSize)) : 0
                let total = Int((mainBytes + walBytes + Int64(pageSize) - 1) / Int64(pageSize))
                var done: Int64 = 0
                let moved: (Int64) -> Void = { count in
                    done += count
                    progress?(Int(done / Int64(pageSize)), total)
                }
                // The file may grow shorter meanwhile (a checkpoint that truncated it): what
                // is missing is in the copied frames.
                try copyOut(main, to: partial, length: mainBytes, step: step, shouldStop: shouldStop, moved: moved)
                if let log { try copyOut(log, to: partial + "-wal", length: walBytes, step: step, shouldStop: shouldStop, moved: moved) }
                progress?(total, total)
                return true
            }
            if let outcome { return outcome }
        }
        return false
    }

    /// Up to `length` bytes of the file `source` reads, from its start, into the new file
    /// `target` (fewer when it ends sooner), by the kernel where it can (`copy_file_range`),
    /// else through a buffer. `source`'s own position is not moved.
    static func copyOut(
        _ source: Int32, to target: String, length: Int64, step: Int64, shouldStop: () -> Bool, moved: (Int64) -> Void = { _ in }
    ) throws {
        _ = posix_fadvise(source, 0, 0, POSIX_FADV_SEQUENTIAL)
        let output = Glibc.open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard output >= 0 else { throw StorageError.cannotOpen(path: target, reason: String(cString: strerror(errno)).lowercased()) }
        defer { Glibc.close(output) }
        var offset: Int64 = 0
        while offset < length {
            if shouldStop() { throw BackupError.interrupted }
            let piece = min(step, length - offset)
            var copied = scrollback_copy_file_range_at(source, &offset, output, piece)
            if copied < 0 && (errno == ENOSYS || errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP) {
                copied = Self.copyPiece(source, at: &offset, output, piece)
            }
            if copied < 0 {
                if errno == EINTR { continue }
                if errno == ENOSPC || errno == EDQUOT { throw StorageError.diskFull(path: target) }
                throw StorageError.cannotOpen(path: target, reason: String(cString: strerror(errno)).lowercased())
            }
            if copied == 0 { break }
            moved(copied)
        }
    }

    /// `length` bytes of `source` from `offset` (advanced) to `target`'s position, through a
    /// buffer: where the kernel cannot copy between them.
    private static func copyPiece(_ source: Int32, at offset: inout Int64, _ target: Int32, _ length: Int64) -> Int64 {
        var buffer = [UInt8](repeating: 0, count: Int(min(length, 1 << 20)))
        let read = buffer.withUnsafeMutableBytes { pread(source, $0.baseAddress, $0.count, off_t(offset)) }
        guard read > 0 else { return Int64(read) }
        var written = 0
        while written < read {
            let wrote = buffer.withUnsafeBytes { Glibc.write(target, $0.baseAddress.map { $0 + written }, read - written) }
            guard wrote > 0 else { return -1 }
            written += wrote
        }
        offset += Int64(read)
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
