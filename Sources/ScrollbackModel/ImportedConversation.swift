/// A conversation read from another program's export, before it is stored.
public struct ImportedConversation: Sendable, Hashable {
    /// `chatgpt`, `claude`, `llm`, or the source kept in a scrollback export.
    public var source: String
    /// The source's own id: with `source`, the key that makes a re-import an update. Nil for
    /// a conversation made here (from a scrollback export), which is keyed on `publicID`.
    public var sourceID: String?
    public var title: String
    public var model: String?
    public var createdAt: Timestamp
    public var updatedAt: Timestamp
    public var messages: [ImportedMessage]
    /// The public id to keep (from a scrollback export); derived from the key otherwise.
    public var publicID: String?
    public var pinned: Bool
    /// The node of the branch shown by default (ChatGPT's `current_node`); nil: the newest
    /// leaf.
    public var currentNodeID: String?
    /// The same as an index of `messages`, for a source without node ids (a scrollback
    /// export); it comes first.
    public var currentIndex: Int?
    /// Why messages of it were left out while the rest was kept (one that cannot be read on
    /// a branch other than the current one): said beside the import's skipped records.
    public var leftOut: [String] = []
    /// The folder a coding agent's session ran in, and its git branch.
    public var project: String? = nil
    public var gitBranch: String? = nil
    /// Only what was appended to the session file since it was last read: the stored
    /// conversation keeps its title and start, and gains these messages (their parents may
    /// be stored ones, named by node id).
    public var isAppended = false
    /// Lines or blocks of a kind this version does not know, kept hidden as raw JSON.
    public var unknownParts = 0

    public init(
        source: String, sourceID: String?, title: String, model: String?, createdAt: Timestamp, updatedAt: Timestamp,
        messages: [ImportedMessage], publicID: String? = nil, pinned: Bool = false, currentNodeID: String? = nil,
        currentIndex: Int? = nil
    ) {
        self.currentNodeID = currentNodeID
        self.currentIndex = currentIndex
        self.source = source
        self.sourceID = sourceID
        self.title = title
        self.model = model
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.messages = messages
        self.publicID = publicID
        self.pinned = pinned
    }
}

/// Where an imported message hangs in its conversation's tree.
public enum ImportedParent: Sendable, Hashable {
    /// After the message before it in `messages` (a chain; a first message when there is none).
    case previous
    /// A first message (one of several, when the first question was edited).
    case root
    /// Under the message whose `nodeID` is this; it comes earlier in `messages`.
    case node(String)
    /// Under the message at this index of `messages` (an earlier one).
    case index(Int)
    /// Under the stored conversation's current leaf: the first of the lines appended to a
    /// session whose lines have no ids (a first message when nothing is stored).
    case afterStored
}

public struct ImportedMessage: Sendable, Hashable {
    public var role: Role
    public var content: String
    public var createdAt: Timestamp
    public var model: String?
    public var publicID: String?
    /// The source's id of this message (unique in the conversation), kept so that a later
    /// import finds it again; nil when the source has none.
    public var nodeID: String?
    public var parent: ImportedParent
    public var usage: MessageUsage
    public var kind: MessageKind
    /// Its files, in order.
    public var attachments: [ImportedAttachment] = []

    public init(
        role: Role, content: String, createdAt: Timestamp, model: String? = nil, publicID: String? = nil,
        nodeID: String? = nil, parent: ImportedParent = .previous, usage: MessageUsage = MessageUsage(),
        kind: MessageKind = .text
    ) {
        self.kind = kind
        self.nodeID = nodeID
        self.parent = parent
        self.usage = usage
        self.role = role
        self.content = content
        self.createdAt = createdAt
        self.model = model
        self.publicID = publicID
    }
}

/// Ids that are the same every time for the same name: a re-import gives the same public
/// ids. Two FNV-1a hashes make the 128 bits, formatted as a UUID.
public enum StableID {
    /// The parts joined by U+001F, hashed; written straight into the 36 bytes of the text
    /// (this runs once per imported message).
    public static func uuid(_ parts: String...) -> String {
        var first: UInt64 = 0xCBF2_9CE4_8422_2325
        var second: UInt64 = 0x84222325CBF29CE4
        func add(_ byte: UInt8) {
            first = (first ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            second = (second ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            second = second ^ (second >> 29)
        }
        for (index, part) in parts.enumerated() {
            if index > 0 { add(0x1F) }
            for byte in part.utf8 { add(byte) }
        }
        // A final mix, so that similar names give unrelated ids (and short prefixes differ).
        func mixed(_ value: UInt64) -> UInt64 {
            var z = value
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        let high = mixed(first), low = mixed(second ^ first)
        // Version 8 (custom) and the RFC 4122 variant, so it reads as a UUID.
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: 36) { buffer in
            var at = 0
            for nibble in 0..<32 {
                if nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20 { buffer[at] = UInt8(ascii: "-"); at += 1 }
                let word = nibble < 16 ? high : low
                let value = Int((word >> UInt64(60 - 4 * (nibble % 16))) & 0xF)
                buffer[at] = nibble == 12 ? UInt8(ascii: "8") : nibble == 16 ? UInt8(ascii: "a") : digits.utf8Start[value]
                at += 1
            }
            return at
        }
    }
}
