import Foundation
import ScrollbackModel
import ScrollbackStorage

// `restore --at`: the history as it was at a moment, rebuilt into a new file from the
// server's newest snapshot made before it and the ops after that snapshot made up to it.

/// What `restore --at` rebuilt.
public struct AsOfReport: Sendable, Equatable {
    /// The snapshot it started from (nil: from the beginning, no op was compacted yet).
    public var snapshot: SnapshotListing?
    public var snapshotMadeAt: Timestamp?
    public var ops = 0
    public var conversations = 0
}

/// Why the history could not be rebuilt as of a time.
public enum AsOfError: Error, Equatable, UserFacingError, CustomStringConvertible {
    /// Before the oldest time the server can rebuild.
    case tooEarly(oldest: Timestamp?)
    case exists(String)
    case damaged(String)
    /// A backup given to start from holds changes made after the time.
    case backupTooNew(path: String, newest: Timestamp)
    /// The server compacted changes made after the backup.
    case compactedSince(path: String)

    public var description: String {
        switch self {
        case .tooEarly(let oldest):
            if let oldest {
                "the server keeps the history from \(oldest.iso8601) on (its oldest snapshot; the changes before it were compacted); give --at a time from then"
            } else {
                "the server's changes before its snapshots were compacted and no snapshot is kept; nothing before now can be rebuilt"
            }
        case .exists(let path): "\(path) exists; --out takes the name of a new file"
        case .damaged(let message): message
        case .backupTooNew(let path, let newest):
            "\(path) holds changes made after that time (its newest is of \(newest.iso8601)); give --from an older backup, or leave --from out to rebuild from the sync server"
        case .compactedSince(let path):
            "the sync server compacted changes made after \(path); leave --from out to rebuild from the server's snapshots"
        }
    }

    public var userLine: String { description }
}

extension SyncEngine {
    /// Rebuilds the history as it was at `time` into the new file `path` (which must not
    /// exist): the newest snapshot completed at or before `time` (received and checked, as a
    /// new machine receives it), then every op after its cursors whose clock is at or before
    /// `time`, applied by their clocks; or, when the server has compacted nothing, every op
    /// up to `time` from the beginning. The file holds no sync state of its own; it is checked
    /// whole, written beside `path` under a hidden name and named last. Nothing else is
    /// touched. Ops stamped with the oldest clock (a history stored before sync was turned
    /// on) count as before any time.
    public static func rebuild(
        at time: Timestamp, conninfo: String, key: SyncKey, into path: String, progress: ((String) -> Void)? = nil
    ) throws -> AsOfReport {
        let target = URL(fileURLWithPath: path).standardizedFileURL.path
        var status = stat()
        if lstat(target, &status) == 0 { throw AsOfError.exists(path) }
        let connection = try PostgresConnection(conninfo: conninfo)
        guard let sealed = try keyCheck(connection) else { throw SyncError.notInitialized }
        guard opens(key, sealed) else { throw SyncError.wrongKey }
        var report = AsOfReport()
        // A snapshot's moment is when its image was made; one the changes after it are all
        // on the server for (`usableSnapshots`).
        let usable = try usableSnapshots(on: connection)
        let candidates = usable.filter { $0.startedAt <= time.milliseconds }
        if candidates.isEmpty {
            let compacted = try connection.query("SELECT count(*)::int8 FROM scrollback.compacted WHERE through > 0")
            if (compacted.integer(0, 0) ?? 0) > 0 {
                throw AsOfError.tooEarly(oldest: usable.map(\.startedAt).min().map(Timestamp.init(milliseconds:)))
            }
        }
        return try building(target, path) { partial, descriptor in
        let reader = newMachineID()
        var base: SnapshotListing?
        var firstDamage: (any Error)?
        // The newest before the time first; a damaged one gives way to the one before it.
        for candidate in candidates {
            progress?("receiving the snapshot of \(Timestamp(milliseconds: candidate.startedAt).iso8601)…")
            guard ftruncate(descriptor, 0) == 0, lseek(descriptor, 0, SEEK_SET) == 0 else {
                throw StorageError.cannotOpen(path: partial, reason: String(cString: strerror(errno)).lowercased())
            }
            do {
                try receive(candidate, on: connection, key: key, into: descriptor)
            } catch let error as SnapshotError {
                if firstDamage == nil { firstDamage = error }
                continue
            }
            base = candidate
            break
        }
        if let base {
            try Store.adoptSnapshotImage(at: partial, machine: reader, cursors: base.cursors)
            report.snapshot = base
            report.snapshotMadeAt = Timestamp(milliseconds: base.startedAt)
        } else if let firstDamage {
            throw firstDamage
        } else {
            _ = try Store.open(path: partial, createFolder: false).turnSyncOn(machine: reader, joining: true)
        }
        // This scope's store is closed before the file is made one and named.
        do {
        let store = try Store.open(path: partial, createFolder: false)
        let cursors = base?.cursors ?? [:]
        report.ops = try applyOps(after: cursors, upTo: time, on: connection, key: key, into: store)
        try store.turnSyncOff(forget: true)
        let check = try store.check()
        guard check.isHealthy else {
            throw AsOfError.damaged("the rebuilt history did not pass the check (\(check.problems.prefix(2).joined(separator: "; "))); nothing was written")
        }
        report.conversations = try store.conversations.count()
        }
        return report
        }
    }

