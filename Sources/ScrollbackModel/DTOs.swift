import Foundation

/// A point in time as integer milliseconds since 1970, UTC, as stored.
public struct Timestamp: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }
    public init(_ date: Date) { self.milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded()) }
    public static func now() -> Timestamp { Timestamp(Date()) }

    public var date: Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.milliseconds < rhs.milliseconds }

    /// ISO 8601 in UTC with milliseconds: `2026-11-30T08:33:16.123Z`.
    public var iso8601: String {
        // Any stored value must print, Int64.min included: no multiplication back.
        var seconds = time_t(milliseconds.dividedRoundingDown(by: 1000))
        let remainder = milliseconds % 1000
        let millis = remainder < 0 ? remainder + 1000 : remainder
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), Int(millis))
    }

    public var description: String { iso8601 }

    public init(from decoder: any Decoder) throws {
        milliseconds = try decoder.singleValueContainer().decode(Int64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(milliseconds)
    }
}

extension Int64 {
    func dividedRoundingDown(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}

public enum Role: String, Sendable, Hashable, Codable, CaseIterable {
    case system, user, assistant, tool
}

/// What a message is to the person who had the conversation: what they saw (`text`,
/// `document`, `tool`), or what the export or session keeps that they did not see (the
/// rest, stored and hidden by default, one key away in the reader).
public enum MessageKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// The transcript: what was said, as it was shown.
    case text
    /// A document shown beside the chat (a ChatGPT canvas), as a message of its own.
    case document
    /// A tool call or its result that ran in front of the person (a coding agent's), shown
    /// collapsed to one line.
    case tool
    /// The model's reasoning (its summary, where that is all the source keeps).
    case reasoning
    /// Traffic addressed to the model, not the person: tool calls and results it read,
    /// memory writes, instructions for it, hidden system and context messages.
    case `internal`
    /// A line or block of a kind scrollback does not know yet, kept as its raw JSON.
    case unknown

    /// Whether the person saw it: shown, counted and searched by default.
    public var isSeen: Bool {
        switch self {
        case .text, .document, .tool: true
        case .reasoning, .internal, .unknown: false
        }
    }

    /// The kinds that are hidden, as SQL text for `kind IN (…)`.
    public static let hiddenSQLList = allCases.filter { !$0.isSeen }.map { "'\($0.rawValue)'" }.joined(separator: ", ")
}

/// A conversation as the layers above storage see it.
public struct ConversationDTO: Sendable, Hashable, Identifiable {
    /// The stable row id (never reused while the row exists; stable across VACUUM).
    public var id: Int64
    /// The public id (a lowercase UUID) that users type and scripts keep.
    public var publicID: String
    public var title: String
    public var model: String?
    public var source: String
    public var sourceID: String?
    public var createdAt: Timestamp
    public var updatedAt: Timestamp
    /// Every message, on every branch.
    public var messageCount: Int
    public var pinned: Bool
    /// The last message of the branch shown by default (nil without messages).
    public var currentLeafID: Int64?
    /// How many messages the current branch has: `messageCount` when there is one branch.
    public var branchLength: Int
    /// How many of `messageCount` are of a hidden kind (`MessageKind.isSeen` false).
    public var hiddenCount: Int
    /// The folder a coding agent's session ran in, when it came from one.
    public var project: String?
    /// The git branch it was on then.
    public var gitBranch: String?

    /// Whether some message has another answer or version beside it.
    public var isBranched: Bool { branchLength != messageCount }
    /// The messages the person saw, on every branch: what the list counts.
    public var seenCount: Int { max(0, messageCount - hiddenCount) }

    public init(
        id: Int64, publicID: String, title: String, model: String?, source: String, sourceID: String?,
        createdAt: Timestamp, updatedAt: Timestamp, messageCount: Int, pinned: Bool, currentLeafID: Int64? = nil,
        branchLength: Int? = nil, hiddenCount: Int = 0, project: String? = nil, gitBranch: String? = nil
    ) {
        self.hiddenCount = hiddenCount
        self.project = project
        self.gitBranch = gitBranch
        self.currentLeafID = currentLeafID
        self.branchLength = branchLength ?? messageCount
        self.id = id
        self.publicID = publicID
        self.title = title
        self.model = model
        self.source = source
        self.sourceID = sourceID
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.messageCount = messageCount
        self.pinned = pinned
    }
}

