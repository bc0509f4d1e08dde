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

    public init(
        source: String, sourceID: String?, title: String, model: String?, createdAt: Timestamp, updatedAt: Timestamp,
        messages: [ImportedMessage], publicID: String? = nil, pinned: Bool = false
    ) {
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

public struct ImportedMessage: Sendable, Hashable {
    public var role: Role
    public var content: String
    public var createdAt: Timestamp
    public var model: String?
    public var publicID: String?

    public init(role: Role, content: String, createdAt: Timestamp, model: String? = nil, publicID: String? = nil) {
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
    public static func uuid(_ parts: String...) -> String {
        let name = parts.joined(separator: "\u{1F}")
        var first: UInt64 = 0xCBF2_9CE4_8422_2325
        var second: UInt64 = 0x84222325CBF29CE4
        for byte in name.utf8 {
            first = (first ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            second = (second ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            second = second ^ (second >> 29)
        }
        // A final mix, so that similar names give unrelated ids (and short prefixes differ).
        func mixed(_ value: UInt64) -> UInt64 {
            var z = value
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        let hex = Array(String(mixed(first), radix: 16).leftPadded(16) + String(mixed(second ^ first), radix: 16).leftPadded(16))
        var result = ""
        for (index, character) in hex.enumerated() {
            if [8, 12, 16, 20].contains(index) { result.append("-") }
            // Version 8 (custom) and the RFC 4122 variant, so it reads as a UUID.
            if index == 12 { result.append("8") } else if index == 16 { result.append("a") } else { result.append(character) }
        }
        return result
    }
}

extension String {
    fileprivate func leftPadded(_ length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
