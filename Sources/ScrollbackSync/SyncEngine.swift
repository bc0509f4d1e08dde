import Foundation
import ScrollbackModel
import ScrollbackStorage
import TerminalText

/// How far a sync has come, for a progress line.
public struct SyncProgress: Sendable, Equatable {
    public enum Phase: Sendable, Equatable { case sending, receiving }
    public var phase: Phase
    public var done: Int
    /// Known when sending (the outbox's size); nil when receiving.
    public var total: Int?
}

/// What one sync did.
public struct SyncReport: Sendable, Equatable {
    public var sent = 0
    public var received = 0
    public var applied = 0
    /// Ops received that wait for what they build on.
    public var parked = 0
    /// Attachments' files sent, and fetched (`fetchAttachments`), and why some could not be.
    public var filesSent = 0
    public var filesFetched = 0
    public var fileProblems: [String] = []
    /// Whether the newest snapshot was merged first (this machine was behind a compaction).
    public var mergedSnapshot = false
    /// The snapshot this sync made (`snapshot_after`).
    public var snapshot: SnapshotReport?
}

/// The `[sync]` settings of snapshots and compaction.
public struct SnapshotSettings: Sendable, Equatable {
    public var after: Int
    public var keepMonths: Int
    public var awayDays: Int

    public init(after: Int = 0, keepMonths: Int = 12, awayDays: Int = 90) {
        self.after = after
        self.keepMonths = keepMonths
        self.awayDays = awayDays
    }
}

/// What the server says about itself, for `sync status`.
public struct ServerState: Sendable, Equatable {
    public var machines: Int
    /// Ops of other machines not applied here yet.
    public var toReceive: Int64
}

/// Sync through a PostgreSQL server: this machine's outbox goes up, sealed, and the other
/// machines' ops come down, opened and applied. The server holds, per op, the machine id,
/// the sequence number, the op id, the entity's public id, the clock, and the sealed
/// payload; titles, messages and models only ever as ciphertext.
public final class SyncEngine {
    let store: Store
    let key: SyncKey
    let connection: PostgresConnection
    let machine: String
    /// Ops per statement, each way: memory is bounded by it, not by the history.
    public var batch = 500
    /// How long a local transaction of a pull goes on taking pages (see `pull(progress:)`);
    /// progress is told after each. (Tests shorten it to act between pages.)
    public var transactionTime = Duration.seconds(1)
    /// Whether a sync fetches every awaited attachment's bytes (`[sync] fetch_attachments =
    /// "always"`); else they come when shown or opened (`fetch(sha256:size:shownName:)`).
    public var fetchAttachments = false
    /// The plaintext bytes of a snapshot's chunk this engine sends (tests make it small).
    public var snapshotChunkSize = SyncEngine.snapshotChunk
    /// `[sync] snapshot_after`: a sync makes a snapshot when the server holds this many ops
    /// after the newest one (0: only `sync snapshot` makes them).
    public var snapshotAfter = 0
    /// `[sync] keep_months`: the snapshots kept besides the newest, one a month, and the ops
    /// after the oldest of them (for `restore --at`).
    public var keepMonths = 12
    /// `[sync] compact_after_days`: ops go from the server only once every machine that
    /// synced in this many days has passed them.
    public var awayDays = 90
    /// Whether the server's schema and key were checked on this connection (a fetch checks
    /// them once).
    var serverChecked = false

    /// A new machine id: 32 random hex digits.
    public static func newMachineID() -> String { Outbox.newID() }

    /// The server schema's version this program writes. Version 2 (the tables are
    /// version 1's): ops carry a message's kind, which a scrollback that knows only version
    /// 1 would drop, showing hidden traffic as the conversation: it refuses the server
    /// instead and says to upgrade. A version-1 server is raised to 2 by the first sync of
    /// this program.
    /// Version 3: attachments' bytes (`scrollback.file_chunk`, `scrollback.file`), which a
    /// version-2 scrollback would never fetch nor keep.
    /// Version 4: snapshots, and the compaction of ops they cover (`SyncEngine+Snapshot`).
    public static let serverSchemaVersion = 4

