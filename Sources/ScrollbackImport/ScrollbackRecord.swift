import Foundation
import ScrollbackModel

/// A conversation as scrollback writes it in JSON and JSON Lines exports (and reads back).
/// Times are UTC ISO 8601 with milliseconds; `model` and `sourceID` are left out when absent.
///
/// Every message of the tree is there, parents before children: `parentID` names the
/// message's parent by its `id` (absent for a first message), and `currentLeafID` the last
/// message of the branch shown by default. A record without `currentLeafID` (written before
/// conversations were trees) is one chain, in order.
public struct ScrollbackRecord: Codable, Equatable, Sendable {
    public struct Message: Codable, Equatable, Sendable {
        public var id: String
        public var role: String
        public var content: String
        public var createdAt: String
        public var model: String?
        public var parentID: String?
        public var sourceNodeID: String?
        public var inputTokens: Int64?
        public var outputTokens: Int64?
        public var durationMs: Int64?
        /// What it is to the person (`MessageKind`): absent in a record written before kinds,
        /// which is `text`; a kind this version does not know is kept hidden (`unknown`).
        public var kind: String?

        enum CodingKeys: String, CodingKey {
            case id, role, content, createdAt, model, parentID, sourceNodeID, inputTokens, outputTokens, durationMs, kind
        }

        init(
            id: String, role: String, content: String, createdAt: String, model: String?, parentID: String?,
            sourceNodeID: String?, inputTokens: Int64?, outputTokens: Int64?, durationMs: Int64?, kind: String?
        ) {
            self.kind = kind
            self.id = id
            self.role = role
            self.content = content
            self.createdAt = createdAt
            self.model = model
            self.parentID = parentID
            self.sourceNodeID = sourceNodeID
            self.inputTokens = inputTokens
            self.outputTokens = outputTokens
            self.durationMs = durationMs
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Message.CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            role = try container.decode(String.self, forKey: .role)
            content = try container.decode(String.self, forKey: .content)
            createdAt = try container.decode(String.self, forKey: .createdAt)
            model = try container.decodeIfPresent(String.self, forKey: .model)
            parentID = try container.decodeIfPresent(String.self, forKey: .parentID)
            sourceNodeID = try container.decodeIfPresent(String.self, forKey: .sourceNodeID)
            inputTokens = try Self.count(container, .inputTokens)
            outputTokens = try Self.count(container, .outputTokens)
            durationMs = try Self.count(container, .durationMs)
            kind = try container.decodeIfPresent(String.self, forKey: .kind)
        }

