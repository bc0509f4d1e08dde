import ScrollbackModel

/// What storing an imported conversation did.
public enum ImportOutcome: Sendable, Equatable {
    case inserted, updated, unchanged
}

extension Store {
    /// Stores `imported`, keyed on its source and source id: new ones are inserted, changed
    /// ones updated (title, model, times, messages), identical ones left alone, and an older
    /// copy of a stored one (its messages the first of the stored ones) too. Message public
    /// ids are derived from the conversation's, so they stay the same across re-imports.
    ///
    /// Atomic: when it throws, nothing of `imported` is stored (an update runs in a
    /// savepoint; a new conversation is removed again, see `insertMessages(of:intoNew:)`).
    public func upsert(_ imported: ImportedConversation) throws -> ImportOutcome {
        try database.write(savepoint: false) {
            let publicID = imported.publicID ?? StableID.uuid(imported.source, imported.sourceID ?? "")
            let title = imported.title.trimmingCharacters(in: .whitespacesAndNewlines)
            let safeTitle = title.isEmpty ? "Untitled" : title
            let updatedAt = max(imported.updatedAt, imported.createdAt, imported.messages.map(\.createdAt).max() ?? imported.createdAt)
            let existing =
                if let sourceID = imported.sourceID {
                    try database.queryFirst(
                        "SELECT \(SQLiteConversationRepository.columns) FROM conversation WHERE source = ? AND source_id = ?",
                        [.text(imported.source), .text(sourceID)], SQLiteConversationRepository.conversation)
                } else {
                    try database.queryFirst(
                        "SELECT \(SQLiteConversationRepository.columns) FROM conversation WHERE public_id = ?",
                        [.text(publicID)], SQLiteConversationRepository.conversation)
                }
            guard let existing else {
                let row = Writer.ConversationRow(
                    publicID: publicID, title: safeTitle, model: imported.model, source: imported.source,
                    sourceID: imported.sourceID, createdAt: imported.createdAt, updatedAt: updatedAt, pinned: imported.pinned)
                guard let id = try writer.insert(row) else { return .unchanged }
                try insertMessages(of: imported, intoNew: id, publicID: publicID)
                return .inserted
            }
            // An update replaces the messages: in a savepoint, so that the old ones come back
            // when a new one fails.
            return try database.write {
                let stored = try database.query(
                    "SELECT role, content, created_at, model FROM message WHERE conversation_id = ? ORDER BY position",
                    [.integer(existing.id)]
                ) { row in
                    ImportedMessage(
                        role: Role(rawValue: row.text(0)) ?? .user, content: row.text(1),
                        createdAt: Timestamp(milliseconds: row.int64(2)), model: row.optionalText(3))
                }
                let incoming = imported.messages.map { ImportedMessage(role: $0.role, content: $0.content, createdAt: $0.createdAt, model: $0.model) }
                let sameMessages = stored == incoming
                if sameMessages && existing.title == safeTitle && existing.model == imported.model
                    && existing.createdAt == imported.createdAt && existing.updatedAt == updatedAt
                {
                    return .unchanged
                }
                // An older copy (an older export, or the earlier of two in one file): its
                // messages are the first of those stored. Replacing would lose the rest.
                if incoming.count < stored.count && Array(stored.prefix(incoming.count)) == incoming {
                    return .unchanged
                }
                try writer.update(
                    conversation: existing.id, title: safeTitle, model: imported.model, createdAt: imported.createdAt,
                    updatedAt: max(updatedAt, imported.createdAt))
                if sameMessages { return .updated }
                try writer.deleteMessages(ofConversation: existing.id)
                try writer.insert(messages: messageRows(of: imported, in: existing.id, publicID: publicID))
                return .updated
            }
        }
    }

    /// Adds `imported` unless a conversation of the same source and source id is stored
    /// already (then it is left as it is); whether it was added.
    public func add(_ imported: ImportedConversation) throws -> Bool {
        try database.write(savepoint: false) {
            let publicID = imported.publicID ?? StableID.uuid(imported.source, imported.sourceID ?? "")
            let updatedAt = max(imported.updatedAt, imported.createdAt)
            let row = Writer.ConversationRow(
                publicID: publicID, title: imported.title, model: imported.model, source: imported.source,
                sourceID: imported.sourceID, createdAt: imported.createdAt, updatedAt: updatedAt, pinned: imported.pinned)
            guard let id = try writer.insert(row, ignoringDuplicate: true) else { return false }
            try insertMessages(of: imported, intoNew: id, publicID: publicID)
            return true
        }
    }

    private var writer: Writer { Writer(database: database) }

    /// Inserts the messages of the conversation `conversationID` just inserted. When one
    /// fails (an id taken by another conversation), the conversation is deleted again with
    /// the messages before it, so that nothing of it is left, as a savepoint would leave
    /// nothing, without the savepoint's journal of every page touched.
    private func insertMessages(of imported: ImportedConversation, intoNew conversationID: Int64, publicID: String) throws {
        do {
            try writer.insert(messages: messageRows(of: imported, in: conversationID, publicID: publicID))
        } catch {
            // When this fails too, its error goes up instead, and the transaction with it.
            _ = try writer.delete(conversation: conversationID)
            throw error
        }
    }

    private func messageRows(of imported: ImportedConversation, in conversationID: Int64, publicID: String) -> some Sequence<Writer.MessageRow> {
        imported.messages.enumerated().lazy.map { position, message in
            Writer.MessageRow(
                publicID: message.publicID ?? StableID.uuid(publicID, String(position)), conversationID: conversationID,
                position: Int64(position), role: message.role, content: message.content, createdAt: message.createdAt,
                model: message.model)
        }
    }

    /// Runs `body` in one write transaction: for a caller that stores many conversations
    /// (with `upsert`, `add`) that must all be kept or none.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try database.write(body)
    }
}
