import ScrollbackModel

/// What one sync op says, as the bytes that are sealed for the server: each present field
/// as a tag byte, a 4-byte big-endian length and its bytes (text as UTF-8, numbers as 8
/// bytes big-endian). A reader skips tags it does not know, so later versions may add
/// fields; it refuses lengths past the end.
struct SyncRecord: Equatable {
    var kind: SyncOpKind
    var conversation: String? = nil
    var title: String? = nil
    var model: String? = nil
    var source: String? = nil
    var sourceID: String? = nil
    var createdAt: Int64? = nil
    var updatedAt: Int64? = nil
    var pinned: Bool? = nil
    var leaf: String? = nil
    var parent: String? = nil
    var role: String? = nil
    var content: String? = nil
    var nodeID: String? = nil
    var inputTokens: Int64? = nil
    var outputTokens: Int64? = nil
    var durationMilliseconds: Int64? = nil
    /// A message's kind (`MessageKind`); a record from before kinds has none: `text`.
    var messageKind: String? = nil
    /// A coding agent's session: its folder and git branch (with a conversation's times).
    var project: String? = nil
    var gitBranch: String? = nil

    fileprivate enum Tag: UInt8 {
        case kind = 1, conversation, title, model, source, sourceID, createdAt, updatedAt, pinned, leaf, parent, role,
            content, nodeID, inputTokens, outputTokens, duration, messageKind, project, gitBranch
    }

    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64 + (content?.utf8.count ?? 0) + (title?.utf8.count ?? 0))
        func put(_ tag: Tag, _ optionalText: String?) {
            guard var text = optionalText else { return }
            bytes.append(tag.rawValue)
            let count = UInt32(clamping: text.utf8.count)
            withUnsafeBytes(of: count.bigEndian) { bytes.append(contentsOf: $0) }
            // Through the contiguous bytes: a prefix of the UTF-8 view is copied byte by
            // byte (a third of the time of reading the outbox).
            text.withUTF8 { bytes.append(contentsOf: $0.prefix(Int(count))) }
        }
        func put(_ tag: Tag, _ number: Int64?) {
            guard let number else { return }
            bytes.append(tag.rawValue)
            withUnsafeBytes(of: UInt32(8).bigEndian) { bytes.append(contentsOf: $0) }
            withUnsafeBytes(of: number.bigEndian) { bytes.append(contentsOf: $0) }
        }
        put(.kind, kind.rawValue)
        put(.conversation, conversation)
        put(.title, title)
        put(.model, model)
        put(.source, source)
        put(.sourceID, sourceID)
        put(.createdAt, createdAt)
        put(.updatedAt, updatedAt)
        put(.pinned, pinned.map { $0 ? 1 : 0 })
        put(.leaf, leaf)
        put(.parent, parent)
        put(.role, role)
        put(.content, content)
        put(.nodeID, nodeID)
        put(.inputTokens, inputTokens)
        put(.outputTokens, outputTokens)
        put(.duration, durationMilliseconds)
        put(.messageKind, messageKind)
        put(.project, project)
        put(.gitBranch, gitBranch)
        return bytes
    }
}

extension SyncRecord {
    /// Reads `bytes`; nil when they are not a record (cut short, a length past the end, text
    /// that is not UTF-8, a number not 8 bytes, no kind or one this version does not know).
    init?(decoding bytes: [UInt8]) {
        var kind: SyncOpKind?
        var record = SyncRecord(kind: .void)
        var at = 0
        while at < bytes.count {
            guard bytes.count - at >= 5 else { return nil }
            let tag = bytes[at]
            var length = 0
            for offset in 1...4 { length = length << 8 | Int(bytes[at + offset]) }
            at += 5
            guard length <= bytes.count - at else { return nil }
            let field = bytes[at..<(at + length)]
            at += length
            guard let known = Tag(rawValue: tag) else { continue }
            func text() -> String? { String(validating: field, as: UTF8.self) }
            func number() -> Int64? {
                guard field.count == 8 else { return nil }
                return field.reduce(Int64(0)) { $0 << 8 | Int64($1) }
            }
            switch known {
            case .kind:
                guard let name = text(), let value = SyncOpKind(rawValue: name) else { return nil }
                kind = value
            case .conversation: guard let value = text() else { return nil }; record.conversation = value
            case .title: guard let value = text() else { return nil }; record.title = value
            case .model: guard let value = text() else { return nil }; record.model = value
            case .source: guard let value = text() else { return nil }; record.source = value
            case .sourceID: guard let value = text() else { return nil }; record.sourceID = value
            case .createdAt: guard let value = number() else { return nil }; record.createdAt = value
            case .updatedAt: guard let value = number() else { return nil }; record.updatedAt = value
            case .pinned: guard let value = number() else { return nil }; record.pinned = value != 0
            case .leaf: guard let value = text() else { return nil }; record.leaf = value
            case .parent: guard let value = text() else { return nil }; record.parent = value
            case .role: guard let value = text() else { return nil }; record.role = value
            case .content: guard let value = text() else { return nil }; record.content = value
            case .nodeID: guard let value = text() else { return nil }; record.nodeID = value
            case .inputTokens: guard let value = number() else { return nil }; record.inputTokens = value
            case .outputTokens: guard let value = number() else { return nil }; record.outputTokens = value
            case .duration: guard let value = number() else { return nil }; record.durationMilliseconds = value
            case .messageKind: guard let value = text() else { return nil }; record.messageKind = value
            case .project: guard let value = text() else { return nil }; record.project = value
            case .gitBranch: guard let value = text() else { return nil }; record.gitBranch = value
            }
        }
        guard let kind else { return nil }
        record.kind = kind
        self = record
    }
}

/// What a sync op does to its entity (a conversation or a message, by public id).
enum SyncOpKind: String, Sendable {
    /// A conversation as a whole (made, or as it was when sync was turned on).
    case conversation = "conv"
    case title, model, pin, times, leaf
    /// A message as a whole (messages change only when a newer import has other text).
    case message = "msg"
    /// A conversation deleted: a tombstone that wins over every edit but a newer restore.
    case delete = "del"
    /// A deleted conversation put back (undo, `import --restore`): newer than its delete.
    case restore
    /// Nothing: the op's entity was gone by the time it was sent (a later op says why).
    case void

    /// The field of the entity whose clock this op sets; nil for ops that set none.
    var field: String? {
        switch self {
        case .conversation, .message: "*"
        case .title, .model, .pin, .times, .leaf: rawValue
        case .restore: "restore"
        case .delete, .void: nil
        }
    }
}
