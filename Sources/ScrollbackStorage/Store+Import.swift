import ScrollbackModel

/// What storing an imported conversation did.
public enum ImportOutcome: Sendable, Equatable {
    case inserted, updated, unchanged
}

extension Store {
    /// Stores `imported`, keyed on its source and source id: new ones are inserted, changed
    /// ones updated (title, model, times, messages), identical ones left alone. Message public
    /// ids are derived from the conversation's, so they stay the same across re-imports.
    public func upsert(_ imported: ImportedConversation) throws -> ImportOutcome {
        try database.write {
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
            let conversationID: Int64
            if let existing {
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
                try database.run(
                    "UPDATE conversation SET title = ?, model = ?, created_at = ?, updated_at = ? WHERE id = ?",
                    [.text(safeTitle), SQLValue(imported.model), .integer(imported.createdAt.milliseconds),
                     .integer(max(updatedAt, imported.createdAt).milliseconds), .integer(existing.id)])
                if sameMessages { return .updated }
                try database.run("DELETE FROM message WHERE conversation_id = ?", [.integer(existing.id)])
                conversationID = existing.id
            } else {
                try database.run(
                    """
                    INSERT INTO conversation (public_id, title, model, source, source_id, created_at, updated_at, pinned)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                    [
                        .text(publicID), .text(safeTitle), SQLValue(imported.model), .text(imported.source),
                        SQLValue(imported.sourceID), .integer(imported.createdAt.milliseconds),
                        .integer(updatedAt.milliseconds), SQLValue(imported.pinned),
                    ])
                conversationID = database.lastInsertRowID
            }
            for (position, message) in imported.messages.enumerated() {
                try database.run(
                    """
                    INSERT INTO message (public_id, conversation_id, position, role, content, created_at, model)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                    [
                        .text(message.publicID ?? StableID.uuid(publicID, String(position))), .integer(conversationID),
                        .integer(Int64(position)), .text(message.role.rawValue), .text(message.content),
                        .integer(message.createdAt.milliseconds), SQLValue(message.model),
                    ])
            }
            return existing == nil ? .inserted : .updated
        }
    }
}
