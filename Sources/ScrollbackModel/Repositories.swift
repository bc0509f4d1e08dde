/// Conversations: create, find, rename, pin, delete and page through them.
public protocol ConversationRepository {
    func create(_ conversation: NewConversation) throws -> ConversationDTO
    /// The conversation with this row id, or nil.
    func conversation(id: Int64) throws -> ConversationDTO?
    /// The conversations of these ids that exist, in the order of `ids`.
    func conversations(ids: [Int64]) throws -> [ConversationDTO]
    /// The conversation whose public id is `text` or starts with it, like git's short ids.
    ///
    /// - Throws: `StorageError.notFound`, or `StorageError.ambiguousID` when several match.
    func conversation(matching text: String) throws -> ConversationDTO
    /// - Throws: `StorageError.invalidTitle` for an empty or blank title.
    func rename(id: Int64, to title: String) throws -> ConversationDTO
    /// The export's title as last imported (nil: not imported, or not known for what was
    /// stored before schema 7): a title equal to it follows the export on the next import.
    func sourceTitle(id: Int64) throws -> String?
    /// Puts back a title the conversation had (undo), exactly as it was: an export's title
    /// may hold what a person could not type, and is kept as it is.
    func restoreTitle(id: Int64, to title: String) throws -> ConversationDTO
    /// The clock of the last edit of a conversation's title or pin (any process's, any
    /// machine's), opaque; nil when none was recorded. Undo compares it to the one its own
    /// edit left, so that an edit made elsewhere since is never undone over, even one that
    /// set the same value again.
    func editMark(id: Int64, field: ConversationField) throws -> String?
    func setPinned(id: Int64, _ pinned: Bool) throws -> ConversationDTO
    /// Pins or unpins many in one transaction (their updated times stay); returns how many
    /// changed.
    func setPinned(ids: [Int64], _ pinned: Bool) throws -> Int
    /// Deletes one conversation with its messages and search entries; false if it was gone.
    func delete(id: Int64) throws -> Bool
    /// Deletes many in one transaction; returns how many existed.
    func delete(ids: [Int64]) throws -> Int
    func count() throws -> Int
    /// How many pass `filter` (counts rows: run it away from the main actor for big ones).
    func count(filter: ConversationFilter) throws -> Int
    /// One page in `sort` order of those that pass `filter`, starting at `position`.
    func page(sort: ConversationOrder, filter: ConversationFilter, at position: PagePosition, limit: Int) throws
        -> Page<ConversationDTO>
    /// How many conversations that pass `filter` come before `conversation` in `sort` order
    /// (its 0-based index).
    func index(of conversation: ConversationDTO, sort: ConversationOrder, filter: ConversationFilter) throws -> Int
    /// Deletes in one transaction and returns what was deleted, for `restore`, each with
    /// the delete mark it left.
    func deleteKeepingSnapshots(ids: [Int64]) throws -> [ConversationSnapshot]
    /// The clock of the last delete of the conversation with this public id (any process's,
    /// any machine's), opaque; nil while it is not deleted. Undo of a delete compares it to
    /// the one its own delete left, so that a conversation put back and deleted again
    /// elsewhere since stays deleted.
    func deleteMark(publicID: String) throws -> String?
    /// Puts deleted conversations back with their ids, messages and search entries; returns
    /// the ids they have now, in the snapshots' order (the old one unless another row took it).
    @discardableResult
    func restore(_ snapshots: [ConversationSnapshot]) throws -> [Int64]
    /// Which of these stored files (by SHA-256) are still stored: undo says of the others
    /// that another process freed them.
    func storedFiles(_ hashes: Set<String>) throws -> Set<String>
    /// Changes whenever another connection commits; compare two readings to notice.
    func changeToken() throws -> Int64
}

extension ConversationRepository {
    /// One page of every conversation in `sort` order.
    public func page(sort: ConversationOrder, at position: PagePosition, limit: Int) throws -> Page<ConversationDTO> {
        try page(sort: sort, filter: .none, at: position, limit: limit)
    }

    /// The 0-based index of `conversation` among all in `sort` order.
    public func index(of conversation: ConversationDTO, sort: ConversationOrder) throws -> Int {
        try index(of: conversation, sort: sort, filter: .none)
    }
}

/// A conversation's fields a person edits.
public enum ConversationField: String, Sendable {
    case title
    case pin
}

