import CSQLite
import Foundation
import ScrollbackModel

/// `ConversationRepository` over one SQLite connection.
public final class SQLiteConversationRepository: ConversationRepository {
    let database: Database
    var writer: Writer { Writer(database: database) }

    init(database: Database) {
        self.database = database
    }

    static let columns =
        "conversation.id, conversation.public_id, conversation.title, conversation.model, conversation.source, conversation.source_id, conversation.created_at, conversation.updated_at, conversation.message_count, conversation.pinned, conversation.current_leaf_id, conversation.branch_length, conversation.hidden_count, conversation.project, conversation.git_branch"
    /// How many columns `columns` is.
    static let columnCount: Int32 = 15

    /// Maps a row selected with `columns` first.
    static func conversation(_ row: Row) -> ConversationDTO {
        ConversationDTO(
            id: row.int64(0), publicID: row.text(1), title: row.text(2), model: row.optionalText(3),
            source: row.text(4), sourceID: row.optionalText(5), createdAt: Timestamp(milliseconds: row.int64(6)),
            updatedAt: Timestamp(milliseconds: row.int64(7)), messageCount: row.int(8), pinned: row.bool(9),
            currentLeafID: row.optionalInt64(10), branchLength: row.int(11), hiddenCount: row.int(12),
            project: row.optionalText(13), gitBranch: row.optionalText(14))
    }

    public func create(_ new: NewConversation) throws -> ConversationDTO {
        // A made conversation's title is data, as an import's is (kept, shown safely); the
        // rule for a title a person types is `rename`'s.
        let title = new.title.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !title.isEmpty else { throw StorageError.invalidTitle }
        let updatedAt = max(new.updatedAt ?? new.createdAt, new.createdAt)
        return try database.write {
            let row = Writer.ConversationRow(
                publicID: new.publicID ?? Self.newPublicID(), title: title, model: new.model, source: new.source,
                sourceID: new.sourceID, createdAt: new.createdAt, updatedAt: updatedAt, pinned: new.pinned)
            guard let id = try writer.insert(row) else { throw StorageError.notFound(id: row.publicID) }
            return try require(id: id)
        }
    }

    public func conversation(id: Int64) throws -> ConversationDTO? {
        try database.queryFirst("SELECT \(Self.columns) FROM conversation WHERE id = ?", [.integer(id)], Self.conversation)
    }

    public func conversations(ids: [Int64]) throws -> [ConversationDTO] {
        var found: [Int64: ConversationDTO] = [:]
        // In slices, under SQLite's limit on bound variables.
        var start = 0
        while start < ids.count {
            let slice = Array(ids[start..<min(start + 500, ids.count)])
            let placeholders = Array(repeating: "?", count: slice.count).joined(separator: ", ")
            for conversation in try database.query(
                "SELECT \(Self.columns) FROM conversation WHERE id IN (\(placeholders))", slice.map { .integer($0) },
                Self.conversation)
            {
                found[conversation.id] = conversation
            }
            start += slice.count
        }
        var seen = Set<Int64>()
        return ids.compactMap { id in seen.insert(id).inserted ? found[id] : nil }
    }

    public func conversation(matching text: String) throws -> ConversationDTO {
        let prefix = text.trimmingCharacters(in: .whitespaces).lowercased()
        guard !prefix.isEmpty, prefix.unicodeScalars.allSatisfy({ Self.idCharacters.contains($0) }) else {
            throw StorageError.notFound(id: text)
        }
        // Every character of a public id sorts below "g", so [prefix, prefix+"g") is exactly
        // the ids that start with prefix, and it is a range on the unique index.
        let matches = try database.query(
            "SELECT \(Self.columns) FROM conversation WHERE public_id >= ? AND public_id < ? ORDER BY public_id LIMIT 2",
            [.text(prefix), .text(prefix + "g")], Self.conversation)
        switch matches.count {
        case 0:
            throw StorageError.notFound(id: text)
        case 1:
            return matches[0]
        default:
            let count = try database.scalarInt(
                "SELECT count(*) FROM conversation WHERE public_id >= ? AND public_id < ?",
                [.text(prefix), .text(prefix + "g")])
            throw StorageError.ambiguousID(prefix: text, matches: Int(count))
        }
    }