    /// Connects. Throws `SyncError.off` when sync is off for `store`.
    public init(store: Store, conninfo: String, key: SyncKey) throws {
        let local = try store.localSyncState()
        guard local.isOn, let machine = local.machine else { throw SyncError.off }
        self.store = store
        self.key = key
        self.machine = machine
        connection = try PostgresConnection(conninfo: conninfo)
    }

    // MARK: Sync

    /// Connects and syncs (`sync(progress:)`); a failure of either is noted in the store
    /// (`Store.recordSyncFailure`) before it is thrown, so that `sync status` and the
    /// browser's footer say what the last sync said, and since when.
    public static func run(
        store: Store, conninfo: String, key: SyncKey, fetchAttachments: Bool = false, snapshots: SnapshotSettings = SnapshotSettings(),
        progress: ((SyncProgress) -> Void)? = nil
    ) throws -> SyncReport {
        do {
            let engine = try SyncEngine(store: store, conninfo: conninfo, key: key)
            engine.fetchAttachments = fetchAttachments
            engine.snapshotAfter = snapshots.after
            engine.keepMonths = snapshots.keepMonths
            engine.awayDays = snapshots.awayDays
            return try engine.sync(progress: progress)
        } catch SyncError.off {
            throw SyncError.off
        } catch SyncError.busy {
            throw SyncError.busy
        } catch {
            // A full disk or a busy database may refuse this note too: the error is the answer.
            try? store.recordSyncFailure(Self.line(for: error), at: .now())
            throw error
        }
    }

    /// What `error` says, on one line safe to show.
    static func line(for error: any Error) -> String {
        let text: String
        switch error {
        case let error as SyncError: text = error.description
        case StorageError.diskFull(let path): text = "the disk holding \(path) is full"
        default: text = String(describing: error)
        }
        return UntrustedText.sanitized(text.split(whereSeparator: \.isNewline).joined(separator: " "))
    }

    /// Sends the outbox, then applies the other machines' new ops. Refuses a wrong key or a
    /// newer server schema before anything is written. Each batch sent is marked sent only
    /// after the server committed it; each page received is applied, with its cursor, in
    /// one local transaction; so a sync cut anywhere resumes where it stopped.
    public func sync(progress: ((SyncProgress) -> Void)? = nil) throws -> SyncReport {
        try checkServer()
        serverChecked = true
        if try store.localSyncState().lastSync == nil, HybridClock.isMachineID(machine) {
            // Counted among the server's machines from its first sync, even with nothing to send.
            try connection.execute("INSERT INTO scrollback.machine (machine_id) VALUES ('\(machine)') ON CONFLICT DO NOTHING")
        }
        var report = SyncReport()
        // The files first: a machine that sees an op that names one finds it there.
        let files = try pushFiles()
        report.filesSent = files.sent
        report.fileProblems = files.problems
        report.sent = try push(progress: progress)
        // Ops this machine would read next that a compaction took: the newest snapshot first.
        report.mergedSnapshot = try mergeSnapshotIfBehind()
        let pulled = try pull(progress: progress)
        report.received = pulled.received
        report.applied = pulled.applied
        report.parked = pulled.parked
        if fetchAttachments {
            let fetched = try fetchAwaited()
            report.filesFetched = fetched.fetched
            report.fileProblems += fetched.problems
        }
        try reportProgress()
        try store.recordSync(at: .now())
        if snapshotAfter > 0, try opsSinceNewestSnapshot() >= Int64(snapshotAfter) {
            // Another machine making one meanwhile is no failure of this sync.
            do {
                report.snapshot = try makeSnapshot()
            } catch is SnapshotError {}
        }
        return report
    }

    /// The associated data of an op: everything the server sees of it, so that none of it
    /// can be changed (or the payload moved to another op) without the open failing.
    public static func aad(machine: String, seq: Int64, opID: String, entity: String, clock: HybridClock) -> [UInt8] {
        Array("scrollback-op-v1\u{1F}\(machine)\u{1F}\(seq)\u{1F}\(opID)\u{1F}\(entity)\u{1F}\(clock.wall)\u{1F}\(clock.counter)".utf8)
    }

    /// `body` in a transaction on the server: committed when it returns, rolled back when it
    /// throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try connection.execute("BEGIN")
        do {
            let result = try body()
            try connection.execute("COMMIT")
            return result
        } catch {
            if connection.isOpen { _ = try? connection.execute("ROLLBACK") }
            throw error
        }
    }
}
