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
    /// A file of a message. Its bytes are in the same JSON Lines export, as `FilePiece`
    /// records before the first conversation that uses it (or in the folder of
    /// `--attachments-dir`, named by `file`), found by `sha256`.
    public struct Attachment: Codable, Equatable, Sendable {
        public var name: String
        public var mime: String?
        public var size: Int64?
        public var width: Int?
        public var height: Int?
        public var reference: String?
        /// The SHA-256 of its bytes; absent when they were not stored (`missing` says why).
        public var sha256: String?
        public var extracted: String?
        public var missing: String?
        /// Where its bytes are, relative to the export's folder, when they were written as a
        /// file of their own (`--attachments-dir`).
        public var file: String?

        init(_ attachment: AttachmentDTO, file: String? = nil) {
            name = attachment.name
            mime = attachment.mime
            size = attachment.size
            width = attachment.width
            height = attachment.height
            reference = attachment.reference
            sha256 = attachment.sha256
            extracted = attachment.extracted
            // Why, as the source said it (nothing when it did not say).
            missing = attachment.isStored ? nil : attachment.awaited != nil ? "another machine held its bytes; sync had not fetched them here" : attachment.absence
            self.file = file
        }
    }

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
        /// Its files, when it has any.
        public var attachments: [Attachment]?

        enum CodingKeys: String, CodingKey {
            case id, role, content, createdAt, model, parentID, sourceNodeID, inputTokens, outputTokens, durationMs, kind, attachments
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
            attachments = try container.decodeIfPresent([Attachment].self, forKey: .attachments)
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
    /// - Parameter files: where each stored file (by SHA-256) was written, when files are
    ///   written apart (`--attachments-dir`).
    public init(conversation: ConversationDTO, messages: [MessageDTO], currentLeaf: Int64? = nil, files: [String: String] = [:]) {
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
        self.messages = messages.map { message in
            var record = Message(
                id: message.publicID, role: message.role.rawValue, content: message.content, createdAt: message.createdAt.iso8601,
                model: message.model, parentID: message.parentID.flatMap { publicIDs[$0] }, sourceNodeID: message.sourceNodeID,
                inputTokens: message.usage.inputTokens, outputTokens: message.usage.outputTokens,
                durationMs: message.usage.durationMilliseconds, kind: message.kind.rawValue)
            if !message.attachments.isEmpty {
                record.attachments = message.attachments.map { Attachment($0, file: $0.sha256.flatMap { files[$0] }) }
            }
            return record
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

/// A piece of a file's bytes in scrollback's JSON Lines export: a line of its own, before the
/// first conversation that uses the file, `count` of them in order, each holding 1 MiB
/// (`chunkSize`; the last one the rest) as base64. Written with `format` first, so that a
/// reader tells it from a conversation by its first bytes.
public struct FilePiece: Codable, Equatable, Sendable {
    public var format = "scrollback-file"
    public var version = 1
    public var sha256: String
    public var size: Int64
    public var index: Int
    public var count: Int
    public var data: String

    /// The bytes of a piece (the last of a file may hold fewer).
    public static let chunkSize = 1 << 20
    /// The start of every piece's line.
    public static let linePrefix = #"{"format":"scrollback-file","#

    /// How many pieces a file of `size` bytes is written in (one for an empty file).
    public static func count(forSize size: Int64) -> Int64 {
        size <= 0 ? 1 : (size + Int64(chunkSize) - 1) / Int64(chunkSize)
    }

    /// Whether `text` is a SHA-256 as scrollback writes it: 64 lower-case hex digits.
    public static func isHash(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// The line, keys in the order the reader expects (format first).
    public static func line(sha256: String, size: Int64, index: Int, count: Int, bytes: [UInt8]) -> String {
        #"{"format":"scrollback-file","version":1,"sha256":""# + sha256 + #"","size":"# + String(size) + #","index":"#
            + String(index) + #","count":"# + String(count) + #","data":""# + Data(bytes).base64EncodedString() + #""}"#
    }
}
