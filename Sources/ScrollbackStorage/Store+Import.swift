import ScrollbackModel

/// What storing an imported conversation did.
public enum ImportOutcome: Sendable, Equatable {
    case inserted, updated, unchanged
    /// Deleted here (or on a machine this one syncs with) before: left out, unless restoring.
    case deleted
}

extension Store {
    /// Stores `imported`, keyed on its source and source id: new ones are inserted, changed
    /// ones updated, identical ones left alone.
    ///
    /// Messages are never replaced: a stored conversation keeps every message it has, and
    /// gains the ones it did not have (new answers, other branches), each under the message it
    /// follows. A message is found again by its source node id, by its public id (from a
    /// scrollback export), or, for one stored before node ids were kept, as the child of its
    /// parent with the same role and text (and then its node id is recorded). A found
    /// message whose text changed in the source is updated in place; its ids stay. An older
    /// copy of a stored conversation (every message of it stored, fewer than stored) leaves
    /// it as it is. Message public ids are derived from the conversation's and the node's
    /// (or the position's), so they are the same on every import.
    ///
    /// A conversation deleted before (its tombstone, by public id or by source id) stays
    /// deleted, unless `restoring`: then it comes back, and sync tells the other machines.
    ///
    /// Each message's attachments are stored with it: their bytes from `find` (or inline),
    /// once per content; a stored attachment whose bytes were missing gets them when this
    /// import has them.
    ///
    /// Atomic: when it throws, nothing of `imported` is stored (an update runs in a
    /// savepoint; a new conversation is removed again, see `insertMessages(of:intoNew:)`).
    public func upsert(_ imported: ImportedConversation, restoring: Bool = false, attachments find: AttachmentFinder? = nil) throws
        -> ImportOutcome
    {
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
            let tree = ImportedTree(imported)
            guard let existing else {
                if try isBuried(publicID: publicID, source: imported.source, sourceID: imported.sourceID, lifting: restoring) {
                    return .deleted
                }
                let row = Writer.ConversationRow(
                    publicID: publicID, title: safeTitle, model: imported.model, source: imported.source,
                    sourceID: imported.sourceID, createdAt: imported.createdAt, updatedAt: updatedAt, pinned: imported.pinned,
                    sourceTitle: safeTitle, project: imported.project, gitBranch: imported.gitBranch)
                let mark = try writer.outboxMark()
                guard let id = try writer.insert(row) else { return .unchanged }
                try insertMessages(of: imported, tree: tree, intoNew: id, publicID: publicID, outboxMark: mark, find: find)
                return .inserted
            }
            // In a savepoint, so that nothing changes when a new message fails.
            return try database.write {
                if imported.isAppended {
                    return try mergeAppended(imported, tree: tree, into: existing, publicID: publicID, updatedAt: updatedAt, find: find)
                }
                return try merge(imported, tree: tree, into: existing, publicID: publicID, title: safeTitle, updatedAt: updatedAt, find: find)
            }
        }
    }

    /// Adds what `imported` has that `existing` lacks (see `upsert`).
    private func merge(
        _ imported: ImportedConversation, tree: ImportedTree, into existing: ConversationDTO, publicID: String, title: String,
        updatedAt: Timestamp, find: AttachmentFinder?
    ) throws -> ImportOutcome {
        let stored = try database.query(
            """
            SELECT id, public_id, parent_id, source_node_id, role, content, model, input_tokens, output_tokens, duration_ms, position, kind
              FROM message WHERE conversation_id = ? ORDER BY position
            """, [.integer(existing.id)]
        ) { row in
            StoredNode(
                id: row.int64(0), publicID: row.text(1), parentID: row.optionalInt64(2), nodeID: row.optionalText(3),
                role: row.text(4), content: row.text(5), model: row.optionalText(6),
                usage: MessageUsage(inputTokens: row.optionalInt64(7), outputTokens: row.optionalInt64(8), durationMilliseconds: row.optionalInt64(9)),
                position: row.int64(10), kind: row.text(11))
        }
        var byNode: [String: Int] = [:]
        var byPublicID: [String: Int] = [:]
        var children: [Int64?: [Int]] = [:]
        for (index, node) in stored.enumerated() {
            if let nodeID = node.nodeID, byNode[nodeID] == nil { byNode[nodeID] = index }
            byPublicID[node.publicID] = index
            children[node.parentID, default: []].append(index)
        }
        var taken = Set<Int>()
        // Written only once it is known that the import is not an older copy.
        var nodeIDsToRecord: [(row: Int64, nodeID: String)] = []
        var changed: [(stored: StoredNode, imported: ImportedMessage)] = []
        // For each imported message, the stored row it is, when it is one.
        var rowIDs: [Int64?] = Array(repeating: nil, count: imported.messages.count)
        var newRows: [Writer.MessageRow] = []
        var newIndex: [Int: Int] = [:]  // imported index → index in newRows
        // Stored messages whose parent is now one the import adds: an earlier version left
        // out the messages between them (hidden ones), which go back where they stood.
        var reparented: [(row: Int64, newParent: Int)] = []
        var position = (stored.last?.position ?? -1) + 1
        // The row of the nearest stored message at or above `index` of the import; nil
        // when none is (a first message, or new ones up to the first).
        func storedAncestor(_ index: Int?) -> Int64? {
            var at = index
            var steps = 0
            while let current = at, steps <= imported.messages.count {
                if let row = rowIDs[current] { return row }
                at = tree.parents[current]
                steps += 1
            }
            return nil
        }
        for (index, message) in imported.messages.enumerated() {
            let parent = tree.parents[index]
            var match: Int?
            if let nodeID = tree.nodeIDs[index], let found = byNode[nodeID], !taken.contains(found) {
                match = found
            } else if let publicID = message.publicID, let found = byPublicID[publicID], !taken.contains(found) {
                match = found
            } else if parent == nil, let external = tree.externalParents[index],
                byNode[external] != nil || (external == ImportedTree.storedLeaf && existing.currentLeafID != nil)
            {
                // Appended to a session whose earlier lines are stored: new, under a stored one.
                match = nil
            } else {
                // A message stored before node ids were kept: the same text in the same place
                // (under the nearest stored message above it, when the import adds some
                // between them).
                let parentRow = storedAncestor(parent)
                match = children[parentRow]?.first { candidate in
                    !taken.contains(candidate) && stored[candidate].nodeID == nil && stored[candidate].role == message.role.rawValue
                        && stored[candidate].content == message.content
                }
            }
            if let match {
                taken.insert(match)
                let node = stored[match]
                rowIDs[index] = node.id
                if let nodeID = tree.nodeIDs[index], node.nodeID == nil {
                    nodeIDsToRecord.append((node.id, nodeID))
                }
                if node.content != message.content || node.role != message.role.rawValue || node.model != message.model
                    || (!message.usage.isEmpty && node.usage != message.usage) || node.kind != message.kind.rawValue
                {
                    changed.append((node, message))
                }
                // Its parent in the import is new, and it hangs where the earlier version put
                // it (under the nearest stored message above): the new one goes between.
                if let parent, rowIDs[parent] == nil, newIndex[parent] != nil, node.parentID == storedAncestor(parent) {
                    reparented.append((node.id, parent))
                }
                continue
            }
            var row = Self.newRow(message, node: tree.nodeIDs[index], in: existing.id, publicID: publicID, position: position)
            if let parent {
                if let parentRow = rowIDs[parent] { row.parentID = parentRow } else { row.parentInBatch = newIndex[parent] }
            } else if let external = tree.externalParents[index], let found = byNode[external] {
                row.parentID = stored[found].id
            } else if tree.externalParents[index] == ImportedTree.storedLeaf {
                row.parentID = existing.currentLeafID
            }
            newIndex[index] = newRows.count
            newRows.append(row)
            position += 1
        }
        // An older copy (an older export, or the earlier of two in one file): everything in it
        // is stored, and more. Nothing of it is newer, not its texts, not its title. (What
        // was appended to a session is never all of it.)
        if newRows.isEmpty && imported.messages.count < stored.count && !imported.isAppended {
            return .unchanged
        }
        // Appended lines keep what the whole file gave: its title (unless they name one), its
        // start.
        let imported = {
            guard imported.isAppended else { return imported }
            var appended = imported
            appended.createdAt = existing.createdAt
            appended.model = imported.model ?? existing.model
            return appended
        }()
        if (imported.project != nil || imported.gitBranch != nil)
            && (imported.project != existing.project || imported.gitBranch != existing.gitBranch)
        {
            try writer.setPlace(conversation: existing.id, project: imported.project ?? existing.project, gitBranch: imported.gitBranch ?? existing.gitBranch)
        }
        for (row, nodeID) in nodeIDsToRecord {
            try writer.setSourceNode(message: row, nodeID)
        }
        for (node, message) in changed {
            try writer.update(
                message: node.id, role: message.role, content: message.content, model: message.model,
                usage: message.usage.isEmpty ? node.usage : message.usage, kind: message.kind)
        }
        let changedMessages = !nodeIDsToRecord.isEmpty || !changed.isEmpty
        // The updated time never goes back: the stored conversation keeps every message it had.
        let updatedAt = max(updatedAt, existing.updatedAt)
        // A title a person set, here or on another machine, is never put back by an import:
        // the export's is taken only when the stored one is still what the last import gave.
        let lastImported = try database.queryFirst(
            "SELECT source_title FROM conversation WHERE id = ?", [.integer(existing.id)]) { $0.optionalText(0) } ?? nil
        // Appended lines that name no title: the export's title is still the one last imported.
        let title = imported.isAppended && imported.title.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? lastImported ?? existing.title : title
        let keptTitle = existing.title == title || lastImported == existing.title ? title : existing.title
        let sameConversation =
            existing.title == keptTitle && existing.model == imported.model && existing.createdAt == imported.createdAt
            && existing.updatedAt == updatedAt
        if lastImported != title && sameConversation { try writer.setSourceTitle(conversation: existing.id, title) }
        // The stored messages' attachments first (the new messages' once they are stored).
        let attached = try storeAttachments(of: imported, rows: rowIDs, stored: true, find: find)
        if newRows.isEmpty && !changedMessages && sameConversation && existing.currentLeafID != nil {
            return attached > 0 ? .updated : .unchanged
        }
        if !sameConversation {
            try writer.update(
                conversation: existing.id, title: keptTitle, model: imported.model, createdAt: imported.createdAt,
                updatedAt: max(updatedAt, imported.createdAt), sourceTitle: title)
        }
        if !newRows.isEmpty || existing.currentLeafID == nil {
            let inserted = try writer.insert(messages: newRows)
            for (index, at) in newIndex { rowIDs[index] = inserted[at] }
            try storeAttachments(of: imported, rows: rowIDs, only: { newIndex[$0] != nil }, find: find)
            var newParents: [Int64: Int64] = [:]
            for (row, parent) in reparented {
                guard let parentRow = rowIDs[parent] else { continue }
                try writer.reparent(message: row, under: parentRow)
                newParents[row] = parentRow
            }
            if !newParents.isEmpty { try writer.renumberInTreeOrder(conversation: existing.id) }
            // The source's current branch, now that it has something new.
            let nodes = stored.map { (id: $0.id, parentID: newParents[$0.id] ?? $0.parentID) }
                + newRows.indices.map { (id: inserted[$0], parentID: newRows[$0].parentID ?? newRows[$0].parentInBatch.map { inserted[$0] }) }
            let leaf = tree.leaf.flatMap { rowIDs[$0] }
            try setBranch(of: existing.id, tree: ConversationTree(nodes: nodes), leaf: leaf)
        }
        return .updated
    }

    /// What was appended to a session file, added to its stored conversation: each message
    /// found by its node id (through the public id it is stored under, derived from the node
    /// id, whose index is there anyway: no other message is read), the new ones
    /// under the stored messages they name (or the current leaf), the current branch moved
    /// on when the new leaf continues it. Nothing else of the conversation is read: a
    /// follow of a 50 MB session reads what it adds.
    private func mergeAppended(
        _ imported: ImportedConversation, tree: ImportedTree, into existing: ConversationDTO, publicID: String, updatedAt: Timestamp,
        find: AttachmentFinder?
    ) throws -> ImportOutcome {
        func storedRow(_ node: String) throws -> (id: Int64, content: String, role: String, kind: String, model: String?)? {
            try database.queryFirst(
                """
                SELECT id, content, role, kind, model FROM message
                 WHERE public_id = ? AND conversation_id = ? AND source_node_id = ?
                """, [.text(StableID.uuid(publicID, node)), .integer(existing.id), .text(node)]
            ) { (id: $0.int64(0), content: $0.text(1), role: $0.text(2), kind: $0.text(3), model: $0.optionalText(4)) }
        }
        var rowIDs: [Int64?] = Array(repeating: nil, count: imported.messages.count)
        var newRows: [Writer.MessageRow] = []
        var newIndex: [Int: Int] = [:]
        var changedAny = false
        var position = try database.scalarInt(
            "SELECT coalesce(max(position), -1) + 1 FROM message WHERE conversation_id = ?", [.integer(existing.id)])
        for (index, message) in imported.messages.enumerated() {
            if let node = tree.nodeIDs[index], let found = try storedRow(node) {
                rowIDs[index] = found.id
                if found.content != message.content || found.role != message.role.rawValue || found.kind != message.kind.rawValue
                    || found.model != message.model
                {
                    try writer.update(
                        message: found.id, role: message.role, content: message.content, model: message.model, usage: message.usage,
                        kind: message.kind)
                    changedAny = true
                }
                continue
            }
            var row = Self.newRow(message, node: tree.nodeIDs[index], in: existing.id, publicID: publicID, position: position)
            if let parent = tree.parents[index] {
                if let parentRow = rowIDs[parent] { row.parentID = parentRow } else { row.parentInBatch = newIndex[parent] }
            } else if let external = tree.externalParents[index] {
                row.parentID = external == ImportedTree.storedLeaf ? existing.currentLeafID : try storedRow(external)?.id
            }
            newIndex[index] = newRows.count
            newRows.append(row)
            position += 1
        }
        let updated = max(updatedAt, existing.updatedAt)
        if (imported.project != nil || imported.gitBranch != nil)
            && (imported.project != existing.project || imported.gitBranch != existing.gitBranch)
        {
            try writer.setPlace(conversation: existing.id, project: imported.project ?? existing.project, gitBranch: imported.gitBranch ?? existing.gitBranch)
            changedAny = true
        }
        let title = imported.title.trimmingCharacters(in: .whitespacesAndNewlines)
        if !title.isEmpty && title != existing.title {
            // A title the lines name (a summary, a custom title), unless a person set one.
            let lastImported = try database.queryFirst(
                "SELECT source_title FROM conversation WHERE id = ?", [.integer(existing.id)]) { $0.optionalText(0) } ?? nil
            if lastImported == existing.title || lastImported == nil {
                try writer.update(
                    conversation: existing.id, title: title, model: imported.model ?? existing.model, createdAt: existing.createdAt,
                    updatedAt: updated, sourceTitle: title)
                changedAny = true
            }
        }
        if try storeAttachments(of: imported, rows: rowIDs, stored: true, find: find) > 0 { changedAny = true }
        guard !newRows.isEmpty else { return changedAny ? .updated : .unchanged }
        let inserted = try writer.insert(messages: newRows)
        for (index, at) in newIndex { rowIDs[index] = inserted[at] }
        try storeAttachments(of: imported, rows: rowIDs, only: { newIndex[$0] != nil }, find: find)
        if updated != existing.updatedAt { try writer.setTimes(conversation: existing.id, createdAt: existing.createdAt, updatedAt: updated) }
        if let model = imported.model, model != existing.model { try writer.setModel(conversation: existing.id, model) }
        // The current branch goes on when the new leaf continues it: its length is the
        // stored branch's and the new messages on the way; else it is counted from the tree.
        guard let leafIndex = tree.leaf, let leaf = rowIDs[leafIndex] else { return .updated }
        var added = 0
        var at: Int? = leafIndex
        var top = leafIndex
        while let current = at, newIndex[current] != nil, added <= imported.messages.count {
            added += 1
            top = current
            at = tree.parents[current]
        }
        let joins: Int64? = at.flatMap { rowIDs[$0] } ?? newRows[newIndex[top] ?? 0].parentID
        if let joins, joins == existing.currentLeafID {
            try writer.setBranch(conversation: existing.id, leaf: leaf, length: existing.branchLength + added)
        } else {
            let nodes = try database.query(
                "SELECT id, parent_id FROM message WHERE conversation_id = ?", [.integer(existing.id)]
            ) { (id: $0.int64(0), parentID: $0.optionalInt64(1)) }
            try setBranch(of: existing.id, tree: ConversationTree(nodes: nodes), leaf: leaf)
        }
        return .updated
    }

    /// A message of an import not stored yet, as the row to insert into a stored conversation
    /// (its public id derived from the conversation's and its node's, or its place's).
    private static func newRow(
        _ message: ImportedMessage, node: String?, in conversationID: Int64, publicID: String, position: Int64
    ) -> Writer.MessageRow {
        Writer.MessageRow(
            publicID: message.publicID ?? StableID.uuid(publicID, node ?? String(position)), conversationID: conversationID,
            position: position, role: message.role, content: message.content, createdAt: message.createdAt, model: message.model,
            sourceNodeID: node, usage: message.usage, kind: message.kind)
    }

    /// Makes `leaf` (else the newest leaf) the conversation's current branch.
    func setBranch(of conversationID: Int64, tree: ConversationTree, leaf: Int64?) throws {
        let chosen = leaf.flatMap { tree.contains($0) ? $0 : nil } ?? tree.newestLeaf
        let length = chosen.map { tree.path(to: $0).count } ?? 0
        try writer.setBranch(conversation: conversationID, leaf: chosen, length: length)
    }

    /// Adds `imported` unless a conversation of the same source and source id is stored
    /// already (then it is left as it is); whether it was added.
    public func add(_ imported: ImportedConversation) throws -> Bool {
        try database.write(savepoint: false) {
            let publicID = imported.publicID ?? StableID.uuid(imported.source, imported.sourceID ?? "")
            let updatedAt = max(imported.updatedAt, imported.createdAt)
            let row = Writer.ConversationRow(
                publicID: publicID, title: imported.title, model: imported.model, source: imported.source,
                sourceID: imported.sourceID, createdAt: imported.createdAt, updatedAt: updatedAt, pinned: imported.pinned,
                sourceTitle: imported.title)
            let mark = try writer.outboxMark()
            guard let id = try writer.insert(row, ignoringDuplicate: true) else { return false }
            try insertMessages(of: imported, tree: ImportedTree(imported), intoNew: id, publicID: publicID, outboxMark: mark)
            return true
        }
    }

    private var writer: Writer { Writer(database: database) }

    /// Whether a conversation with this public id or source id was deleted; with `lifting`,
    /// its tombstones by source id go (the one by public id goes when it is made again,
    /// which tells sync), and it is not.
    private func isBuried(publicID: String, source: String, sourceID: String?, lifting: Bool) throws -> Bool {
        let found = try database.scalarInt(
            """
            SELECT EXISTS (SELECT 1 FROM sync_tombstone WHERE public_id = ?)
                OR EXISTS (SELECT 1 FROM sync_tombstone WHERE source = ? AND source_id = ?)
            """, [.text(publicID), .text(source), SQLValue(sourceID)]) != 0
        guard found else { return false }
        guard lifting else { return true }
        try database.run(
            "DELETE FROM sync_tombstone WHERE source = ? AND source_id = ? AND public_id <> ?",
            [.text(source), SQLValue(sourceID), .text(publicID)])
        return false
    }

    /// Inserts the messages of the conversation `conversationID` just inserted, and its
    /// current branch. When one fails (an id taken by another conversation), the
    /// conversation is deleted again with the messages before it, so that nothing of it is
    /// left, as a savepoint would leave nothing, without the savepoint's journal of every
    /// page touched.
    private func insertMessages(
        of imported: ImportedConversation, tree: ImportedTree, intoNew conversationID: Int64, publicID: String, outboxMark: Int64?,
        find: AttachmentFinder? = nil
    ) throws {
        do {
            let rows = imported.messages.enumerated().lazy.map { index, message in
                Writer.MessageRow(
                    publicID: message.publicID ?? StableID.uuid(publicID, tree.nodeIDs[index] ?? String(index)),
                    conversationID: conversationID, position: Int64(index), role: message.role, content: message.content,
                    createdAt: message.createdAt, model: message.model, parentInBatch: tree.parents[index],
                    sourceNodeID: tree.nodeIDs[index], usage: message.usage, kind: message.kind)
            }
            let ids = try writer.insert(messages: rows)
            if let leaf = tree.leaf, ids.indices.contains(leaf) {
                // The branch's length without building a tree: up the parents from the leaf.
                var length = 1
                var at = leaf
                while let parent = tree.parents[at], length <= ids.count {
                    length += 1
                    at = parent
                }
                try writer.setBranch(conversation: conversationID, leaf: ids[leaf], length: length)
            }
            try storeAttachments(of: imported, rows: ids.map { Optional($0) }, find: find)
        } catch {
            // When this fails too, its error goes up instead, and the transaction with it.
            try writer.discard(conversation: conversationID, since: outboxMark)
            throw error
        }
    }

    /// Stores the attachments of the messages of `imported` (those `only` takes) whose rows
    /// are in `rows`: each new one with its bytes (inline, stored before under the same file
    /// id, or from `find`; none: a reference shown missing), and a stored one whose bytes
    /// were missing with the bytes found now. A file that fails to read (a damaged ZIP entry)
    /// is kept missing with the reason. When this throws, the files it stored are removed
    /// (no savepoint: one made SQLite copy every page of the files to its statement journal
    /// first), and the caller's error handling does the rest. How many attachments were
    /// added or filled.
    @discardableResult
    private func storeAttachments(
        of imported: ImportedConversation, rows: [Int64?], only include: (Int) -> Bool = { _ in true }, stored messages: Bool = false,
        find: AttachmentFinder?
    ) throws -> Int {
        guard imported.messages.contains(where: { !$0.attachments.isEmpty }) else { return 0 }
        let tables = AttachmentTables(database: database)
        /// The content for `attachment`, and why there is none when its bytes could not be
        /// read (then nothing of them is kept: `store` removes what it wrote).
        func content(for attachment: ImportedAttachment) throws -> (id: Int64?, facts: FileFacts?, unreadable: String?) {
            if let data = attachment.data {
                let stored = try tables.store(InMemoryAttachmentSource(data))
                return (stored.id, stored.facts, nil)
            }
            if let hash = attachment.sha256, let known = try tables.content(sha256: hash) { return (known, nil, nil) }
            if let reference = attachment.reference, let known = try tables.storedContent(reference: reference) { return (known, nil, nil) }
            do {
                // A finder that cannot read the bytes says why (too large, a file that changed).
                guard let source = try find?(attachment) else { return (nil, nil, nil) }
                let stored = try database.write(savepoint: false) { try tables.store(source, expecting: attachment.sha256) }
                return (stored.id, stored.facts, nil)
            } catch let error as AttachmentUnreadable {
                return (nil, nil, "could not be read from the export: \(error.reason)")
            }
        }
        let firstNew = try tables.nextContentID()
        do {
            return try storeAttachments(of: imported, rows: rows, only: include, stored: messages, tables: tables, content: content)
        } catch {
            if !database.transactionLost { try tables.removeContents(from: firstNew) }
            throw error
        }
    }

    private func storeAttachments(
        of imported: ImportedConversation, rows: [Int64?], only include: (Int) -> Bool, stored messages: Bool, tables: AttachmentTables,
        content: (ImportedAttachment) throws -> (id: Int64?, facts: FileFacts?, unreadable: String?)
    ) throws -> Int {
        try database.write(savepoint: false) {
            var changed = 0
            var touched: [Int64] = []
            for (index, message) in imported.messages.enumerated() where !message.attachments.isEmpty && include(index) {
                guard index < rows.count, let row = rows[index] else { continue }
                let before = changed
                defer { if changed > before { touched.append(row) } }
                let stored = try tables.stored(message: row)
                for (position, attachment) in message.attachments.enumerated() {
                    if let existing = stored[position] {
                        guard existing.content == nil else { continue }
                        let found = try content(attachment)
                        if let unreadable = found.unreadable {
                            attachmentProblems.append("its attachment \(attachment.name.prefix(80)) \(unreadable)")
                        }
                        guard let id = found.id else { continue }
                        try tables.fill(attachment: existing.id, content: id, facts: found.facts)
                    } else {
                        let found = try content(attachment)
                        var kept = attachment
                        if let unreadable = found.unreadable {
                            kept.absence = unreadable
                            attachmentProblems.append("its attachment \(attachment.name.prefix(80)) \(unreadable)")
                        }
                        // What the bytes themselves say wins over what the source declared.
                        if let facts = found.facts { kept = facts.applied(to: kept) }
                        try tables.insert(message: row, position: position, kept, content: found.id)
                    }
                    changed += 1
                }
            }
            // A message stored before whose files changed: the other machines learn of them
            // (a new message's op, not sent yet, carries its files as they are when it goes).
            if messages {
                let writer = Writer(database: database)
                for row in touched { try writer.changedAttachments(message: row) }
            }
            return changed
        }
    }

    /// How far the session file at `path` was read, when it was.
    public func sourceFile(path: String) throws -> SourceFileState? {
        try database.queryFirst(
            "SELECT path, format, read_to, device, inode, size, modified_ns, window FROM source_file WHERE path = ?", [.text(path)]
        ) { row in
            SourceFileState(
                path: row.text(0), format: row.text(1), readTo: row.int64(2), device: row.int64(3), inode: row.int64(4),
                size: row.int64(5), modifiedNanoseconds: row.int64(6), window: row.blob(7))
        }
    }

    /// Every session file read, by path: for following them.
    public func sourceFiles() throws -> [SourceFileState] {
        try database.query("SELECT path, format, read_to, device, inode, size, modified_ns, window FROM source_file ORDER BY path") { row in
            SourceFileState(
                path: row.text(0), format: row.text(1), readTo: row.int64(2), device: row.int64(3), inode: row.int64(4),
                size: row.int64(5), modifiedNanoseconds: row.int64(6), window: row.blob(7))
        }
    }

    /// Notes how far a session file was read (in the transaction of what was read from it).
    public func recordSourceFile(_ state: SourceFileState) throws {
        try database.write {
            try database.run(
                """
                INSERT OR REPLACE INTO source_file (path, format, read_to, device, inode, size, modified_ns, window)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [.text(state.path), .text(state.format), .integer(max(state.readTo, 0)), .integer(state.device), .integer(state.inode),
                 .integer(max(state.size, 0)), .integer(state.modifiedNanoseconds), .blob(state.window)])
        }
    }

    /// Runs `body` in one write transaction: for a caller that stores many conversations
    /// (with `upsert`, `add`) that must all be kept or none.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try database.write(body)
    }
}

/// A stored message, as an import compares it.
private struct StoredNode {
    var id: Int64
    var publicID: String
    var parentID: Int64?
    var nodeID: String?
    var role: String
    var content: String
    var model: String?
    var usage: MessageUsage
    var position: Int64
    var kind: String
}

/// The messages of an import as a tree: each one's parent (an earlier index), its node id
/// (unique in the conversation), and the current leaf.
struct ImportedTree {
    /// For each message, the index of its parent; nil for a first message.
    var parents: [Int?]
    /// For each message, its node id (unique in the conversation: the importers see to it).
    var nodeIDs: [String?]
    /// The index of the last message of the branch shown by default.
    var leaf: Int?
    /// For a message whose parent (by node id) is not in the import, that node id: a
    /// stored message, when the import is what was appended to a session (`storedLeaf`:
    /// the stored conversation's current leaf).
    var externalParents: [Int: String] = [:]
    /// Stands for the stored conversation's current leaf in `externalParents`.
    static let storedLeaf = "\u{0}current leaf"

    init(_ imported: ImportedConversation) {
        // Node ids are looked up only when something names a message by its node id (every
        // import gives parents by index, so this runs once per imported message and
        // hashes nothing then); the importers keep node ids unique in a conversation.
        let byNode: [String: Int]
        if imported.currentNodeID != nil || imported.messages.contains(where: { if case .node = $0.parent { true } else { false } }) {
            var found: [String: Int] = [:]
            for (index, message) in imported.messages.enumerated() {
                if let node = message.nodeID, found[node] == nil { found[node] = index }
            }
            byNode = found
        } else {
            byNode = [:]
        }
        var parents: [Int?] = []
        parents.reserveCapacity(imported.messages.count)
        var hasChildren = Array(repeating: false, count: imported.messages.count)
        var external: [Int: String] = [:]
        for (index, message) in imported.messages.enumerated() {
            let parent: Int? =
                switch message.parent {
                case .previous: index > 0 ? index - 1 : nil
                case .root: nil
                // A parent that is not earlier (missing, or after it) makes a first message.
                case .node(let node): byNode[node].flatMap { $0 < index ? $0 : nil }
                case .index(let earlier): earlier >= 0 && earlier < index ? earlier : nil
                case .afterStored: nil
                }
            if parent == nil, case .node(let node) = message.parent, byNode[node] == nil { external[index] = node }
            if case .afterStored = message.parent { external[index] = Self.storedLeaf }
            parents.append(parent)
            if let parent { hasChildren[parent] = true }
        }
        externalParents = external
        self.parents = parents
        self.nodeIDs = imported.messages.map(\.nodeID)
        var named: Int?
        if let index = imported.currentIndex, imported.messages.indices.contains(index) {
            named = index
        } else if let current = imported.currentNodeID, let index = byNode[current] {
            named = index
        }
        // The newest leaf (the latest time, the last in the file breaking ties) at or below
        // the message named current, or of all: a branch shown by default ends at a leaf, so
        // that no message below it is out of sight (a current node the import left out, or a
        // Claude leaf that is not one, names a message with answers below it).
        var below = Array(repeating: named == nil, count: imported.messages.count)
        if let named {
            below[named] = true
            for index in (named + 1)..<imported.messages.count {
                if let parent = parents[index], below[parent] { below[index] = true }
            }
        }
        leaf = imported.messages.indices.filter { below[$0] && !hasChildren[$0] }.max { lhs, rhs in
            let left = imported.messages[lhs].createdAt, right = imported.messages[rhs].createdAt
            return left == right ? lhs < rhs : left < right
        }
    }
}
