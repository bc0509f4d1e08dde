import ScrollbackModel
/// `MessageRepository` over one SQLite connection.
public final class SQLiteMessageRepository: MessageRepository {
    let database: Database

    init(database: Database) {
        self.database = database
    }

    static let columns =
        "message.id, message.public_id, message.conversation_id, message.position, message.role, message.content, message.created_at, message.model, message.parent_id, message.source_node_id, message.input_tokens, message.output_tokens, message.duration_ms, message.kind"

    static func message(_ row: Row) throws -> MessageDTO {
        let roleText = row.text(4)
        guard let role = Role(rawValue: roleText) else {
            throw StorageError.sqlite(SQLiteError(extendedCode: 19, message: "unknown role '\(roleText)'"))
        }
        let kindText = row.text(13)
        guard let kind = MessageKind(rawValue: kindText) else {
            throw StorageError.sqlite(SQLiteError(extendedCode: 19, message: "unknown message kind '\(kindText)'"))
        }
        return MessageDTO(
            id: row.int64(0), publicID: row.text(1), conversationID: row.int64(2), position: row.int(3), role: role,
            content: row.text(5), createdAt: Timestamp(milliseconds: row.int64(6)), model: row.optionalText(7),
            parentID: row.optionalInt64(8), sourceNodeID: row.optionalText(9),
            usage: MessageUsage(inputTokens: row.optionalInt64(10), outputTokens: row.optionalInt64(11), durationMilliseconds: row.optionalInt64(12)),
            kind: kind)
    }

    /// Appends in order after the last message of the conversation's current branch, which
    /// they then end.
    public func append(_ messages: [NewMessage], to conversationID: Int64) throws -> [MessageDTO] {
        try database.write {
            guard let conversation = try SQLiteConversationRepository(database: database).conversation(id: conversationID) else {
                throw StorageError.notFound(id: "\(conversationID)")
            }
            var position = try database.queryFirst(
                "SELECT max(position) FROM message WHERE conversation_id = ?", [.integer(conversationID)]
            ) { $0.optionalInt64(0) }.flatMap { $0 }.map { $0 + 1 } ?? 0
            var parent = conversation.currentLeafID
            var stored: [MessageDTO] = []
            stored.reserveCapacity(messages.count)
            let writer = Writer(database: database)
            for message in messages {
                let publicID = message.publicID ?? SQLiteConversationRepository.newPublicID()
                let id = try writer.insert(
                    Writer.MessageRow(
                        publicID: publicID, conversationID: conversationID, position: position, role: message.role,
                        content: message.content, createdAt: message.createdAt, model: message.model, parentID: parent))
                stored.append(
                    MessageDTO(
                        id: id, publicID: publicID, conversationID: conversationID,
                        position: conversation.branchLength + stored.count, role: message.role, content: message.content,
                        createdAt: message.createdAt, model: message.model, parentID: parent))
                parent = id
                position += 1
            }
            if !stored.isEmpty {
                try writer.setBranch(conversation: conversationID, leaf: parent, length: conversation.branchLength + stored.count)
            }
            return stored
        }
    }

    /// A page of the conversation's current branch.
    public func page(conversationID: Int64, at position: PagePosition, limit: Int) throws -> Page<MessageDTO> {
        guard let conversation = try SQLiteConversationRepository(database: database).conversation(id: conversationID) else {
            throw StorageError.notFound(id: "\(conversationID)")
        }
        return try page(try branch(ofStored: conversation, leaf: nil), at: position, limit: limit)
    }

    public func branch(of given: ConversationDTO, leaf: Int64?, showingHidden: Bool) throws -> MessageBranch {
        // As stored now: the caller's copy may be from before a choice or an import.
        try branch(
            ofStored: SQLiteConversationRepository(database: database).conversation(id: given.id) ?? given, leaf: leaf,
            showingHidden: showingHidden)
    }

