import Foundation
import ScrollbackExport
import ScrollbackModel

// A record of scrollback's own JSON Lines export (the format lives with the exporter), read
// back as a conversation to store.
extension ScrollbackRecord {
    /// The record as a conversation to store; nil with the reason when it cannot be one.
    /// - Parameter folder: the export file's folder, against which a file an attachment names
    ///   (`--attachments-dir`) is found.
    func imported(folder: String = ".") -> Result<ImportedConversation, SkipReason> {
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
            var imported = ImportedMessage(
                role: role, content: message.content, createdAt: time, model: message.model, publicID: Self.uuid(message.id),
                nodeID: message.sourceNodeID, parent: parent,
                usage: MessageUsage(inputTokens: message.inputTokens, outputTokens: message.outputTokens, durationMilliseconds: message.durationMs),
                kind: message.kind.map { MessageKind(rawValue: $0) ?? .unknown } ?? .text)
            for attachment in message.attachments ?? [] {
                switch Self.attachment(attachment, folder: folder) {
                case .success(let kept): imported.attachments.append(kept)
                case .failure(let reason): return .failure(reason)
                }
            }
            converted.append(imported)
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

    /// An attachment of a record as one to store: its bytes are the file stored under its
    /// SHA-256 (the export's pieces come before it), else the file it names.
    static func attachment(_ attachment: Attachment, folder: String) -> Result<ImportedAttachment, SkipReason> {
        if let size = attachment.size, size < 0 { return .failure(SkipReason("an attachment's size is negative")) }
        let hash = attachment.sha256.map { $0.lowercased() }
        if let hash, !FilePiece.isHash(hash) { return .failure(SkipReason("an attachment's sha256 is not 64 hexadecimal digits")) }
        var file: String?
        if let named = attachment.file {
            // Only a file named by the hash of its bytes, never an absolute path: a record
            // cannot make an import read any file it likes into the history.
            guard let hash, !named.hasPrefix("/"), PathText.lastComponent(of: named).lowercased() == hash else {
                return .failure(SkipReason("an attachment's file is not a relative path ending in its sha256"))
            }
            file = PathText.appending(to: folder, named)
        }
        return .success(
            ImportedAttachment(
                name: attachment.name, mime: attachment.mime, size: attachment.size, width: attachment.width, height: attachment.height,
                reference: attachment.reference, extracted: attachment.extracted,
                absence: attachment.missing ?? (hash == nil ? nil : "its bytes were not in the export"), sha256: hash, file: file))
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
}

struct SkipReason: Error {
    let text: String
    init(_ text: String) { self.text = text }
}
