import CSQLite
import Foundation
import ScrollbackModel

/// What a restore found of one side: the backup, or the database it replaces.
public struct RestoreSide: Sendable, Equatable {
    public var path: String
    public var schemaVersion: Int
    public var conversations: Int
    public var newest: Timestamp?
    /// The machine it syncs as (nil: sync off), the next change's number, the last sent.
    public var syncMachine: String?
    public var syncNextSeq: Int64 = 1
    public var syncSentThrough: Int64 = 0
    /// Changes made there and not sent.
    public var unsent: Int = 0
}

/// What `restore` is about to do: asked before anything is written.
public struct RestorePlan: Sendable, Equatable {
    public var source: RestoreSide
    /// The database it replaces; nil when there is none yet.
    public var current: RestoreSide?
    /// Why the current database could not be read (it is kept all the same).
    public var currentProblem: String?
    /// Changes made in the current database since the backup that were never sent: the
    /// restored one lacks them (the kept copy holds them). Nil when sync is off there.
    public var lostChanges: Int?
}

/// What `restore` did.
public struct RestoreReport: Sendable, Equatable {
    public var plan: RestorePlan
    /// Where the database it replaced is kept; nil when there was none.
    public var kept: String?
    /// The schema the backup had, when it was upgraded.
    public var upgradedFrom: Int?
    /// The machine the restored database syncs as now, the one it was, and how many of its
    /// changes it sends again (see `Store.continueAsNewMachine`).
    public var syncMachine: String?
    public var previousMachine: String?
    public var resent: Int = 0
}

/// Why a restore was not made; each says what to do. Nothing was changed.
public enum RestoreError: Error, Equatable, UserFacingError, CustomStringConvertible {
    case missing(String)
    case notAFile(String)
    case sameFile(String)
    case empty(String)
    case foreign(path: String, reason: String)
    case newer(path: String, found: Int, known: Int)
    case damaged(path: String, problems: [String])
    case inUse(path: String, by: [String])
    case underWay(path: String)
    case lockFile(String)
    case targetNotAFile(String)
    case folder(String, reason: String)
    case interrupted

    public var description: String {
        switch self {
        case .missing(let path): "no file at \(path); give the path of a backup made by `scrollback backup`"
        case .notAFile(let path): "\(path) is not a regular file; give the path of a backup made by `scrollback backup`"
        case .sameFile(let path): "\(path) is the database itself (or its -wal or -shm); give the path of a backup"
        case .empty(let path): "\(path) is an empty database, not a backup; nothing was changed"
        case .foreign(let path, let reason):
            "\(path) is not a scrollback database (\(reason)); give the path of a backup made by `scrollback backup`"
        case .newer(let path, let found, let known):
            "\(path) was written by a newer scrollback (schema \(found), this one knows \(known)); nothing was changed; upgrade scrollback to restore it"
        case .damaged(let path, let problems):
            "\(path) is damaged (\(problems.prefix(2).joined(separator: "; "))); nothing was changed; restore another backup"
        case .inUse(let path, let holders):
            "\(path) is open in \(holders.isEmpty ? "another scrollback process" : holders.joined(separator: ", ")); nothing was changed; quit it and run restore again"
        case .underWay(let path): "a restore is replacing \(path); try again when it has finished"
        case .lockFile(let problem): "\(problem); nothing was changed"
        case .targetNotAFile(let path):
            "\(path), the database to replace, is not a regular file (a folder, a FIFO?); nothing was changed; give --db the path of a database"
        case .folder(let path, let reason): "cannot write beside \(path) (\(reason)); nothing was changed"
        case .interrupted: "Interrupted: nothing was restored (the partial copy was removed)"
        }
    }

    public var userLine: String { description }
    public var exitStatus: Int32 { self == .interrupted ? 130 : 1 }
}