    /// `branch(of:leaf:showingHidden:)` for a conversation just read.
    private func branch(ofStored conversation: ConversationDTO, leaf: Int64?, showingHidden: Bool = false) throws -> MessageBranch {
        // One branch, all of it shown, and it is the one asked for: paged by position, no
        // tree needed.
        if !conversation.isBranched && (conversation.hiddenCount == 0 || showingHidden)
            && (leaf == nil || leaf == conversation.currentLeafID)
        {
            return MessageBranch(conversationID: conversation.id, leaf: conversation.currentLeafID, path: nil, count: conversation.branchLength)
        }
        let nodes = try self.nodes(conversationID: conversation.id)
        let tree = ConversationTree(nodes: nodes, showingHidden: showingHidden)
        var parents: [Int64: Int64] = [:]
        for node in nodes { if let parent = node.parentID { parents[node.id] = parent } }
        // The leaf asked for (or the current one), or, when it is hidden, the newest leaf
        // below the seen message it follows.
        var chosen =
            leaf.flatMap { tree.contains($0) ? $0 : nil } ?? tree.leaf(near: leaf ?? conversation.currentLeafID) { parents[$0] }
        if showingHidden, leaf == nil, let current = conversation.currentLeafID,
            let seenLeaf = ConversationTree(nodes: nodes, showingHidden: false).leaf(near: current, parents: { parents[$0] })
        {
            // The branch shown by default, with what was hidden on it, as the reader's `z`.
            chosen = tree.leaf(showingHiddenOf: seenLeaf, current: current)
        }
        let path = chosen.map { tree.path(to: $0) } ?? []
        return MessageBranch(conversationID: conversation.id, leaf: chosen, path: path, count: path.count)
    }

    public func tree(conversationID: Int64, showingHidden: Bool) throws -> ConversationTree {
        ConversationTree(nodes: try nodes(conversationID: conversationID), showingHidden: showingHidden)
    }

    private func nodes(conversationID: Int64) throws -> [(id: Int64, parentID: Int64?, seen: Bool)] {
        try database.query(
            "SELECT id, parent_id, kind NOT IN (\(MessageKind.hiddenSQLList)) FROM message WHERE conversation_id = ?",
            [.integer(conversationID)]
        ) { (id: $0.int64(0), parentID: $0.optionalInt64(1), seen: $0.bool(2)) }
    }

    public func messages(ids: [Int64]) throws -> [MessageDTO] {
        guard !ids.isEmpty else { return [] }
        var found: [Int64: MessageDTO] = [:]
        // In pieces, below SQLite's limit of bound values.
        var start = 0
        while start < ids.count {
            let piece = ids[start..<min(start + 500, ids.count)]
            let placeholders = Array(repeating: "?", count: piece.count).joined(separator: ", ")
            for message in try database.query(
                "SELECT \(Self.columns) FROM message WHERE id IN (\(placeholders))", piece.map { .integer($0) }, Self.message)
            {
                found[message.id] = message
            }
            start += piece.count
        }
        return ids.compactMap { found[$0] }
    }

    public func page(_ branch: MessageBranch, at position: PagePosition, limit: Int) throws -> Page<MessageDTO> {
        switch position {
        case .after(let cursor), .before(let cursor):
            // A message cursor names its conversation; one from another is refused.
            if case .message(let owner, _) = cursor.key, owner != branch.conversationID {
                throw StorageError.invalidCursor(reason: "the token is for another conversation")
            }
        case .first, .last:
            break
        }
        guard let path = branch.path else {
            var page = try Self.query.page(
                in: database, at: position, limit: limit, filter: [.integer(branch.conversationID)], map: Self.message
            ) { message in
                Cursor(.message(conversationID: message.conversationID, position: Int64(message.position)))
            }
            page.items = try attaching(page.items)
            return page
        }
        let limit = max(1, limit)
        let range: Range<Int>
        switch position {
        case .first:
            range = 0..<min(limit, path.count)
        case .last:
            range = max(0, path.count - limit)..<path.count
        case .after(let cursor):
            guard case .message(_, let at) = cursor.key else { throw StorageError.invalidCursor(reason: "the token is for \(cursor.listing)") }
            // Clamped before adding: a token is text from outside (Int64.max + 1 traps).
            let start = Int(clamping: min(max(at, -1), Int64(path.count))) + 1
            range = min(start, path.count)..<min(start &+ limit, path.count)
        case .before(let cursor):
            guard case .message(_, let at) = cursor.key else { throw StorageError.invalidCursor(reason: "the token is for \(cursor.listing)") }
            let end = Int(clamping: min(max(at, 0), Int64(path.count)))
            range = max(0, end - limit)..<end
        }
        var items = try attaching(try messages(ids: Array(path[range])))
        guard items.count == range.count else {
            throw StorageError.conflict("the conversation changed while it was read; open it again")
        }
        for index in items.indices { items[index].position = range.lowerBound + index }
        func cursor(_ at: Int) -> Cursor { Cursor(.message(conversationID: branch.conversationID, position: Int64(at))) }
        return Page(
            items: items, previous: range.lowerBound > 0 && !range.isEmpty ? cursor(range.lowerBound) : nil,
            next: range.upperBound < path.count && !range.isEmpty ? cursor(range.upperBound - 1) : nil)
    }

