import Foundation
import ScrollbackModel
import ScrollbackStorage

/// The browser's fetches of attachments' bytes from the sync server (`[sync]
/// fetch_attachments = "on-open"`): one file at a time, in the order asked, on a thread with
/// its own database and server connections, so that no key waits for the network. The
/// fetched file is stored in its own transaction; the browser notices the commit and reads
/// the reader's messages again.
public final class BackgroundFetcher: AttachmentFetcher, @unchecked Sendable {
    private let path: String
    private let conninfo: String
    private let key: SyncKey
    private let condition = NSCondition()
    private var queue: [(sha256: String, size: Int64?, name: String)] = []
    private var notes: [String: String] = [:]
    private var failedAt: [String: Date] = [:]
    /// The files fetched: asked for again (a line laid out before the reader read its
    /// messages again), they are not fetched again.
    private var fetched = Set<String>()
    private var stopped = false
    private var count = 0

    /// How long a failed fetch waits before it is tried again when asked.
    static let retryAfter: TimeInterval = 30
    static let underWay = "fetching from the sync server…"

    public init(path: String, conninfo: String, key: SyncKey) {
        self.path = path
        self.conninfo = conninfo
        self.key = key
        Thread.detachNewThread { [self] in run() }
    }

    public func request(sha256: String, size: Int64?, name: String, again: Bool) {
        condition.lock()
        defer { condition.unlock() }
        if notes[sha256] == Self.underWay || fetched.contains(sha256) { return }
        if !again, let failed = failedAt[sha256], Date().timeIntervalSince(failed) < Self.retryAfter { return }
        notes[sha256] = Self.underWay
        failedAt[sha256] = nil
        queue.append((sha256, size, name))
        count += 1
        condition.broadcast()
    }

    public func note(for sha256: String) -> String? {
        condition.lock()
        defer { condition.unlock() }
        return notes[sha256]
    }

    public var generation: Int {
        condition.lock()
        defer { condition.unlock() }
        return count
    }

    public func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private func next() -> (sha256: String, size: Int64?, name: String)? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !stopped { condition.wait() }
        guard !stopped else { return nil }
        return queue.removeFirst()
    }

    private func finished(_ sha256: String, problem: String?) {
        condition.lock()
        defer { condition.unlock() }
        notes[sha256] = problem
        failedAt[sha256] = problem == nil ? nil : Date()
        if problem == nil { fetched.insert(sha256) }
        count += 1
    }

    private func run() {
        var store: Store?
        var engine: SyncEngine?
        while let file = next() {
            do {
                let opened = try store ?? Store.open(path: path, createFolder: false)
                store = opened
                opened.waitForWriteLock(atMost: 5_000)
                let connected = try engine ?? SyncEngine(store: opened, conninfo: conninfo, key: key)
                engine = connected
                try connected.fetch(sha256: file.sha256, size: file.size, shownName: file.name)
                finished(file.sha256, problem: nil)
            } catch let error as SyncError {
                // A broken connection is made again for the next one.
                if case .fileNotOnServer = error {} else if case .damagedFile = error {} else { engine = nil }
                finished(file.sha256, problem: Self.words(for: error))
            } catch StorageError.diskFull {
                finished(file.sha256, problem: "the disk is full")
            } catch {
                finished(file.sha256, problem: "it could not be stored (\(SyncEngine.line(for: error).prefix(80)))")
            }
        }
    }

    /// What the line says after a failed fetch, in a few words.
    static func words(for error: SyncError) -> String {
        switch error {
        case .unreachable, .connectionLost: "offline (the sync server cannot be reached)"
        case .fileNotOnServer: "the machine that holds it has not sent it yet"
        case .damagedFile: "its copy on the sync server is damaged (scrollback attachment get says more)"
        case .wrongKey: "this key does not open the sync server's history"
        case .refused: "the sync server refused the connection"
        case .off: "sync is off here"
        default: "the fetch failed (scrollback attachment get says why)"
        }
    }
}
