/// What the browser reads of the work other threads do for it: sync, the followed sessions.

/// Sync as the browser's footer tells it: when it last synced, what waits to be sent, and
/// whether the server could be reached.
public struct SyncFooterState: Sendable, Equatable {
    public var lastSync: Timestamp?
    /// Changes made here not yet on the server.
    public var toSend: Int
    /// A sync is running now.
    public var syncing: Bool
    /// Why the last sync did not complete, in a few words ("offline", "wrong key"); nil
    /// when it did.
    public var problem: String?
    /// What went wrong, when the few words do not say it ("sync failed"): the sync's line.
    public var reason: String?
    /// When syncs began to fail (the first failure since the last that completed).
    public var failingSince: Timestamp?

    public init(
        lastSync: Timestamp?, toSend: Int, syncing: Bool = false, problem: String? = nil, reason: String? = nil,
        failingSince: Timestamp? = nil
    ) {
        self.lastSync = lastSync
        self.toSend = toSend
        self.syncing = syncing
        self.problem = problem
        self.reason = reason
        self.failingSince = failingSince
    }
}

/// Syncs in the background on a thread and connection of its own; read from the main
/// actor at any time.
public protocol SyncMonitor: AnyObject, Sendable {
    var state: SyncFooterState { get }
    /// Ends the background syncs (one running finishes on its own).
    func stop()
}

/// Follows the coding agents' session files in the background (importing what they append),
/// read from the main actor at any time.
public protocol SourceMonitor: AnyObject, Sendable {
    /// What the footer says of the sources, when there is something to say: news a
    /// read-only browser does not import, or why following failed.
    var note: String? { get }
    func stop()
}

/// Fetches the bytes of attachments another machine sent (through sync) when the reader
/// first shows them or `O`/`S` asks, on a thread and connection of its own; read from the
/// main actor at any time.
public protocol AttachmentFetcher: AnyObject, Sendable {
    /// Asks for the file `sha256` (of `size` bytes, as its op says): once; asking again while
    /// it is under way does nothing, and so does asking again soon after it failed, unless
    /// `again` (a person pressed a key for it).
    func request(sha256: String, size: Int64?, name: String, again: Bool)
    /// What the attachment's line says of its fetch: under way, or why it failed; nil when
    /// it was not asked for (or came: then the attachment is stored).
    func note(for sha256: String) -> String?
    /// Moves on each time a fetch ends, for the reader to lay out its lines again.
    var generation: Int { get }
    func stop()
}
