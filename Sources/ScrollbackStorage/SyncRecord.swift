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
    /// A message's files, in order (their bytes go to the server apart, `SyncFiles`); nil in
    /// a record from before attachments, which says nothing of them.
    var attachments: [SyncAttachment]? = nil

    fileprivate enum Tag: UInt8 {
        case kind = 1, conversation, title, model, source, sourceID, createdAt, updatedAt, pinned, leaf, parent, role,
            content, nodeID, inputTokens, outputTokens, duration, messageKind, project, gitBranch, attachments
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
        if let attachments {
            var list: [UInt8] = []
            for attachment in attachments { TLV.put(1, attachment.encoded(), into: &list) }
            TLV.put(Tag.attachments.rawValue, list, into: &bytes)
        }
        return bytes
    }
}

/// One attachment of a message as a sync op carries it: what the reader's line shows, and
/// the SHA-256 of its bytes (sealed with the rest: the server never sees it).
struct SyncAttachment: Equatable {
    var name: String
    var mime: String? = nil
    var size: Int64? = nil
    var width: Int64? = nil
    var height: Int64? = nil
    var reference: String? = nil
    var sha256: String? = nil
    var extracted: String? = nil
    var absence: String? = nil

    private enum Tag: UInt8 {
        case name = 1, mime, size, width, height, reference, sha256, extracted, absence
    }

    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        TLV.put(Tag.name.rawValue, Array(name.utf8), into: &bytes)
        for (tag, text) in [(Tag.mime, mime), (.reference, reference), (.sha256, sha256), (.extracted, extracted), (.absence, absence)] {
            if let text { TLV.put(tag.rawValue, Array(text.utf8), into: &bytes) }
        }
        for (tag, number) in [(Tag.size, size), (.width, width), (.height, height)] {
            if let number { TLV.put(tag.rawValue, TLV.bytes(of: number), into: &bytes) }
        }
        return bytes
    }

}

extension SyncAttachment {
    /// Reads one; nil when the bytes are not one (no name, text not UTF-8, a hash that is not
    /// 64 lower-case hex digits, a negative size).
    init?(decoding bytes: ArraySlice<UInt8>) {
        var name: String?
        var attachment = SyncAttachment(name: "")
        guard
            TLV.each(bytes, { tag, field in
                guard let known = Tag(rawValue: tag) else { return true }
                switch known {
                case .size, .width, .height:
                    guard let number = TLV.number(field), number >= 0 else { return false }
                    switch known {
                    case .size: attachment.size = number
                    case .width: attachment.width = number
                    default: attachment.height = number
                    }
                default:
                    guard let text = String(validating: field, as: UTF8.self) else { return false }
                    switch known {
                    case .name: name = text
                    case .mime: attachment.mime = text
                    case .reference: attachment.reference = text
                    case .sha256:
                        guard text.utf8.count == 64, text.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
                            return false
                        }
                        attachment.sha256 = text
                    case .extracted: attachment.extracted = text
                    default: attachment.absence = text
                    }
                }
                return true
            })
        else { return nil }
        guard let name else { return nil }
        attachment.name = name
        self = attachment
    }
}

/// The record's encoding: a tag byte, a 4-byte big-endian length, the bytes.
enum TLV {
    static func put(_ tag: UInt8, _ field: [UInt8], into bytes: inout [UInt8]) {
        bytes.append(tag)
        withUnsafeBytes(of: UInt32(clamping: field.count).bigEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: field)
    }

    static func bytes(of number: Int64) -> [UInt8] { withUnsafeBytes(of: number.bigEndian) { Array($0) } }

    static func number(_ field: ArraySlice<UInt8>) -> Int64? {
        guard field.count == 8 else { return nil }
        return field.reduce(Int64(0)) { $0 << 8 | Int64($1) }
    }

    /// Calls `body` with each field in turn; false when the bytes are cut short or `body`
    /// refuses a field.
    static func each(_ bytes: ArraySlice<UInt8>, _ body: (UInt8, ArraySlice<UInt8>) -> Bool) -> Bool {
        var at = bytes.startIndex
        while at < bytes.endIndex {
            guard bytes.endIndex - at >= 5 else { return false }
            let tag = bytes[at]
            var length = 0
            for offset in 1...4 { length = length << 8 | Int(bytes[at + offset]) }
            at += 5
            guard length <= bytes.endIndex - at else { return false }
            guard body(tag, bytes[at..<(at + length)]) else { return false }
            at += length
        }
        return true
    }
}

extension SyncRecord {
    /// Reads `bytes`; nil when they are not a record (cut short, a length past the end, text
    /// that is not UTF-8, a number not 8 bytes, no kind or one this version does not know).
    init?(decoding bytes: [UInt8]) {
        var kind: SyncOpKind?
        var record = SyncRecord(kind: .void)
        let whole = TLV.each(bytes[...]) { tag, field in
            guard let known = Tag(rawValue: tag) else { return true }
            func text() -> String? { String(validating: field, as: UTF8.self) }
            func number() -> Int64? { TLV.number(field) }
            switch known {
            case .kind:
                guard let name = text(), let value = SyncOpKind(rawValue: name) else { return false }
                kind = value
            case .conversation: guard let value = text() else { return false }; record.conversation = value
            case .title: guard let value = text() else { return false }; record.title = value
            case .model: guard let value = text() else { return false }; record.model = value
            case .source: guard let value = text() else { return false }; record.source = value
            case .sourceID: guard let value = text() else { return false }; record.sourceID = value
            case .createdAt: guard let value = number() else { return false }; record.createdAt = value
            case .updatedAt: guard let value = number() else { return false }; record.updatedAt = value
            case .pinned: guard let value = number() else { return false }; record.pinned = value != 0
            case .leaf: guard let value = text() else { return false }; record.leaf = value
            case .parent: guard let value = text() else { return false }; record.parent = value
            case .role: guard let value = text() else { return false }; record.role = value
            case .content: guard let value = text() else { return false }; record.content = value
            case .nodeID: guard let value = text() else { return false }; record.nodeID = value
            case .inputTokens: guard let value = number() else { return false }; record.inputTokens = value
            case .outputTokens: guard let value = number() else { return false }; record.outputTokens = value
            case .duration: guard let value = number() else { return false }; record.durationMilliseconds = value
            case .messageKind: guard let value = text() else { return false }; record.messageKind = value
            case .project: guard let value = text() else { return false }; record.project = value
            case .gitBranch: guard let value = text() else { return false }; record.gitBranch = value
            case .attachments:
                var list: [SyncAttachment] = []
                // One that cannot be read is left out; the others stay.
                guard TLV.each(field, { tag, item in
                    if tag == 1, let attachment = SyncAttachment(decoding: item) { list.append(attachment) }
                    return true
                }) else { return false }
                record.attachments = list
            }
            return true
        }
        guard whole else { return nil }
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