    /// Applies to `store`, by their clocks, every op on the server after `cursors` whose
    /// clock is at or before `time`; returns how many.
    static func applyOps(
        after cursors: [String: Int64], upTo time: Timestamp, on connection: PostgresConnection, key: SyncKey, into store: Store
    ) throws -> Int {
        var count = 0
        let machines = try connection.query("SELECT machine_id FROM scrollback.machine ORDER BY machine_id")
        try store.applyingPages(about: Store.indexedPage) {
            for row in 0..<machines.rows {
                guard let machine = machines.text(row, 0), HybridClock.isMachineID(machine) else { continue }
                var after = cursors[machine] ?? 0
                while true {
                    let page = try connection.query(
                        """
                        SELECT seq, op_id, entity, clock_wall, clock_counter, payload FROM scrollback.op
                         WHERE machine_id = $1 AND seq > $2::int8 AND clock_wall <= $3::int8 ORDER BY seq LIMIT 2000
                        """, [.text(machine), .text(String(after)), .text(String(time.milliseconds))])
                    guard page.rows > 0 else { break }
                    var ops: [IncomingOp] = []
                    for index in 0..<page.rows {
                        guard let seq = page.integer(index, 0), let opID = page.text(index, 1), let entity = page.text(index, 2),
                            let wall = page.integer(index, 3), let counter = page.integer(index, 4), let sealed = page.bytes(index, 5),
                            wall >= 0, wall <= HybridClock.wallLimit, counter >= 0, counter <= HybridClock.counterLimit
                        else { throw AsOfError.damaged("an op of machine \(machine) on the server is out of range; nothing was written") }
                        let clock = HybridClock(wall: wall, counter: counter, machine: machine)
                        guard let plaintext = key.open(sealed, aad: aad(machine: machine, seq: seq, opID: opID, entity: entity, clock: clock)) else {
                            throw AsOfError.damaged("change \(seq) of machine \(machine) on the server does not open with this key; nothing was written")
                        }
                        ops.append(IncomingOp(machine: machine, seq: seq, entity: entity, clock: clock, plaintext: plaintext))
                        after = seq
                    }
                    _ = try store.applySnapshotOps(ops)
                    count += ops.count
                }
            }
        }
        return count
    }

    /// `restore --at TIME --from BACKUP`: the backup (which must hold no change after
    /// `time`) as the start, then, when it synced and `server` is given, the server's ops
    /// after its cursors up to `time` (refused when the server compacted some of them). The
    /// file holds no sync state of its own, is checked whole and named last.
    public static func rebuild(
        at time: Timestamp, fromBackup backup: String, server: (conninfo: String, key: SyncKey)?, into path: String
    ) throws -> AsOfReport {
        let target = URL(fileURLWithPath: path).standardizedFileURL.path
        var status = stat()
        if lstat(target, &status) == 0 { throw AsOfError.exists(path) }
        return try building(target, path) { partial, descriptor in
        var report = AsOfReport()
        try Store.copyBackup(at: backup, into: partial)
        do {
            let store = try Store.open(path: partial, createFolder: false, keepingCopy: false)
            if let newest = try store.newestChange(), newest.milliseconds > time.milliseconds {
                throw AsOfError.backupTooNew(path: backup, newest: newest)
            }
            report.snapshotMadeAt = try store.newestChange()
            let local = try store.localSyncState()
            if let server, let machine = local.machine {
                let connection = try PostgresConnection(conninfo: server.conninfo)
                guard let sealed = try keyCheck(connection) else { throw SyncError.notInitialized }
                guard opens(server.key, sealed) else { throw SyncError.wrongKey }
                var cursors = local.cursors
                cursors[machine] = max(cursors[machine] ?? 0, local.nextSeq - 1)
                let compacted = try connection.query("SELECT machine_id, through FROM scrollback.compacted")
                for row in 0..<compacted.rows {
                    if let origin = compacted.text(row, 0), let through = compacted.integer(row, 1), through > (cursors[origin] ?? 0) {
                        throw AsOfError.compactedSince(path: backup)
                    }
                }
                report.ops = try applyOps(after: cursors, upTo: time, on: connection, key: server.key, into: store)
            }
            if local.machine != nil { try store.turnSyncOff(forget: true) }
            let check = try store.check()
            guard check.isHealthy else {
                throw AsOfError.damaged("the rebuilt history did not pass the check (\(check.problems.prefix(2).joined(separator: "; "))); nothing was written")
            }
            report.conversations = try store.conversations.count()
        }
        return report
        }
    }

    /// Runs `build` on a hidden, locked file beside `target` (`.NAME.rebuild-XXXXXX`), then
    /// makes it one synced file and names it `target` (never over a file); what a failure or
    /// a throw leaves is removed, and a killed rebuild's file goes with the next one.
    static func building(_ target: String, _ path: String, _ build: (String, Int32) throws -> AsOfReport) throws -> AsOfReport {
        let folder = (target as NSString).deletingLastPathComponent
        Store.removeAbandonedRebuilds(of: (target as NSString).lastPathComponent, in: folder)
        var template = Array((folder + "/." + (target as NSString).lastPathComponent + ".rebuild-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.map { mkstemp($0) } ?? -1 }
        // Not inherited by a program started meanwhile (nor, with it, a lock on it).
        if descriptor >= 0 { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        guard descriptor >= 0 else {
            throw StorageError.cannotOpen(path: folder, reason: "a file cannot be made there: " + String(cString: strerror(errno)).lowercased())
        }
        let partial = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // Held while it is built: a later sweep removes one a killed rebuild left, never this.
        flock(descriptor, LOCK_EX)
        var done = false
        defer {
            close(descriptor)
            if !done { for suffix in ["", "-journal", "-wal", "-shm"] { unlink(partial + suffix) } }
        }
        let report = try build(partial, descriptor)
        try Store.finishRebuilt(partial)
        guard link(partial, target) == 0 else {
            if errno == EEXIST { throw AsOfError.exists(path) }
            throw StorageError.cannotOpen(path: path, reason: String(cString: strerror(errno)).lowercased())
        }
        unlink(partial)
        done = true
        return report
    }
}