/// The messages of a conversation: a tree, read one branch at a time.
public protocol MessageRepository {
    /// The bytes of the stored file with this SHA-256, when it is stored and holds at most
    /// `limit` bytes (checked against the hash as they are read); nil otherwise.
    func attachmentBytes(sha256: String, limit: Int) throws -> [UInt8]?
    /// Appends in order after the last message of the current branch; returns them as stored.
    func append(_ messages: [NewMessage], to conversationID: Int64) throws -> [MessageDTO]
    /// A page of the conversation's current branch.
    func page(conversationID: Int64, at position: PagePosition, limit: Int) throws -> Page<MessageDTO>
    /// The branch ending at `leaf` (nil: the current one), to page through: its messages of
    /// the kinds the person saw, or, `showingHidden`, every message along it.
    func branch(of conversation: ConversationDTO, leaf: Int64?, showingHidden: Bool) throws -> MessageBranch
    /// A page of `branch`; each message's position is its place along it.
    func page(_ branch: MessageBranch, at position: PagePosition, limit: Int) throws -> Page<MessageDTO>
    /// The conversation's shape: every seen message's parent (the nearest seen message
    /// above it), or, `showingHidden`, every message's.
    func tree(conversationID: Int64, showingHidden: Bool) throws -> ConversationTree
    /// These messages, in this order (those that exist).
    func messages(ids: [Int64]) throws -> [MessageDTO]
    /// Every message (of the kinds the person saw, unless `showingHidden`), parents before
    /// children.
    func all(conversationID: Int64, showingHidden: Bool) throws -> [MessageDTO]
    /// The leaf the reader was on when it last left the branch through `message`.
    func rememberedLeaf(conversationID: Int64, message: Int64) throws -> Int64?
    /// Makes the branch ending at `leaf` (of `length` messages) the current one, remembering
    /// the one left at a branch point; the conversation's updated time does not change.
    func choose(conversationID: Int64, leaf: Int64, length: Int, leaving: (message: Int64, leaf: Int64)?) throws
    func count(conversationID: Int64) throws -> Int
    /// All messages in the database.
    func count() throws -> Int
}

extension MessageRepository {
    /// The branch ending at `leaf` as the person saw it.
    public func branch(of conversation: ConversationDTO, leaf: Int64?) throws -> MessageBranch {
        try branch(of: conversation, leaf: leaf, showingHidden: false)
    }

    /// The shape of what the person saw.
    public func tree(conversationID: Int64) throws -> ConversationTree {
        try tree(conversationID: conversationID, showingHidden: false)
    }

    /// Every message the person saw, parents before children.
    public func all(conversationID: Int64) throws -> [MessageDTO] {
        try all(conversationID: conversationID, showingHidden: false)
    }
}

/// Typed settings with defaults.
public protocol SettingsRepository {
    func value<Value>(_ key: SettingKey<Value>) throws -> Value
    func set<Value>(_ value: Value, for key: SettingKey<Value>) throws
    func reset<Value>(_ key: SettingKey<Value>) throws
}

/// Full-text search over titles and message content.
public protocol SearchRepository {
    /// Conversations whose title matches come first, then messages, newest first.
    /// The query is plain text: quotes, `*`, `AND`, `NEAR` and parentheses are searched for.
    /// Only conversations that pass `filter` (checked on each candidate as the index is
    /// read: a filter that lets few through makes a page read more).
    /// Messages of a hidden kind (`MessageKind.isSeen` false) are found only
    /// `includingHidden`.
    func search(_ query: String, filter: ConversationFilter, includingHidden: Bool, after cursor: Cursor?, limit: Int) throws
        -> Page<SearchHit>
    /// The positions (ascending) of the messages of one conversation that match `query`, by
    /// the same rules as `search`: for finding within the conversation being read.
    func matchingPositions(conversationID: Int64, query: String) throws -> [Int]
    /// The ids of the messages of one conversation (any branch) that match `query`.
    func matchingMessageIDs(conversationID: Int64, query: String) throws -> [Int64]
    /// How far building the search index has come, 0 to 1, while a rebuild (after an upgrade)
    /// is in progress; nil when every row is indexed. Searches are correct meanwhile, slower.
    func indexingProgress() throws -> Double?
}

extension SearchRepository {
    /// Searches what the person saw.
    public func search(_ query: String, filter: ConversationFilter, after cursor: Cursor?, limit: Int) throws -> Page<SearchHit> {
        try search(query, filter: filter, includingHidden: false, after: cursor, limit: limit)
    }

    /// Searches every conversation.
    public func search(_ query: String, after cursor: Cursor?, limit: Int) throws -> Page<SearchHit> {
        try search(query, filter: .none, after: cursor, limit: limit)
    }
}

/// A search running away from the main actor, on a connection of its own.
public protocol SearchJob: AnyObject, Sendable {
    /// The first page once the search has finished (or failed); nil while it runs.
    var result: Result<Page<SearchHit>, any Error>? { get }
    /// Stops the search; its result is then never used.
    func cancel()
}

/// Starts searches in the background, so that the screen stays responsive meanwhile.
public protocol SearchRunner: Sendable {
    func start(_ query: String, limit: Int) -> any SearchJob
}

/// Where a conversation stands in an order, and how many there are: found away from the
/// main actor, because counting the rows before it costs time in proportion to its place.
public struct ListPosition: Sendable, Equatable {
    /// How many conversations come before it (its 0-based index).
    public var index: Int
    /// How many conversations there are.
    public var total: Int

    public init(index: Int, total: Int) {
        self.index = index
        self.total = total
    }
}

/// The position of one conversation, being found on a connection of its own.
public protocol PositionJob: AnyObject, Sendable {
    /// The position once found (or failed); nil while it is being found.
    var result: Result<ListPosition, any Error>? { get }
    /// Stops the work; its result is then never used.
    func cancel()
}

/// Finds positions in the background, so that no key waits for a count.
public protocol PositionRunner: Sendable {
    /// The conversation's place among those that pass `filter` in `sort` order, and how
    /// many pass.
    func start(_ conversation: ConversationDTO, sort: ConversationOrder, filter: ConversationFilter) -> any PositionJob
}