    public func rename(id: Int64, to title: String) throws -> ConversationDTO {
        let title = try ConversationTitle.normalized(title)
        return try database.write {
            try writer.rename(conversation: id, to: title)
            return try require(id: id)
        }
    }

    public func editMark(id: Int64, field: ConversationField) throws -> String? {
        try database.queryFirst(
            "SELECT clock FROM sync_clock WHERE entity = (SELECT public_id FROM conversation WHERE id = ?) AND field = ?",
            [.integer(id), .text(field.rawValue)]) { $0.text(0) }
    }

    public func restoreTitle(id: Int64, to title: String) throws -> ConversationDTO {
        // A title that was stored: at most what any title may be, never empty.
        guard !title.isEmpty, title.utf8.count <= 64 * ConversationTitle.maximumLength else { return try rename(id: id, to: title) }
        return try database.write {
            try writer.rename(conversation: id, to: title)
            return try require(id: id)
        }
    }

    public func setPinned(id: Int64, _ pinned: Bool) throws -> ConversationDTO {
        try database.write {
            try writer.setPinned(conversation: id, pinned)
            return try require(id: id)
        }
    }

    public func setPinned(ids: [Int64], _ pinned: Bool) throws -> Int {
        try database.write { try writer.setPinned(conversations: Set(ids).sorted(), pinned) }
    }

    public func delete(id: Int64) throws -> Bool {
        try delete(ids: [id]) == 1
    }

    public func delete(ids: [Int64]) throws -> Int {
        let unique = Set(ids)
        return try SearchIndex.changing(unique.count, of: count(), database) {
            try self.writer.delete(conversations: unique)
        }
    }

    /// The number of conversations, from the count the schema keeps (no scan).
    public func count() throws -> Int {
        Int(try database.scalarInt("SELECT value FROM tally WHERE name = 'conversations'"))
    }

    public func page(sort: ConversationOrder, filter: ConversationFilter, at position: PagePosition, limit: Int) throws -> Page<ConversationDTO> {
        try ConversationListQuery(sort: sort, filter: filter).page(in: database, at: position, limit: limit)
    }

    /// Up to `limit` conversations that pass `filter`, oldest first (by id, which follows
    /// the created time), after the one with id `after`: for export.
    public func oldestFirst(filter: ConversationFilter, after id: Int64?, limit: Int) throws -> [ConversationDTO] {
        try ConversationListQuery(sort: .created, filter: filter).oldestFirst(in: database, after: id, limit: limit)
    }

    public func count(filter: ConversationFilter) throws -> Int {
        try ConversationListQuery(sort: .updated, filter: filter).count(in: database)
    }

    public func index(of conversation: ConversationDTO, sort: ConversationOrder, filter: ConversationFilter) throws -> Int {
        try ConversationListQuery(sort: sort, filter: filter).index(of: conversation, in: database)
    }

    public func sourceTitle(id: Int64) throws -> String? {
        try database.queryFirst("SELECT source_title FROM conversation WHERE id = ?", [.integer(id)]) { $0.optionalText(0) } ?? nil
    }

    public func deleteKeepingSnapshots(ids: [Int64]) throws -> [ConversationSnapshot] {
        let unique = Set(ids).sorted()
        return try SearchIndex.changing(unique.count, of: count(), database) {
            var snapshots: [ConversationSnapshot] = []
            for id in unique {
                guard let conversation = try self.conversation(id: id) else { continue }
                let messages = try self.database.query(
                    "SELECT \(SQLiteMessageRepository.columns) FROM message WHERE conversation_id = ? ORDER BY position",
                    [.integer(id)], SQLiteMessageRepository.message)
                let choices = try self.database.query(
                    "SELECT message_id, leaf_id FROM branch_choice WHERE conversation_id = ?", [.integer(id)]
                ) { (message: $0.int64(0), leaf: $0.int64(1)) }
                var snapshot = ConversationSnapshot(conversation: conversation, messages: messages, choices: choices)
                snapshot.attachments = try AttachmentTables(database: self.database).list(conversation: id)
                snapshots.append(snapshot)
            }
            _ = try self.writer.delete(conversations: snapshots.map(\.conversation.id))
            for index in snapshots.indices {
                snapshots[index].deleteMark = try self.deleteMark(publicID: snapshots[index].conversation.publicID)
            }
            return snapshots
        }
    }

