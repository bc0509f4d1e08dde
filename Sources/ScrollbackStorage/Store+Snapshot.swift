import CSQLite
import Foundation
import ScrollbackModel

/// An image of the synced history, ready to be sealed and sent (`Store.writeSnapshotImage`):
/// the database as one read transaction saw it, without what belongs to this machine only.
public struct SnapshotImage: Sendable, Equatable {
    /// The hidden file beside the database; the caller removes it (`removeSnapshotImage`).
    public var path: String
    public var bytes: Int64
    /// The ops it holds the effect of, per machine: every op through these numbers (this
    /// machine's own included, sent or not).
    public var cursors: [String: Int64]
    public var conversations: Int
    /// The SHA-256 of every file its attachments name (their bytes are on the server).
    public var files: [String]
}

/// Starts the disk on `length` bytes of the file `descriptor` from `offset`, without
/// waiting: a file written for a long while and synced at its end waits for less then.
public func startWriteback(_ descriptor: Int32, offset: Int64, length: Int64) {
    _ = scrollback_start_writeback(descriptor, offset, length)
}

extension Store {
    /// Writes the image of the history a sync snapshot sends, beside the database under a
    /// hidden name (`.NAME.snapshot-XXXXXX`, 0600):
    ///
    /// - the pages as one read transaction sees them (SQLite's online backup, as `backup`);
    /// - then, in the copy: this machine's outbox, its note of the server's files, its sync
    ///   settings, its database id and list order are removed; its cursors stay (the ops
    ///   whose effect it holds) with this machine's own through its last op; the
    ///   attachments' bytes are taken out and their files named as awaited (a new machine
    ///   fetches them from the server as it shows them: they went up with the ops);
    /// - it is vacuumed, made one file, checked (`quick_check`) and synced.
    ///
    /// - Throws: `StorageError.conflict` when sync is off here.
    public func writeSnapshotImage(progress: ((Int, Int) -> Void)? = nil, shouldStop: () -> Bool = { false }) throws -> SnapshotImage {
        guard try localSyncState().machine != nil else { throw StorageError.conflict("sync is off here; a snapshot is of a synced history") }
        let target = URL(fileURLWithPath: path).standardizedFileURL.path
        let folder = (target as NSString).deletingLastPathComponent
        let name = (target as NSString).lastPathComponent
        Self.removeAbandonedCopies(of: name, in: folder, kind: "snapshot")
        var template = Array((folder + "/." + name + ".snapshot-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.map { mkstemp($0) } ?? -1 }
        // Not inherited by a program started meanwhile (nor, with it, a lock on it).
        if descriptor >= 0 { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        guard descriptor >= 0 else {
            throw StorageError.cannotOpen(path: folder, reason: "a snapshot's image cannot be written beside the database: " + String(cString: strerror(errno)).lowercased())
        }
        // Held while the image lives in this process: a next snapshot removes one left by a
        // process that was killed, never one in use.
        flock(descriptor, LOCK_EX)
        let partial = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        imageLocks[partial] = descriptor
        var kept = false
        defer { if !kept { removeSnapshotImage(partial) } }
        try Self.copyPages(of: database, into: partial, pagesPerStep: Self.backupStep, progress: progress, shouldStop: shouldStop)
        if shouldStop() { throw BackupError.interrupted }
        let cursors: [String: Int64]
        let conversations: Int
        let files: [String]
        do {
            let image = try Database.open(path: partial, access: .readWrite, createFolder: false)
            image.trustForCheckpoints()
            try image.execute("PRAGMA trusted_schema = ON")
            try image.write {
                let settings = SettingsTable(database: image)
                let clock = try settings.stored(.syncClock)
                if let machine = try settings.stored(.syncMachine), HybridClock.isMachineID(machine) {
                    let last = max(0, (try settings.stored(.syncNextSeq) ?? 1) - 1)
                    if last > 0 { try SyncCursors.advance(machine, to: last, in: image) }
                }
                try Outbox.forget(in: image)
                try image.run("DELETE FROM sync_file")
                try settings.removeSync()
                // The clock alone stays: it has seen every op the image holds, so that the
                // new machine's first edit comes after all of them.
                if let clock { try settings.set(clock, for: .syncClock) }
                try settings.remove(.databaseID)
                try settings.remove(.listSort)
                try AttachmentTables(database: image).awaitEveryFile()
            }
            cursors = try SyncCursors.all(in: image)
            conversations = Int(try image.scalarInt("SELECT count(*) FROM conversation"))
            files = try image.query("SELECT DISTINCT awaited FROM attachment WHERE awaited IS NOT NULL ORDER BY awaited") { $0.text(0) }
            try image.execute("VACUUM")
            let problems = try image.query("PRAGMA quick_check(5)") { $0.text(0) }
            guard problems == ["ok"] else { throw StorageError.conflict("the snapshot's image did not pass SQLite's check: \(problems.joined(separator: "; "))") }
        } catch StorageError.diskFull {
            throw StorageError.diskFull(path: folder)
        }
        try Self.makeSingleFile(partial)
        try Self.syncToDisk(partial)
        var status = stat()
        let bytes: Int64 = lstat(partial, &status) == 0 ? Int64(status.st_size) : 0
        kept = true
        return SnapshotImage(path: partial, bytes: bytes, cursors: cursors, conversations: conversations, files: files)
    }

    /// The SHA-256 of every file an attachment here names, its bytes here or awaited, and of
    /// every file stored (those kept for an undo too): what a compaction must leave on the
    /// server.
    public func allAttachmentHashes() throws -> [String] {
        try database.read {
            try database.query(
                """
                SELECT sha256 FROM attachment_content
                UNION SELECT awaited FROM attachment WHERE awaited IS NOT NULL
                """) { $0.text(0) }
        }
    }

    /// Whether nothing is here that a snapshot put in its place would lose: no conversation,
    /// no file, no delete to send (a new machine's database).
    public func holdsNothing() throws -> Bool {
        try database.read {
            try database.scalarInt(
                """
                SELECT (SELECT count(*) FROM conversation) + (SELECT count(*) FROM attachment_content)
                     + (SELECT count(*) FROM sync_tombstone)
                """) == 0
        }
    }

    /// The snapshot whose upload was cut, to go on with: its id and its image's path.
    public func pendingSnapshot() throws -> (id: String, path: String)? {
        try database.read {
            guard let text = try SettingsTable(database: database).stored(.syncSnapshotPending) else { return nil }
            let parts = text.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2, HybridClock.isMachineID(parts[0]) else { return nil }
            return (parts[0], parts[1])
        }
    }

    public func setPendingSnapshot(id: String, path: String) throws {
        try database.write { try SettingsTable(database: database).set(id + " " + path, for: .syncSnapshotPending) }
    }

    public func clearPendingSnapshot() throws {
        try database.write { try SettingsTable(database: database).remove(.syncSnapshotPending) }
    }

    /// Removes what killed processes left beside the database: a restore's copy, a
    /// snapshot's image, a snapshot being received (each unlocked and a minute old), and a
    /// cut upload's image that no pending upload names.
    public func sweepAbandonedFiles() {
        guard !isReadOnly, path != ":memory:" else { return }
        let target = URL(fileURLWithPath: path).standardizedFileURL.path
        let folder = (target as NSString).deletingLastPathComponent
        let name = (target as NSString).lastPathComponent
        for kind in ["restore", "snapshot", "received"] { Self.removeAbandonedCopies(of: name, in: folder, kind: kind) }
        let pending = (try? pendingSnapshot())?.path
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        let now = time(nil)
        for entry in entries where entry.hasPrefix("." + name + ".upload-") {
            let file = folder + "/" + entry
            var status = stat()
            guard file != pending, lstat(file, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, now - status.st_mtim.tv_sec > 60 else { continue }
            for suffix in ["", "-journal", "-wal", "-shm"] { unlink(file + suffix) }
        }
    }

    /// Removes the hidden files killed `restore --at` runs to `name` left in `folder`.
    public static func removeAbandonedRebuilds(of name: String, in folder: String) {
        removeAbandonedCopies(of: name, in: folder, kind: "rebuild")
    }

    /// Removes an image (and what SQLite left beside it), and lets go of its lock.
    public func removeSnapshotImage(_ path: String) {
        for suffix in ["", "-journal", "-wal", "-shm"] { unlink(path + suffix) }
        if let descriptor = imageLocks.removeValue(forKey: path) { Glibc.close(descriptor) }
    }

    /// A private file beside the database at `databasePath` for a snapshot being received
    /// (`.NAME.received-XXXXXX`, 0600, locked while this process lives), and its descriptor.
    public static func receivingFile(beside databasePath: String) throws -> (path: String, descriptor: Int32) {
        let target = URL(fileURLWithPath: databasePath).standardizedFileURL.path
        let folder = (target as NSString).deletingLastPathComponent
        let name = (target as NSString).lastPathComponent
        removeAbandonedCopies(of: name, in: folder, kind: "received")
        var template = Array((folder + "/." + name + ".received-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.map { mkstemp($0) } ?? -1 }
        // Not inherited by a program started meanwhile (nor, with it, a lock on it).
        if descriptor >= 0 { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        guard descriptor >= 0 else {
            throw StorageError.cannotOpen(path: folder, reason: "a snapshot cannot be received beside the database: " + String(cString: strerror(errno)).lowercased())
        }
        flock(descriptor, LOCK_EX)
        return (String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), descriptor)
    }

    /// Makes the received image at `path` the database of a new machine `machine`: opened
    /// (upgraded when older; refused when it is not scrollback's or is newer), checked to be
    /// an image (no machine of its own) whose cursors are `cursors`, given a database id of
    /// its own and the sync state of a machine that joined with what the image holds (its
    /// next change is its first), then made one file.
    /// - Throws: `StorageError` when the image is not what it should be.
    public static func adoptSnapshotImage(at path: String, machine: String, cursors expected: [String: Int64], migrator: Migrator = .scrollback)
        throws
    {
        guard HybridClock.isMachineID(machine) else { throw StorageError.conflict("a machine id is 32 hex digits") }
        do {
            let store = try Store.open(path: path, createFolder: false, migrator: migrator, keepingCopy: false)
            let database = store.database
            try database.write {
                let settings = SettingsTable(database: database)
                guard try settings.stored(.syncMachine) == nil, try database.scalarInt("SELECT count(*) FROM sync_outbox") == 0 else {
                    throw StorageError.conflict("the snapshot holds a machine's own sync state")
                }
                guard try SyncCursors.all(in: database) == expected else {
                    throw StorageError.conflict("the snapshot's cursors are not those the server lists for it")
                }
                try settings.set(Outbox.newID(), for: .databaseID)
                try settings.set(machine, for: .syncMachine)
                try settings.set(Int64(1), for: .syncNextSeq)
                try settings.set(HybridClock(wall: 0, counter: 0, machine: machine), for: .syncBase)
                var clock = try settings.stored(.syncClock) ?? .origin(of: machine)
                clock.machine = machine
                try settings.set(clock, for: .syncClock)
            }
            if try store.hasSearchBacklog() { _ = try store.buildSearchIndex() }
        } catch StorageError.diskFull {
            throw StorageError.diskFull(path: path)
        }
        try makeSingleFile(path)
        try Self.syncToDisk(path)
    }

    /// Copies the backup at `source` (one of ours, not newer: refused as `restore` refuses
    /// one) into the new file `partial`, as one read transaction sees it.
    public static func copyBackup(at source: String, into partial: String, migrator: Migrator = .scrollback) throws {
        let plan = try planRestore(from: source, over: partial + ".none", migrator: migrator)
        let database = try Database.open(path: plan.source.path, access: .readOnly, createFolder: false)
        _ = try migrator.validate(database, forUpgrade: true)
        try copyPages(of: database, into: partial, pagesPerStep: backupStep, progress: nil, shouldStop: { false })
    }

    /// The time of the newest change held here: a conversation's `updated_at`, or an edit's
    /// or a delete's clock (renames, pins and deletes do not move `updated_at`).
    public func newestChange() throws -> Timestamp? {
        try database.read {
            var newest = try database.queryFirst("SELECT max(updated_at) FROM conversation") { $0.optionalInt64(0) } ?? nil
            for sql in ["SELECT max(clock) FROM sync_clock", "SELECT max(clock) FROM sync_tombstone"] {
                let text = try database.queryFirst(sql) { $0.optionalText(0) } ?? nil
                if let text, let clock = HybridClock(text: text), clock.wall > 0 { newest = max(newest ?? 0, clock.wall) }
            }
            return newest.map(Timestamp.init(milliseconds:))
        }
    }

    /// A rebuilt database (`restore --at`) made one file and synced, before it is named.
    public static func finishRebuilt(_ path: String) throws {
        try makeSingleFile(path)
        try Self.syncToDisk(path)
    }

    /// Puts the file at `image` in place of the database at `target`, which holds no
    /// history (a new machine's): refused while another scrollback process has it open
    /// (`DatabaseUsers`); its `-wal` and `-shm` go.
    public static func replaceEmptyDatabase(at target: String, with image: String) throws {
        let targetPath = DatabaseUsers.key(target)
        let exclusive = try DatabaseUsers.takeExclusive(targetPath)
        defer { exclusive.release() }
        if FileManager.default.fileExists(atPath: targetPath) {
            let probe = try Database.open(path: targetPath, access: .readOnly, createFolder: false)
            let count = try probe.scalarInt("SELECT count(*) FROM conversation")
            guard count == 0 else { throw StorageError.conflict("the database holds \(count) conversations now; it is no new machine's") }
        }
        for suffix in ["-wal", "-shm", "-journal"] { unlink(targetPath + suffix) }
        guard rename(image, targetPath) == 0 else {
            throw StorageError.cannotOpen(path: targetPath, reason: String(cString: strerror(errno)).lowercased())
        }
        let folder = (targetPath as NSString).deletingLastPathComponent
        let folderHandle = Glibc.open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY)
        if folderHandle >= 0 {
            fsync(folderHandle)
            Glibc.close(folderHandle)
        }
    }
}
