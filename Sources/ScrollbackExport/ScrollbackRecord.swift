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

    /// The encoder of every record written: keys sorted, slashes left as they are.
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