        /// A whole number that fits, or an error that names the field (Foundation's own says
        /// only "not valid JSON" for 1.5 or 1e30).
        private static func count(_ container: KeyedDecodingContainer<Message.CodingKeys>, _ key: Message.CodingKeys) throws -> Int64? {
            guard container.contains(key), try !container.decodeNil(forKey: key) else { return nil }
            if let value = try? container.decode(Int64.self, forKey: key) { return value }
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: container.codingPath + [key], debugDescription: "not a whole number in range"))
        }
    }

    public var format = "scrollback"
    public var version = 1
    public var id: String
    public var title: String
    public var model: String?
    public var source: String
    public var sourceID: String?
    public var createdAt: String
    public var updatedAt: String
    public var pinned: Bool
    public var messages: [Message]
    public var currentLeafID: String?

    /// - Parameter messages: every message, parents before children.
    /// - Parameter currentLeaf: the last message of the branch shown by default, when it is
    ///   not the stored current leaf (a hidden one: a regeneration that only reasoned).
    public init(conversation: ConversationDTO, messages: [MessageDTO], currentLeaf: Int64? = nil) {
        id = conversation.publicID
        title = conversation.title
        model = conversation.model
        source = conversation.source
        sourceID = conversation.sourceID
        createdAt = conversation.createdAt.iso8601
        updatedAt = conversation.updatedAt.iso8601
        pinned = conversation.pinned
        var publicIDs: [Int64: String] = [:]
        for message in messages { publicIDs[message.id] = message.publicID }
        self.messages = messages.map {
            Message(
                id: $0.publicID, role: $0.role.rawValue, content: $0.content, createdAt: $0.createdAt.iso8601, model: $0.model,
                parentID: $0.parentID.flatMap { publicIDs[$0] }, sourceNodeID: $0.sourceNodeID, inputTokens: $0.usage.inputTokens,
                outputTokens: $0.usage.outputTokens, durationMs: $0.usage.durationMilliseconds, kind: $0.kind.rawValue)
        }
        currentLeafID = (currentLeaf ?? conversation.currentLeafID).flatMap { publicIDs[$0] }
    }

    /// The record as a conversation to store; nil with the reason when it cannot be one.
    func imported() -> Result<ImportedConversation, SkipReason> {
        guard format == "scrollback", version == 1 else { return .failure(SkipReason("not a scrollback version 1 record")) }
        guard !source.trimmingCharacters(in: .whitespaces).isEmpty else { return .failure(SkipReason("its source is empty")) }
        let created: Timestamp, updated: Timestamp
        do {
            guard let first = try ImportTime.iso8601(createdAt, field: "createdAt"),
                  let second = try ImportTime.iso8601(updatedAt, field: "updatedAt")
            else { return .failure(SkipReason("bad times")) }
            (created, updated) = (first, second)
        } catch {
            return .failure(error)
        }
        var converted: [ImportedMessage] = []
        var indexes: [String: Int] = [:]
        var nodeIDs = Set<String>()
        let isTree = currentLeafID != nil || messages.contains { $0.parentID != nil }
        for message in messages {
            guard let role = Role(rawValue: message.role) else { return .failure(SkipReason("unknown role '\(message.role)'")) }
            guard let time = ImportTime.iso8601(message.createdAt) else {
                return .failure(SkipReason("a message's createdAt '\(message.createdAt.prefix(40))' is not a valid time between the years 1970 and 9999"))
            }
            for count in [message.inputTokens, message.outputTokens, message.durationMs] {
                if let count, count < 0 { return .failure(SkipReason("a message's token count or duration is negative")) }
            }
            // Parents come first: a parentID that names no message before it (itself, a later
            // one, none) is not a tree this record can be.
            var parent = ImportedParent.previous
            if isTree {
                if let parentID = message.parentID {
                    guard let index = indexes[parentID] else {
                        return .failure(SkipReason("a message's parentID names no message before it"))
                    }
                    parent = .index(index)
                } else {
                    parent = .root
                }
            }
            guard indexes[message.id] == nil else { return .failure(SkipReason("two of its messages have the same id")) }
            indexes[message.id] = converted.count
            if let node = message.sourceNodeID, !nodeIDs.insert(node).inserted {
                return .failure(SkipReason("two of its messages have the same sourceNodeID"))
            }
            // A message id that is not a UUID is left out: storage derives one from the position.
            converted.append(
                ImportedMessage(
                    role: role, content: message.content, createdAt: time, model: message.model, publicID: Self.uuid(message.id),
                    nodeID: message.sourceNodeID, parent: parent,
                    usage: MessageUsage(inputTokens: message.inputTokens, outputTokens: message.outputTokens, durationMilliseconds: message.durationMs),
                    kind: message.kind.map { MessageKind(rawValue: $0) ?? .unknown } ?? .text))
        }
        // The current leaf, as the index of its message.
        let leaf = currentLeafID.flatMap { indexes[$0] }
        if currentLeafID != nil && leaf == nil { return .failure(SkipReason("its currentLeafID names none of its messages")) }
        return .success(
            ImportedConversation(
                source: source, sourceID: sourceID, title: title, model: model, createdAt: created, updatedAt: updated,
                messages: converted, publicID: conversationID, pinned: pinned, currentIndex: leaf))
    }

    /// The public id to store: the record's when it is a UUID (lower-cased), otherwise one
    /// derived from it, the same on every import, so that the file's text never becomes an id
    /// (ids are shown raw and become file names).
    var conversationID: String {
        Self.uuid(id) ?? StableID.uuid("scrollback-jsonl-id", id)
    }

    /// `text` lower-cased when it is a UUID (8-4-4-4-12 hexadecimal digits), else nil.
    static func uuid(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return nil }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == UInt8(ascii: "-") else { return nil }
            } else {
                guard (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte) else { return nil }
            }
        }
        return text.lowercased()
    }

    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}

struct SkipReason: Error {
    let text: String
    init(_ text: String) { self.text = text }
}
