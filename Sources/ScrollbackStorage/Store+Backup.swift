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
        try Self.copyPages(of: database, into: partial, pagesPerStep: pagesPerStep, progress: progress, shouldStop: shouldStop)
        let copied = Date()
        // Checked whole (the deep check of the search indexes too: nobody else has the copy
        // open), then made one file, then synced: a crash never leaves a torn file there.
        let report: CheckReport
        let conversations: Int
        do {
            let copy = try Store.open(path: partial, createFolder: false, migrator: migrator)
            report = try copy.check()
            conversations = try copy.conversations.count(filter: .none)
        } catch StorageError.diskFull {
            throw StorageError.diskFull(path: folder)
        } catch {
            throw BackupError.failedCheck(path: path, problems: ["the copy does not open: \((error as? any UserFacingError)?.userLine ?? "\(error)")"])
        }
        guard report.isHealthy else { throw BackupError.failedCheck(path: path, problems: report.problems) }
        try Self.makeSingleFile(partial)
        let handle = Glibc.open(partial, O_RDONLY)
        guard handle >= 0, fsync(handle) == 0 else {
            if handle >= 0 { Glibc.close(handle) }
            throw StorageError.diskFull(path: partial)
        }
        Glibc.close(handle)
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
            copySeconds: copied.timeIntervalSince(started), checkSeconds: Date().timeIntervalSince(copied))
    }

    /// Removes the hidden partial copies of a backup to `name` that no running backup holds
    /// (a `kill -9` leaves its copy; its lock went with it).
    /// One younger than a minute is left alone: it may be another's, made a moment ago and
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
            guard now - status.st_mtim.tv_sec > 60 else { continue }
            let handle = Glibc.open(path, O_RDONLY | O_NOFOLLOW)
            guard handle >= 0 else { continue }
            defer { Glibc.close(handle) }
            guard flock(handle, LOCK_EX | LOCK_NB) == 0 else { continue }
            for suffix in ["", "-journal", "-wal", "-shm"] { unlink(path + suffix) }
        }
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