    public func rememberedLeaf(conversationID: Int64, message: Int64) throws -> Int64? {
        try database.queryFirst(
            "SELECT leaf_id FROM branch_choice WHERE conversation_id = ? AND message_id = ?",
            [.integer(conversationID), .integer(message)]) { $0.int64(0) }
    }

    public func choose(conversationID: Int64, leaf: Int64, length: Int, leaving: (message: Int64, leaf: Int64)?) throws {
        try database.write {
            guard try database.scalarInt("SELECT count(*) FROM conversation WHERE id = ?", [.integer(conversationID)]) == 1 else {
                throw StorageError.conflict("this conversation was deleted by another process")
            }
            let writer = Writer(database: database)
            if let leaving { try writer.remember(conversation: conversationID, message: leaving.message, leaf: leaving.leaf) }
            try writer.setBranch(conversation: conversationID, leaf: leaf, length: length, chosen: true)
        }
    }

    /// Every message of the conversation (of the kinds the person saw, unless
    /// `showingHidden`), parents before children, in the order stored; each one's position
    /// is its depth among them, its parent the nearest of them above it.
    public func all(conversationID: Int64, showingHidden: Bool) throws -> [MessageDTO] {
        var messages = try database.query(
            "SELECT \(Self.columns) FROM message WHERE conversation_id = ? ORDER BY position", [.integer(conversationID)], Self.message)
        if !showingHidden && messages.contains(where: { !$0.kind.isSeen }) {
            let tree = ConversationTree(nodes: messages.map { (id: $0.id, parentID: $0.parentID, seen: $0.kind.isSeen) }, showingHidden: false)
            messages = messages.filter(\.kind.isSeen)
            for index in messages.indices { messages[index].parentID = tree.parent(of: messages[index].id) }
        }
        var depths: [Int64: Int] = [:]
        for index in messages.indices {
            let depth = messages[index].parentID.flatMap { depths[$0].map { $0 + 1 } } ?? 0
            depths[messages[index].id] = depth
            messages[index].position = depth
        }
        return try attaching(messages)
    }

    public func attachmentBytes(sha256: String, limit: Int) throws -> [UInt8]? {
        try database.read {
            let tables = AttachmentTables(database: database)
            guard let size = try tables.contents(prefix: sha256, limit: 1).first(where: { $0.sha256 == sha256 })?.size, size <= Int64(limit) else {
                return nil
            }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(Int(size))
            try tables.read(sha256: sha256) { bytes += $0 }
            return bytes
        }
    }

    /// The messages with their attachments: a probe of the attachment index a message, and
    /// none where the database holds no attachment at all.
    func attaching(_ messages: [MessageDTO]) throws -> [MessageDTO] {
        let tables = AttachmentTables(database: database)
        guard !messages.isEmpty, try tables.any() else { return messages }
        let found = try tables.list(messages: messages.map(\.id))
        guard !found.isEmpty else { return messages }
        var messages = messages
        for index in messages.indices { messages[index].attachments = found[messages[index].id] ?? [] }
        return messages
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