extension Store {
    /// Reads what a restore of `source` over `target` would do, writing nothing: refuses a
    /// file that is not a scrollback database, is empty, has a newer schema, or is `target`
    /// itself, and a `target` another scrollback process holds open (`DatabaseUsers`).
    public static func planRestore(from source: String, over target: String, migrator: Migrator = .scrollback) throws -> RestorePlan {
        let sourcePath = URL(fileURLWithPath: source).standardizedFileURL.path
        var status = stat()
        guard lstat(sourcePath, &status) == 0 else { throw RestoreError.missing(source) }
        if (status.st_mode & S_IFMT) == S_IFLNK, stat(sourcePath, &status) != 0 { throw RestoreError.missing(source) }
        guard (status.st_mode & S_IFMT) == S_IFREG else { throw RestoreError.notAFile(source) }
        let own = URL(fileURLWithPath: target).standardizedFileURL.resolvingSymlinksInPath().path
        let resolved = URL(fileURLWithPath: sourcePath).resolvingSymlinksInPath().path
        if [own, own + "-wal", own + "-shm", own + "-journal"].contains(resolved) { throw RestoreError.sameFile(source) }
        var sameInode = stat()
        if stat(target, &sameInode) == 0, sameInode.st_dev == status.st_dev, sameInode.st_ino == status.st_ino {
            throw RestoreError.sameFile(source)
        }
        var targetStatus = stat()
        if stat(target, &targetStatus) == 0, (targetStatus.st_mode & S_IFMT) != S_IFREG { throw RestoreError.targetNotAFile(target) }
        let holders = DatabaseUsers.holders(of: target)
        if !holders.isEmpty { throw RestoreError.inUse(path: target, by: holders) }

        let sourceSide: RestoreSide
        do {
            let database = try Database.open(path: sourcePath, access: .readOnly, createFolder: false)
            let version = try migrator.validate(database, forUpgrade: true)
            guard version > 0 else { throw RestoreError.empty(source) }
            sourceSide = try side(of: database, path: source, version: version)
        } catch let error as RestoreError {
            throw error
        } catch StorageError.damaged(_, let detail) {
            throw RestoreError.damaged(path: source, problems: [detail.message])
        } catch StorageError.notAScrollbackDatabase(_, let reason) {
            if reason == StorageError.emptyReason { throw RestoreError.empty(source) }
            throw RestoreError.foreign(path: source, reason: reason)
        } catch StorageError.newerSchema(_, let found, let known) {
            throw RestoreError.newer(path: source, found: found, known: known)
        }
        var plan = RestorePlan(source: sourceSide)
        guard FileManager.default.fileExists(atPath: target) else { return plan }
        do {
            let database = try Database.open(path: target, access: .readOnly, createFolder: false)
            let version = try migrator.validate(database, forUpgrade: true)
            let current = try side(of: database, path: target, version: version)
            plan.current = current
            if current.syncMachine != nil {
                // The changes since the backup: those after its own when it is the same
                // machine, else every unsent one.
                let from = current.syncMachine == sourceSide.syncMachine ? max(sourceSide.syncNextSeq, current.syncSentThrough + 1) : current.syncSentThrough + 1
                plan.lostChanges = Int(try database.scalarInt("SELECT count(*) FROM sync_outbox WHERE seq >= ?", [.integer(from)]))
            }
        } catch {
            plan.currentProblem = (error as? any UserFacingError)?.userLine ?? "\(error)"
        }
        return plan
    }

    private static func side(of database: Database, path: String, version: Int) throws -> RestoreSide {
        try database.read {
            var side = RestoreSide(
                path: path, schemaVersion: version, conversations: Int(try database.scalarInt("SELECT count(*) FROM conversation")),
                newest: try database.queryFirst("SELECT max(updated_at) FROM conversation") { $0.optionalInt64(0) }?.map(Timestamp.init(milliseconds:)))
            // Sync's settings and outbox are read where the schema has them (version 8 on).
            let settings = SettingsTable(database: database)
            if let machine = try? settings.stored(.syncMachine), HybridClock.isMachineID(machine) {
                side.syncMachine = machine
                side.syncNextSeq = max(1, (try? settings.stored(.syncNextSeq)) ?? 1)
                side.syncSentThrough = max(0, (try? settings.stored(.syncSentThrough)) ?? 0)
                side.unsent = Int((try? database.scalarInt("SELECT count(*) FROM sync_outbox WHERE seq > ?", [.integer(side.syncSentThrough)])) ?? 0)
            }
            return side
        }
    }