/// A message as the layers above storage see it.
public struct MessageDTO: Sendable, Hashable, Identifiable {
    public var id: Int64
    public var publicID: String
    public var conversationID: Int64
    /// 0-based place along its branch (its depth in the conversation's tree).
    public var position: Int
    public var role: Role
    public var content: String
    public var createdAt: Timestamp
    public var model: String?
    /// The message it answers or follows; nil for a first message.
    public var parentID: Int64?
    /// The id of the node in the export it came from, when it came from one.
    public var sourceNodeID: String?
    public var usage: MessageUsage
    public var kind: MessageKind
    /// Its files, in their order (filled by the pages and `all` of the message repository).
    public var attachments: [AttachmentDTO] = []

    public init(
        id: Int64, publicID: String, conversationID: Int64, position: Int, role: Role, content: String,
        createdAt: Timestamp, model: String?, parentID: Int64? = nil, sourceNodeID: String? = nil,
        usage: MessageUsage = MessageUsage(), kind: MessageKind = .text
    ) {
        self.kind = kind
        self.parentID = parentID
        self.sourceNodeID = sourceNodeID
        self.usage = usage
        self.id = id
        self.publicID = publicID
        self.conversationID = conversationID
        self.position = position
        self.role = role
        self.content = content
        self.createdAt = createdAt
        self.model = model
    }
}

/// Token counts and time taken, as the source recorded them (each nil when it did not).
public struct MessageUsage: Sendable, Hashable, Codable {
    public var inputTokens: Int64?
    public var outputTokens: Int64?
    public var durationMilliseconds: Int64?

    public init(inputTokens: Int64? = nil, outputTokens: Int64? = nil, durationMilliseconds: Int64? = nil) {
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
        self.durationMilliseconds = durationMilliseconds
    }

    public var isEmpty: Bool { inputTokens == nil && outputTokens == nil && durationMilliseconds == nil }
}

/// What it takes to create a conversation.
public struct NewConversation: Sendable, Hashable {
    public var publicID: String?
    public var title: String
    public var model: String?
    public var source: String
    public var sourceID: String?
    public var createdAt: Timestamp
    public var updatedAt: Timestamp?
    public var pinned: Bool

    /// - Parameter publicID: a lowercase UUID; a random one when nil.
    public init(
        title: String, model: String? = nil, source: String = "local", sourceID: String? = nil,
        createdAt: Timestamp = .now(), updatedAt: Timestamp? = nil, pinned: Bool = false, publicID: String? = nil
    ) {
        self.publicID = publicID
        self.title = title
        self.model = model
        self.source = source
        self.sourceID = sourceID
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.pinned = pinned
    }
}

/// What it takes to append a message.
public struct NewMessage: Sendable, Hashable {
    public var publicID: String?
    public var role: Role
    public var content: String
    public var createdAt: Timestamp
    public var model: String?

    public init(role: Role, content: String, createdAt: Timestamp = .now(), model: String? = nil, publicID: String? = nil) {
        self.publicID = publicID
        self.role = role
        self.content = content
        self.createdAt = createdAt
        self.model = model
    }
}

/// How far a coding agent's session file was read, and the file as it was then (this
/// machine's own note: never synced).
public struct SourceFileState: Sendable, Hashable {
    public var path: String
    public var format: String
    /// After the last whole line read.
    public var readTo: Int64
    public var device: Int64
    public var inode: Int64
    public var size: Int64
    public var modifiedNanoseconds: Int64
    /// A hash of the 4 KiB before `readTo`.
    public var window: [UInt8]

    public init(
        path: String, format: String, readTo: Int64, device: Int64, inode: Int64, size: Int64, modifiedNanoseconds: Int64,
        window: [UInt8]
    ) {
        self.path = path
        self.format = format
        self.readTo = readTo
        self.device = device
        self.inode = inode
        self.size = size
        self.modifiedNanoseconds = modifiedNanoseconds
        self.window = window
    }
}

/// One page of a keyset-paginated listing.
public struct Page<Item: Sendable>: Sendable {
    public var items: [Item]
    /// Fetch `before: previous` for the rows before the first item; nil at the start.
    public var previous: Cursor?
    /// Fetch `after: next` for the rows after the last item; nil at the end.
    public var next: Cursor?

