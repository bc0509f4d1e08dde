import ScrollbackModel
/// `MessageRepository` over one SQLite connection.
public final class SQLiteMessageRepository: MessageRepository {
    let database: Database

    init(database: Database) {
        self.database = database
    }

    static let columns =
        "message.id, message.public_id, message.conversation_id, message.position, message.role, message.content, message.created_at, message.model"

    static func message(_ row: Row) throws -> MessageDTO {
        let roleText = row.text(4)
        guard let role = Role(rawValue: roleText) else {
            throw StorageError.sqlite(SQLiteError(extendedCode: 19, message: "unknown role '\(roleText)'"))
        }
        return MessageDTO(
            id: row.int64(0), publicID: row.text(1), conversationID: row.int64(2), position: row.int(3), role: role,
            content: row.text(5), createdAt: Timestamp(milliseconds: row.int64(6)), model: row.optionalText(7))
    }

    public func append(_ messages: [NewMessage], to conversationID: Int64) throws -> [MessageDTO] {
        try database.write {
            guard try database.scalarInt("SELECT count(*) FROM conversation WHERE id = ?", [.integer(conversationID)]) == 1
            else { throw StorageError.notFound(id: "\(conversationID)") }
            var position = try database.queryFirst(
                "SELECT max(position) FROM message WHERE conversation_id = ?", [.integer(conversationID)]
            ) { $0.optionalInt64(0) }.flatMap { $0 }.map { $0 + 1 } ?? 0
            var stored: [MessageDTO] = []
            stored.reserveCapacity(messages.count)
            for message in messages {
                let publicID = message.publicID ?? SQLiteConversationRepository.newPublicID()
                let id = try Writer(database: database).insert(
                    Writer.MessageRow(
                        publicID: publicID, conversationID: conversationID, position: position, role: message.role,
                        content: message.content, createdAt: message.createdAt, model: message.model))
                stored.append(
                    MessageDTO(
                        id: id, publicID: publicID, conversationID: conversationID,
                        position: Int(position), role: message.role, content: message.content,
                        createdAt: message.createdAt, model: message.model))
                position += 1
            }
            return stored
        }
    }

    public func page(conversationID: Int64, at position: PagePosition, limit: Int) throws -> Page<MessageDTO> {
        switch position {
        case .after(let cursor), .before(let cursor):
            // A message cursor names its conversation; one from another is refused.
            if case .message(let owner, _) = cursor.key, owner != conversationID {
                throw StorageError.invalidCursor(reason: "the token is for another conversation")
            }
        case .first, .last:
            break
        }
        return try Self.query.page(
            in: database, at: position, limit: limit, filter: [.integer(conversationID)], map: Self.message
        ) { message in
            Cursor(.message(conversationID: message.conversationID, position: Int64(message.position)))
        }
    }

    public func count(conversationID: Int64) throws -> Int {
        Int(try database.scalarInt("SELECT count(*) FROM message WHERE conversation_id = ?", [.integer(conversationID)]))
    }

    public func count() throws -> Int {
        Int(try database.scalarInt("SELECT count(*) FROM message"))
    }

    private static let query = KeysetQuery(
        select: "SELECT \(columns) FROM message WHERE conversation_id = ?", hasFilter: true, key: "(position)",
        forwardOrder: "position ASC", backwardOrder: "position DESC", forwardComparison: ">"
    ) { key in
        guard case .message(_, let position) = key else { return nil }
        return [.integer(position)]
    }
}