    /// Replaces the database at `target` with the backup at `source`, as `plan` (from
    /// `planRestore`) found them:
    ///
    /// 1. the backup is copied beside `target` under a hidden name (SQLite's online backup,
    ///    one read transaction), upgraded there when older (the backup itself stays as it
    ///    was), checked whole (integrity and scrollback's `check`, `RestoreError.damaged`
    ///    when it fails), its sync made a new machine's (`continueAsNewMachine`), made one
    ///    file (no `-wal`) and synced;
    /// 2. `DatabaseUsers` is taken exclusively (refused when a scrollback process opened the
    ///    database meanwhile; others wait while it is held);
    /// 3. the current database is checkpointed when it opens, then kept under a dated name
    ///    beside it (a hard link, with its `-wal` when that still holds changes), its `-wal`
    ///    and `-shm` are moved away, and the copy is renamed over it: at every moment the
    ///    name holds a whole database, the old one or the new.
    public static func restore(
        _ plan: RestorePlan, over target: String, migrator: Migrator = .scrollback, progress: ((Int, Int) -> Void)? = nil,
        shouldStop: () -> Bool = { false }
    ) throws -> RestoreReport {
        // The file itself, a symlink to it followed: restored in its own folder, the link kept.
        let targetPath = DatabaseUsers.key(target)
        let folder = (targetPath as NSString).deletingLastPathComponent
        let name = (targetPath as NSString).lastPathComponent
        removeAbandonedCopies(of: name, in: folder, kind: "restore", sparing: plan.source.path)
        var template = Array((folder + "/." + name + ".restore-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.map { mkstemp($0) } ?? -1 }
        // Not inherited by a program started meanwhile (nor, with it, a lock on it).
        if descriptor >= 0 { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        guard descriptor >= 0 else { throw RestoreError.folder(target, reason: String(cString: strerror(errno)).lowercased()) }
        flock(descriptor, LOCK_EX)
        defer { Glibc.close(descriptor) }
        let partial = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var done = false
        defer {
            if !done { for suffix in ["", "-journal", "-wal", "-shm"] { unlink(partial + suffix) } }
        }
        var report = RestoreReport(plan: plan)
        do {
            let source = try Database.open(path: plan.source.path, access: .readOnly, createFolder: false)
            _ = try migrator.validate(source, forUpgrade: true)
            try copyPages(of: source, into: partial, pagesPerStep: backupStep, progress: progress, shouldStop: shouldStop)
        } catch let error as BackupError where error == .interrupted {
            throw RestoreError.interrupted
        } catch StorageError.damaged(_, let detail) {
            throw RestoreError.damaged(path: plan.source.path, problems: [detail.message])
        }
        if shouldStop() { throw RestoreError.interrupted }
        try prepare(partial, source: plan.source.path, migrator: migrator, report: &report, shouldStop: shouldStop)
        if shouldStop() { throw RestoreError.interrupted }

        let exclusive = try DatabaseUsers.takeExclusive(targetPath)
        defer { exclusive.release() }
        var targetStatus = stat()
        if lstat(targetPath, &targetStatus) == 0 {
            guard (targetStatus.st_mode & S_IFMT) == S_IFREG else { throw RestoreError.targetNotAFile(target) }
            // The old file's mode and owner (when this user may give them).
            fchmod(descriptor, targetStatus.st_mode & 0o7777 & ~0o7000)
            _ = fchown(descriptor, targetStatus.st_uid, targetStatus.st_gid)
        }
        report.kept = try keep(targetPath)
        for suffix in ["-wal", "-shm", "-journal"] { unlink(targetPath + suffix) }
        guard rename(partial, targetPath) == 0 else {
            throw RestoreError.folder(target, reason: String(cString: strerror(errno)).lowercased())
        }
        done = true
        let folderHandle = Glibc.open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY)
        if folderHandle >= 0 {
            fsync(folderHandle)
            Glibc.close(folderHandle)
        }
        return report
    }

    /// Everything of the copy in its file, which stays in WAL mode (as every database scrollback
    /// writes): a checkpoint that empties the `-wal`, which is then removed.
    private static func checkpointWhole(_ path: String) throws {
        var connection: OpaquePointer?
        let opened = sqlite3_open_v2(path, &connection, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        guard opened == SQLITE_OK, let handle = connection else {
            sqlite3_close(connection)
            throw StorageError.cannotOpen(path: path, reason: "SQLite could not open it (\(opened))")
        }
        var error: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, "PRAGMA journal_mode = WAL; PRAGMA wal_checkpoint(TRUNCATE)", nil, nil, &error)
        sqlite3_free(error)
        sqlite3_close(handle)
        if code == SQLITE_FULL { throw StorageError.diskFull(path: path) }
        guard code == SQLITE_OK else { throw StorageError.cannotOpen(path: path, reason: "its checkpoint failed (\(code))") }
        guard !hasWALContent(path) else { throw StorageError.cannotOpen(path: path, reason: "its -wal could not be emptied") }
        unlink(path + "-wal")
        unlink(path + "-shm")
    }

    /// The copy upgraded, checked, its sync made a new machine's, made one file and synced.
    private static func prepare(
        _ partial: String, source: String, migrator: Migrator, report: inout RestoreReport, shouldStop: () -> Bool
    ) throws {
        do {
            let copy = try Store.open(path: partial, createFolder: false, migrator: migrator, keepingCopy: false)
            if copy.migration.fromVersion < copy.migration.toVersion { report.upgradedFrom = copy.migration.fromVersion }
            // An upgrade may leave search rows to index: built here, so the check reads them.
            if try copy.hasSearchBacklog(), try !copy.buildSearchIndex(shouldStop: shouldStop) { throw RestoreError.interrupted }
            let check = try copy.check()
            guard check.isHealthy else { throw RestoreError.damaged(path: source, problems: check.problems) }
            if let moved = try copy.continueAsNewMachine() {
                report.previousMachine = moved.previous
                report.syncMachine = moved.machine
                report.resent = moved.resent
            }
        } catch let error as RestoreError {
            throw error
        } catch StorageError.diskFull {
            throw StorageError.diskFull(path: partial)
        } catch StorageError.damaged(_, let detail) {
            throw RestoreError.damaged(path: source, problems: [detail.message])
        } catch StorageError.migrationFailed(_, let step, _, _, let reason) {
            throw RestoreError.damaged(path: source, problems: ["its upgrade failed at step '\(step)': \(reason)"])
        }
        try checkpointWhole(partial)
        try Self.syncToDisk(partial)
    }

    /// The current database kept beside itself as `NAME.before-restore-STAMP.backup` (a
    /// hard link: nothing is copied or changed), with its `-wal` as it is when that holds
    /// changes (never checkpointed here: a `-wal` may be another database's, and merging it
    /// would damage the file); a `-wal` with no database beside it is kept as the `-wal` of
    /// that name. Nil when there is nothing to keep.
    private static func keep(_ path: String) throws -> String? {
        var status = stat()
        let hasMain = lstat(path, &status) == 0
        let hasWAL = hasWALContent(path)
        guard hasMain || hasWAL else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withYear, .withMonth, .withDay, .withTime, .withTimeZone]
        let stamp = formatter.string(from: Date())
        var kept = "\(path).before-restore-\(stamp).backup"
        var suffix = 1
        while lstat(kept, &status) == 0 || lstat(kept + "-wal", &status) == 0 {
            suffix += 1
            guard suffix < 1_000 else { throw RestoreError.folder(path, reason: "the current database could not be kept: too many copies of this second") }
            kept = "\(path).before-restore-\(stamp)-\(suffix).backup"
        }
        func place(_ from: String, _ to: String, _ what: String) throws {
            if link(from, to) == 0 { return }
            // A file system without hard links: the name is free for a moment instead.
            if errno == EPERM || errno == EXDEV || errno == ENOTSUP || errno == EOPNOTSUPP, rename(from, to) == 0 { return }
            throw RestoreError.folder(path, reason: "\(what) could not be kept: " + String(cString: strerror(errno)).lowercased())
        }
        if hasMain { try place(path, kept, "the current database") }
        if hasWAL {
            do {
                try place(path + "-wal", kept + "-wal", "the current database's -wal")
            } catch {
                if hasMain { unlink(kept) }
                throw error
            }
        }
        return hasMain ? kept : kept + "-wal"
    }
}