    public init(items: [Item], previous: Cursor?, next: Cursor?) {
        self.items = items
        self.previous = previous
        self.next = next
    }
}

/// The orders the conversation list offers.
/// The orders of the list. Pinned conversations come first in each.
public enum ConversationOrder: String, Sendable, Hashable, CaseIterable, Codable {
    /// Pinned first, then most recently updated.
    case updated
    /// Pinned first, then most recently created.
    case created
    /// Pinned first, then by title, A to Z (ASCII case folded).
    case title

    /// True when `a` comes before `b` in this order (as the database sorts them).
    public func sorts(_ a: ConversationDTO, before b: ConversationDTO) -> Bool {
        if a.pinned != b.pinned { return a.pinned }
        switch self {
        case .updated:
            return (a.updatedAt.milliseconds, a.id) > (b.updatedAt.milliseconds, b.id)
        case .created:
            return (a.createdAt.milliseconds, a.id) > (b.createdAt.milliseconds, b.id)
        case .title:
            // SQLite's NOCASE: ASCII letters folded, then the UTF-8 bytes compared.
            let (x, y) = (ConversationFilter.folded(a.title), ConversationFilter.folded(b.title))
            return x == y ? a.id < b.id : x.lexicographicallyPrecedes(y)
        }
    }
}

/// Where a page starts.
public enum PagePosition: Sendable, Hashable {
    case first
    case last
    case after(Cursor)
    case before(Cursor)
}

/// Counts and facts about a database, for `scrollback stats`.
public struct DatabaseStats: Sendable, Hashable {
    public var conversations: Int
    /// The messages the person saw.
    public var messages: Int
    /// The messages kept but hidden by default (tool traffic, reasoning, context).
    public var hiddenMessages: Int = 0
    public var fileBytes: Int64
    public var schemaVersion: Int
    public var oldest: Timestamp?
    public var newest: Timestamp?
    /// Counts per model, most messages first; empty unless asked for (it reads every message).
    public var models: [ModelStats]
    /// The attachments of messages and the files they point to.
    public var attachments = AttachmentTotals(attachments: 0, missing: 0, files: 0, bytes: 0)

    public init(
        conversations: Int, messages: Int, fileBytes: Int64, schemaVersion: Int, oldest: Timestamp?, newest: Timestamp?,
        models: [ModelStats] = []
    ) {
        self.conversations = conversations
        self.messages = messages
        self.fileBytes = fileBytes
        self.schemaVersion = schemaVersion
        self.oldest = oldest
        self.newest = newest
        self.models = models
    }
}

/// What one model took part in: a message counts under its own model, else its
/// conversation's, else under none (`model` nil).
public struct ModelStats: Sendable, Hashable {
    public var model: String?
    /// Conversations with at least one message counted here.
    public var conversations: Int
    public var messages: Int
    /// The sums of the counts that are known; nil when none is.
    public var inputTokens: Int64?
    public var outputTokens: Int64?

    public init(model: String?, conversations: Int, messages: Int, inputTokens: Int64?, outputTokens: Int64?) {
        self.model = model
        self.conversations = conversations
        self.messages = messages
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
    }
}

/// A conversation with all its messages, as deleted: enough to put it back exactly.
public struct ConversationSnapshot: Sendable, Hashable {
    public struct Choice: Sendable, Hashable {
        public var message: Int64
        public var leaf: Int64
    }

    public var conversation: ConversationDTO
    /// Parents before children.
    public var messages: [MessageDTO]
    /// The branches the reader remembered.
    public var choices: [Choice]
    /// The mark the delete left (`ConversationRepository.deleteMark`): while it is still
    /// there, no other delete came after this one.
    public var deleteMark: String?
    /// Its messages' attachments (their bytes stay stored, unused, while undo can reach them).
    public var attachments: [AttachmentDTO] = []

    public init(
        conversation: ConversationDTO, messages: [MessageDTO], choices: [(message: Int64, leaf: Int64)] = [],
        deleteMark: String? = nil
    ) {
        self.conversation = conversation
        self.messages = messages
        self.choices = choices.map { Choice(message: $0.message, leaf: $0.leaf) }
        self.deleteMark = deleteMark
    }
}