    public func deleteMark(publicID: String) throws -> String? {
        try database.queryFirst("SELECT clock FROM sync_tombstone WHERE public_id = ?", [.text(publicID)]) { $0.text(0) }
    }

    public func storedFiles(_ hashes: Set<String>) throws -> Set<String> {
        let tables = AttachmentTables(database: database)
        return try database.read { Set(try hashes.filter { try tables.content(sha256: $0) != nil }) }
    }

    @discardableResult
    public func restore(_ snapshots: [ConversationSnapshot]) throws -> [Int64] {
        // Many, next to what is there: by the bulk policy, as a load (an undo of a delete of
        // 150,000 took minutes row by row, the delete seconds).
        let large = SearchIndex.isLarge(snapshots.count, of: try count() + snapshots.count)
        let body = { () throws -> [Int64] in
            var ids: [Int64] = []
            for snapshot in snapshots {
                do {
                    ids.append(try self.restore(snapshot))
                } catch StorageError.sqlite(let error) where error.code == SQLITE_CONSTRAINT {
                    throw StorageError.conflict(
                        "cannot undo: “\(snapshot.conversation.title)” is back already (another process imported it again); nothing was restored")
                }
            }
            return ids
        }
        return large ? try SearchIndex.loading(database, body) : try database.write(body)
    }

    private func restore(_ snapshot: ConversationSnapshot) throws -> Int64 {
        let c = snapshot.conversation
        // The old row id if it is still free, so that the row is the same row again.
        let idFree = try database.scalarInt("SELECT count(*) FROM conversation WHERE id = ?", [.integer(c.id)]) == 0
        let row = Writer.ConversationRow(
            publicID: c.publicID, title: c.title, model: c.model, source: c.source, sourceID: c.sourceID,
            createdAt: c.createdAt, updatedAt: c.updatedAt, pinned: c.pinned)
        guard let conversationID = try writer.insert(row, id: idFree ? c.id : nil) else {
            throw StorageError.notFound(id: c.publicID)
        }
        // Parents come before children (the stored order); a message whose id is taken now
        // gets a new one, and its children follow it there.
        var newIDs: [Int64: Int64] = [:]
        for m in snapshot.messages {
            let messageFree = try database.scalarInt("SELECT count(*) FROM message WHERE id = ?", [.integer(m.id)]) == 0
            let id = try writer.insert(
                Writer.MessageRow(
                    publicID: m.publicID, conversationID: conversationID, position: Int64(m.position), role: m.role,
                    content: m.content, createdAt: m.createdAt, model: m.model, parentID: m.parentID.map { newIDs[$0] ?? $0 },
                    sourceNodeID: m.sourceNodeID, usage: m.usage, kind: m.kind),
                id: messageFree ? m.id : nil)
            newIDs[m.id] = id
        }
        try writer.setBranch(
            conversation: conversationID, leaf: c.currentLeafID.map { newIDs[$0] ?? $0 }, length: c.branchLength)
        for choice in snapshot.choices {
            if let message = newIDs[choice.message], let leaf = newIDs[choice.leaf] {
                try writer.remember(conversation: conversationID, message: message, leaf: leaf)
            }
        }
        let attachments = AttachmentTables(database: database)
        for attachment in snapshot.attachments {
            try attachments.restore(attachment, message: newIDs[attachment.messageID] ?? attachment.messageID)
        }
        return conversationID
    }

    public func changeToken() throws -> Int64 {
        try database.dataVersion()
    }

    // MARK: Helpers

    private func require(id: Int64) throws -> ConversationDTO {
        guard let conversation = try conversation(id: id) else { throw StorageError.notFound(id: "\(id)") }
        return conversation
    }

    private static let idCharacters = CharacterSet(charactersIn: "0123456789abcdef-")

    static func newPublicID() -> String { UUID().uuidString.lowercased() }

    /// Trims surrounding whitespace; refuses what is left empty.

}
