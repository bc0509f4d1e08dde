import Foundation
import ScrollbackModel
import ScrollbackStorage

/// The browser's sync: on a thread with its own connection, every `interval` seconds and
/// a couple of seconds after a change made here (seen as the outbox growing), never on the
/// main actor, so no key waits for it. The footer reads `state`.
public final class BackgroundSync: SyncMonitor, @unchecked Sendable {
    private let path: String
    private let conninfo: String
    private let key: SyncKey
    private let interval: TimeInterval
    private let fetchAttachments: Bool
    private let condition = NSCondition()
    private var stopped = false
    private var current: SyncFooterState

    /// How long after a change here the sync starts: changes made together go together.
    static let settle: TimeInterval = 2

    /// Starts syncing the database at `path` (with sync on) in the background.
    /// - Parameter fetchAttachments: each sync fetches every file other machines sent
    ///   (`[sync] fetch_attachments = "always"`).
    public init(path: String, conninfo: String, key: SyncKey, interval: TimeInterval, initial: SyncFooterState, fetchAttachments: Bool = false) {
        self.fetchAttachments = fetchAttachments
        self.path = path
        self.conninfo = conninfo
        self.key = key
        self.interval = interval
        current = initial
        Thread.detachNewThread { [self] in run() }
    }

    public var state: SyncFooterState {
        condition.lock()
        defer { condition.unlock() }
        return current
    }

    public func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private func update(_ change: (inout SyncFooterState) -> Void) {
        condition.lock()
        change(&current)
        condition.unlock()
    }

    /// Waits `seconds` unless stopped; false when stopped.
    private func wait(_ seconds: TimeInterval) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if !stopped { _ = condition.wait(until: Date(timeIntervalSinceNow: seconds)) }
        return !stopped
    }

    private func run() {
        guard let store = try? Store.open(path: path, createFolder: false) else {
            update { $0.problem = "cannot open the database" }
            return
        }
        store.waitForWriteLock(atMost: 1_000)
        var lastSeen = (try? store.localSyncState().pending) ?? 0
        var changedAt: Date?
        // The first sync comes at once.
        var nextSync = Date()
        while true {
            if Date() >= nextSync || (changedAt.map { Date().timeIntervalSince($0) >= Self.settle } ?? false) {
                syncOnce(store)
                changedAt = nil
                nextSync = Date(timeIntervalSinceNow: interval)
                lastSeen = (try? store.localSyncState().pending) ?? lastSeen
            }
            guard wait(0.5) else { return }
            if let pending = try? store.localSyncState().pending {
                if pending != lastSeen {
                    if pending > lastSeen && changedAt == nil { changedAt = Date() }
                    lastSeen = pending
                    update { $0.toSend = pending }
                }
            }
        }
    }

    private func syncOnce(_ store: Store) {
        update { $0.syncing = true }
        // Another sync (`scrollback sync` in a shell) holds the lock: this round is skipped.
        guard let lock = try? SyncLock(databasePath: path) else {
            update { $0.syncing = false }
            return
        }
        var problem: String?
        do {
            try withExtendedLifetime(lock) {
                _ = try SyncEngine.run(store: store, conninfo: conninfo, key: key, fetchAttachments: fetchAttachments)
            }
        } catch let error as SyncError {
            problem = Self.words(for: error)
        } catch {
            problem = "sync failed"
        }
        let local = try? store.localSyncState()
        update {
            $0.syncing = false
            $0.problem = problem
            $0.reason = nil
            $0.failingSince = nil
            if let local {
                $0.toSend = local.pending
                $0.lastSync = local.lastSync
                if problem != nil { Self.describe(local.failure, in: &$0) }
            }
        }
    }

    /// The footer's state where the last sync failed: since when, and what it said where
    /// the few words do not say it.
    public static func describe(_ failure: SyncFailure?, in state: inout SyncFooterState) {
        guard let failure else { return }
        state.failingSince = failure.since
        if state.problem == nil || state.problem == "sync failed" {
            state.problem = "sync failed"
            state.reason = failure.message
        }
    }

    /// A few words for the footer (`scrollback sync status` says the whole of it).
    static func words(for error: SyncError) -> String {
        switch error {
        case .unreachable, .connectionLost: "offline"
        case .refused: "sync refused: password?"
        case .wrongKey: "sync: wrong key"
        case .newerServerSchema: "sync: upgrade scrollback"
        case .notInitialized: "sync: run sync init"
        case .off: "sync is off"
        case .machineClash: "sync: copied database"
        case .serverLost: "sync: server lost changes"
        case .busy: "syncing elsewhere"
        default: "sync failed"
        }
    }
}
