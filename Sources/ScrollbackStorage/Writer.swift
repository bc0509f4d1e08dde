import CSQLite
import Foundation
import ScrollbackModel

/// The one place that writes the `conversation`, `message` and `branch_choice` tables: every
/// INSERT, UPDATE and DELETE of them is here, so that whatever follows the writes sees all of
/// them: the search index and the counts (through the schema's triggers), the tombstones of
/// deleted conversations, and, while sync is on, the outbox (`Outbox`), in the same
/// transaction as the change.
///
/// Row ids follow time (see `Schema.version2`): a new row gets the smallest free id in its
/// millisecond's range of 65,536, so that id order is time order and FTS5, walking its
/// index by rowid, returns the newest first without sorting.
struct Writer {
    let database: Database

    enum Table: String {
        case conversation, message
    }

    static let tieBreakers: Int64 = 65_536
    /// Times are clamped to ±2^46 ms (about the years −260 to 4199) for the id, so that
    /// `time × 65,536` plus any number of rows after it fits in 64 bits; the stored time is
    /// never clamped.
    static let timeLimit: Int64 = 1 << 46

    /// The first id of `time`'s range.
    static func baseID(at time: Timestamp) -> Int64 {
        min(max(time.milliseconds, -timeLimit), timeLimit - 1) * tieBreakers
    }

    /// A free id for a row of `table` made at `time`: after the last one of the same
    /// millisecond; when all 65,536 are taken, the first free id after them (so the order
    /// stays right but for that crowd).
    ///
    /// - Parameter previous: the id this writer gave last in `table` in this transaction,
    ///   when the caller keeps it: when it is in `time`'s range it is that range's last
    ///   (ids are given after the last), so the next one needs no query.
    func newID(in table: Table, at time: Timestamp, after previous: Int64? = nil) throws -> Int64 {
        let base = Self.baseID(at: time)
        let end = base + (Self.tieBreakers - 1)
        if let previous, previous >= base, previous < end { return previous + 1 }
        // Bound directly, without an array of values: this runs once per imported message.
        let statement = try database.statement(table == .message ? Self.lastMessageID : Self.lastConversationID)
        defer { statement.reset() }
        try statement.bind(.integer(base), at: 1)
        try statement.bind(.integer(end), at: 2)
        guard try statement.step() else { return base }
        let last = sqlite3_column_int64(statement.handle, 0)
        if last < end { return last + 1 }
        let free = try database.queryFirst(
            """
            SELECT t.id + 1 FROM \(table.rawValue) AS t
             WHERE t.id >= ? AND t.id < 9223372036854775807
               AND NOT EXISTS (SELECT 1 FROM \(table.rawValue) AS u WHERE u.id = t.id + 1)
             ORDER BY t.id LIMIT 1
            """, [.integer(end)]
        ) { $0.int64(0) }
        guard let free else { throw StorageError.conflict("no free row id is left after \(time); nothing was written") }
        return free
    }

    private static let lastMessageID = "SELECT id FROM message WHERE id >= ? AND id <= ? ORDER BY id DESC LIMIT 1"
    private static let lastConversationID = "SELECT id FROM conversation WHERE id >= ? AND id <= ? ORDER BY id DESC LIMIT 1"

    // MARK: Conversations

    struct ConversationRow {
        var publicID: String
        var title: String
        var model: String?
        var source: String
        var sourceID: String?
        var createdAt: Timestamp
        var updatedAt: Timestamp
        var pinned: Bool
        /// The title its export gave (an import's), else nil (see `Schema.version7`).
        var sourceTitle: String? = nil
        var project: String? = nil
        var gitBranch: String? = nil
    }

    /// Inserts a conversation with a new id (or `id`, to put a deleted one back); returns
    /// its id, or nil when `ignoringDuplicate` and its source and source id are taken.
    @discardableResult
    func insert(_ row: ConversationRow, id: Int64? = nil, ignoringDuplicate: Bool = false) throws -> Int64? {
        let rowID = try id ?? newID(in: .conversation, at: row.createdAt)
        try database.run(
            """
            INSERT INTO conversation (id, public_id, title, model, source, source_id, created_at, updated_at, pinned, source_title,
                                      project, git_branch)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)\(ignoringDuplicate ? " ON CONFLICT (source, source_id) DO NOTHING" : "")
            """,
            [
                .integer(rowID), .text(row.publicID), .text(row.title), SQLValue(row.model), .text(row.source),
                SQLValue(row.sourceID), .integer(row.createdAt.milliseconds), .integer(row.updatedAt.milliseconds),
                SQLValue(row.pinned), SQLValue(row.sourceTitle), SQLValue(row.project), SQLValue(row.gitBranch),
            ])
        guard database.changes == 1 else { return nil }
        try database.indexingLoad?.inserted(conversation: rowID)
        try made(conversation: row.publicID)
        return rowID
    }

    /// A conversation made (or made again): a tombstone of it is lifted, and the outbox
    /// says so (a restore first, when it was deleted); while sync is off, a restore's clock
    /// is recorded all the same, as an edit's is.
    private func made(conversation publicID: String) throws {
        guard database.applyingRemote == nil else { return }
        try database.run("DELETE FROM sync_tombstone WHERE public_id = ?", [.text(publicID)])
        let restored = database.changes > 0
        guard let outbox = try database.outbox() else {
            if restored, !database.repairingLocally {
                try Outbox.record(try Outbox.tickUnsynced(in: database), entity: publicID, field: "restore", in: database)
            }
            return
        }
        if restored { try outbox.append(.restore, entity: publicID, in: database) }
        try outbox.append(.conversation, entity: publicID, in: database)
    }

    /// Appends `kinds` for the conversation `id` when sync is on.
    private func changed(conversation id: Int64, _ kinds: SyncOpKind...) throws {
        try changed(conversation: id, kinds, edit: false)
    }

    /// Appends `kinds` for the conversation `id` when sync is on. An `edit` is the person's
    /// (a rename, a pin, a branch chosen), not an import's: while sync is off, the clocks of
    /// its fields are recorded all the same (see `Schema.version7`), so that it keeps its
    /// time once sync is turned on, on every machine.
    private func changed(conversation id: Int64, _ kinds: [SyncOpKind], edit: Bool) throws {
        let outbox = try database.outbox()
        guard outbox != nil || (edit && database.applyingRemote == nil && !database.repairingLocally),
            let publicID = try database.queryFirst("SELECT public_id FROM conversation WHERE id = ?", [.integer(id)], { $0.text(0) })
        else { return }
        guard let outbox else {
            let clock = try Outbox.tickUnsynced(in: database)
            for field in kinds.compactMap(\.field) { try Outbox.record(clock, entity: publicID, field: field, in: database) }
            return
        }
        for kind in kinds { try outbox.append(kind, entity: publicID, in: database) }
    }

    /// Appends a message op for the message `id` when sync is on.
    private func changed(message id: Int64) throws {
        guard let outbox = try database.outbox(),
            let publicID = try database.queryFirst("SELECT public_id FROM message WHERE id = ?", [.integer(id)], { $0.text(0) })
        else { return }
        try setClock(message: id, try outbox.append(.message, entity: publicID, in: database))
    }

    /// The files of the message `id` (stored before) changed: a message op carries them to
    /// the other machines when sync is on.
    func changedAttachments(message id: Int64) throws {
        guard database.applyingRemote == nil else { return }
        try changed(message: id)
    }

    /// Sets the clock of the change the message `id` shows (kept in its row; `sync_clock`
    /// holds the conversations' fields).
    func setClock(message id: Int64, _ clock: HybridClock) throws {
        try database.run("UPDATE message SET clock = ? WHERE id = ?", [.text(clock.text), .integer(id)])
    }

    /// Sync turned off for good: no message keeps a clock.
    func forgetMessageClocks() throws {
        try database.run("UPDATE message SET clock = NULL WHERE clock IS NOT NULL")
    }

    /// A stored conversation as a newer import has it; `sourceTitle` is the export's title.
    func update(
        conversation id: Int64, title: String, model: String?, createdAt: Timestamp, updatedAt: Timestamp, sourceTitle: String
    ) throws {
        try database.indexingLoad?.changedRows()
        try database.run(
            "UPDATE conversation SET title = ?, model = ?, created_at = ?, updated_at = ?, source_title = ? WHERE id = ?",
            [.text(title), SQLValue(model), .integer(createdAt.milliseconds), .integer(updatedAt.milliseconds), .text(sourceTitle),
             .integer(id)])
        try changed(conversation: id, .title, .model, .times)
    }

    /// The export's title as last imported: this machine's own note, sent nowhere.
    /// Where a coding agent's session ran, as a newer import (or another machine) has it;
    /// sent with the conversation's times (a session that goes on may change branch).
    func setPlace(conversation id: Int64, project: String?, gitBranch: String?) throws {
        try database.run(
            "UPDATE conversation SET project = ?, git_branch = ? WHERE id = ?", [SQLValue(project), SQLValue(gitBranch), .integer(id)])
        try changed(conversation: id, .times)
    }

    func setSourceTitle(conversation id: Int64, _ title: String) throws {
        try database.run("UPDATE conversation SET source_title = ? WHERE id = ?", [.text(title), .integer(id)])
    }

    func rename(conversation id: Int64, to title: String) throws {
        try database.indexingLoad?.changedRows()
        try database.run("UPDATE conversation SET title = ? WHERE id = ?", [.text(title), .integer(id)])
        try changed(conversation: id, [.title], edit: true)
    }

    func setModel(conversation id: Int64, _ model: String?) throws {
        try database.run("UPDATE conversation SET model = ? WHERE id = ?", [SQLValue(model), .integer(id)])
        try changed(conversation: id, .model)
    }

    func setTimes(conversation id: Int64, createdAt: Timestamp, updatedAt: Timestamp) throws {
        try database.run(
            "UPDATE conversation SET created_at = ?, updated_at = ? WHERE id = ?",
            [.integer(createdAt.milliseconds), .integer(max(updatedAt, createdAt).milliseconds), .integer(id)])
        try changed(conversation: id, .times)
    }

    func setPinned(conversation id: Int64, _ pinned: Bool) throws {
        try database.run("UPDATE conversation SET pinned = ? WHERE id = ?", [SQLValue(pinned), .integer(id)])
        try changed(conversation: id, [.pin], edit: true)
    }

    /// Pins or unpins each of `ids` that is not so already; returns how many changed.
    func setPinned(conversations ids: [Int64], _ pinned: Bool) throws -> Int {
        var changed = 0
        for id in ids {
            try database.run(
                "UPDATE conversation SET pinned = ? WHERE id = ? AND pinned <> ?", [SQLValue(pinned), .integer(id), SQLValue(pinned)])
            guard database.changes == 1 else { continue }
            changed += 1
            try self.changed(conversation: id, [.pin], edit: true)
        }
        return changed
    }

    /// Deletes a conversation and (by cascade) its messages and remembered branches; whether
    /// it was there.
    func delete(conversation id: Int64) throws -> Bool {
        try delete(conversations: [id]) == 1
    }

    /// Where the outbox is now (nil when sync is off): for `discard(conversation:since:)`.
    func outboxMark() throws -> Int64? {
        try database.outbox()?.nextSeq
    }

    /// Takes back a conversation this transaction made and could not finish (an import's
    /// message failed): its rows and the ops appended since `mark` go, and no tombstone is
    /// left, since it was never there.
    func discard(conversation id: Int64, since mark: Int64?) throws {
        try database.indexingLoad?.changedRows()
        try database.run("DELETE FROM conversation WHERE id = ?", [.integer(id)])
        if let mark, let outbox = try database.outbox() { try outbox.truncate(from: mark, in: database) }
    }

    /// Deletes the conversations `ids` and their messages, each table in one statement (the
    /// messages first, so that the cascade finds none): a third of the time of deleting them
    /// one by one. How many of them were there.
    func delete(conversations ids: some Sequence<Int64>) throws -> Int {
        try database.indexingLoad?.changedRows()
        // Emptied first: rows left by a failure before must never be deleted by this call.
        try database.execute("CREATE TEMP TABLE IF NOT EXISTS doomed (id INTEGER PRIMARY KEY); DELETE FROM temp.doomed;")
        let insert = try database.statement("INSERT OR IGNORE INTO temp.doomed (id) VALUES (?)")
        defer { insert.reset() }
        for id in ids {
            try insert.bind(.integer(id), at: 1)
            while try insert.step() {}
            insert.reset()
        }
        try bury()
        try database.run("DELETE FROM message WHERE conversation_id IN (SELECT id FROM temp.doomed)")
        try database.run("DELETE FROM conversation WHERE id IN (SELECT id FROM temp.doomed)")
        let deleted = database.changes
        try database.execute("DELETE FROM temp.doomed")
        return deleted
    }

    /// Records a tombstone for each conversation in `temp.doomed` (stamped with the remote
    /// op's clock while one is applied), and, when sync is on, a delete op each and its
    /// fields in `sync_shadow` (their clocks stay); its messages' clocks go with their rows.
    private func bury() throws {
        let outbox = try database.outbox()
        let doomed = try database.query(
            "SELECT public_id, source, source_id FROM conversation WHERE id IN (SELECT id FROM temp.doomed) ORDER BY id"
        ) { (publicID: $0.text(0), source: $0.text(1), sourceID: $0.optionalText(2)) }
        // While sync is off, one reading for all: each names another conversation.
        let unsynced = outbox == nil && database.applyingRemote == nil && !doomed.isEmpty ? try Outbox.tickUnsynced(in: database) : nil
        let syncing = try database.syncOutbox() != nil
        try database.run("DELETE FROM sync_unclocked WHERE id IN (SELECT id FROM temp.doomed)")
        for conversation in doomed {
            let clock = database.applyingRemote ?? outbox?.tick() ?? unsynced ?? .origin(of: Outbox.unsyncedMachine)
            try database.run(
                """
                INSERT INTO sync_tombstone (public_id, source, source_id, clock) VALUES (?, ?, ?, ?)
                ON CONFLICT (public_id) DO UPDATE SET clock = max(clock, excluded.clock)
                """, [.text(conversation.publicID), .text(conversation.source), SQLValue(conversation.sourceID), .text(clock.text)])
            if let outbox {
                let payload = SyncRecord(kind: .delete, source: conversation.source, sourceID: conversation.sourceID).encoded()
                try outbox.append(.delete, entity: conversation.publicID, payload: payload, clock: clock, in: database)
            }
            if syncing {
                try database.run(
                    """
                    INSERT OR REPLACE INTO sync_shadow (public_id, title, model, pinned, created_at, updated_at)
                    SELECT public_id, title, model, pinned, created_at, updated_at FROM conversation WHERE public_id = ?
                    """, [.text(conversation.publicID)])
            }
        }
    }

    // MARK: Messages

    struct MessageRow {
        var publicID: String
        var conversationID: Int64
        var position: Int64
        var role: Role
        var content: String
        var createdAt: Timestamp
        var model: String?
        /// The parent's row id, when it is stored already.
        var parentID: Int64? = nil
        /// The parent as the index of an earlier row of the same `insert(messages:)` call.
        var parentInBatch: Int? = nil
        var sourceNodeID: String? = nil
        var usage = MessageUsage()
        /// The clock of the change that brought it, for a message from another machine.
        var clock: HybridClock? = nil
        var kind: MessageKind = .text
    }

    @discardableResult
    func insert(_ row: MessageRow, id: Int64? = nil) throws -> Int64 {
        let rowID = try id ?? newID(in: .message, at: row.createdAt)
        let statement = try database.statement(Self.insertMessage)
        defer { statement.reset() }
        var row = row
        // Its op first, so that the row is written once, with the op's clock (a failure
        // takes both back with the transaction).
        if let stamp = try database.outbox()?.append(.message, entity: row.publicID, in: database) { row.clock = stamp }
        try insert(row, id: rowID, with: statement)
        return rowID
    }

    /// Inserts the messages of one conversation, parents before children, with new ids: one
    /// prepared statement for all (this is every imported message's path). Returns their ids
    /// in order.
    @discardableResult
    func insert(messages rows: some Sequence<MessageRow>) throws -> [Int64] {
        let rows = Array(rows)
        let statement = try database.statement(Self.insertMessage)
        defer { statement.reset() }
        var previous: Int64?
        var ids: [Int64] = []
        ids.reserveCapacity(rows.count)
        let outbox = try database.outbox()
        var free = try FreeMessageIDs(for: rows, in: self)
        for var row in rows {
            if let parent = row.parentInBatch {
                guard ids.indices.contains(parent) else {
                    throw StorageError.conflict("a message's parent comes after it; nothing was written")
                }
                row.parentID = ids[parent]
            }
            let rowID: Int64
            if let id = free?.take(at: row.createdAt) {
                rowID = id
            } else {
                // A full millisecond's first free id is in another's range, which the ids
                // found at the start no longer describe: each message asks from here on.
                free = nil
                rowID = try newID(in: .message, at: row.createdAt, after: previous)
            }
            if let stamp = try outbox?.append(.message, entity: row.publicID, in: database) { row.clock = stamp }
            try insert(row, id: rowID, with: statement)
            statement.reset()
            previous = rowID
            ids.append(rowID)
        }
        return ids
    }

    /// The ids `newID` would give a conversation's messages, from one query for the ids
    /// stored in the span of their times instead of one per message (a tenth of an
    /// import's inserting): the ids stored in that span when the insert starts, and the last
    /// id given in each millisecond since. Nil when the span holds many stored rows (other
    /// conversations of the same hours); then each message asks, as one inserted alone does.
    struct FreeMessageIDs {
        private let stored: [Int64]
        private var given: [Int64: Int64] = [:]
        static let mostStored = 1_000

        init?(for rows: [MessageRow], in writer: Writer) throws {
            guard rows.count > 1, let first = rows.first?.createdAt.milliseconds else { return nil }
            let times = rows.reduce((first, first)) { (min($0.0, $1.createdAt.milliseconds), max($0.1, $1.createdAt.milliseconds)) }
            let low = Writer.baseID(at: Timestamp(milliseconds: times.0))
            let high = Writer.baseID(at: Timestamp(milliseconds: times.1)) + (Writer.tieBreakers - 1)
            let stored = try writer.database.query(
                "SELECT id FROM message WHERE id >= ? AND id <= ? ORDER BY id LIMIT \(Self.mostStored + 1)",
                [.integer(low), .integer(high)]
            ) { $0.int64(0) }
            guard stored.count <= Self.mostStored else { return nil }
            self.stored = stored
        }

        /// The id for a message at `time`, as `Writer.newID` gives it; nil when its
        /// millisecond is full (then `newID` finds the first free one after it).
        mutating func take(at time: Timestamp) -> Int64? {
            let base = Writer.baseID(at: time)
            let end = base + (Writer.tieBreakers - 1)
            var last = given[base]
            // The last stored id at or below `end`, by binary search.
            var low = 0, high = stored.count
            while low < high {
                let middle = (low + high) / 2
                if stored[middle] <= end { low = middle + 1 } else { high = middle }
            }
            if low > 0, stored[low - 1] >= base { last = max(last ?? stored[low - 1], stored[low - 1]) }
            let id: Int64
            if let last {
                guard last < end else { return nil }
                id = last + 1
            } else {
                id = base
            }
            given[base] = id
            return id
        }
    }

    private static let insertMessage = """
        INSERT INTO message (id, public_id, conversation_id, position, role, content, created_at, model,
                             parent_id, source_node_id, input_tokens, output_tokens, duration_ms, clock, kind)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    private func insert(_ row: MessageRow, id: Int64, with statement: Statement) throws {
        try statement.bind(.integer(id), at: 1)
        try statement.bind(.text(row.publicID), at: 2)
        try statement.bind(.integer(row.conversationID), at: 3)
        try statement.bind(.integer(row.position), at: 4)
        try statement.bind(.text(row.role.rawValue), at: 5)
        try statement.bind(.text(row.content), at: 6)
        try statement.bind(.integer(row.createdAt.milliseconds), at: 7)
        // What is absent stays NULL: `reset` clears the bindings (this runs per message).
        if let model = row.model { try statement.bind(.text(model), at: 8) }
        if let parent = row.parentID { try statement.bind(.integer(parent), at: 9) }
        if let node = row.sourceNodeID { try statement.bind(.text(node), at: 10) }
        if let count = row.usage.inputTokens { try statement.bind(.integer(count), at: 11) }
        if let count = row.usage.outputTokens { try statement.bind(.integer(count), at: 12) }
        if let duration = row.usage.durationMilliseconds { try statement.bind(.integer(duration), at: 13) }
        if let clock = row.clock { try statement.bind(.text(clock.text), at: 14) }
        try statement.bind(.text(row.kind.rawValue), at: 15)
        while try statement.step() {}
        try database.indexingLoad?.inserted(message: id, conversation: row.conversationID, at: row.createdAt, hidden: !row.kind.isSeen)
    }

    /// A stored message as a newer import has it: its text, role, model, usage and kind.
    func update(message id: Int64, role: Role, content: String, model: String?, usage: MessageUsage, kind: MessageKind) throws {
        try database.indexingLoad?.changedRows()
        try database.run(
            "UPDATE message SET role = ?, content = ?, model = ?, input_tokens = ?, output_tokens = ?, duration_ms = ?, kind = ? WHERE id = ?",
            [.text(role.rawValue), .text(content), SQLValue(model), SQLValue(usage.inputTokens), SQLValue(usage.outputTokens),
             SQLValue(usage.durationMilliseconds), .text(kind.rawValue), .integer(id)])
        try changed(message: id)
    }

    /// Hangs a stored message under another of its conversation (`parent` stored already):
    /// a newer import found the message an earlier one left out between them.
    func reparent(message id: Int64, under parent: Int64?) throws {
        try database.run("UPDATE message SET parent_id = ? WHERE id = ?", [SQLValue(parent), .integer(id)])
        try changed(message: id)
    }

    /// Records the export node a message stored before node ids were kept came from.
    func setSourceNode(message id: Int64, _ nodeID: String) throws {
        try database.run("UPDATE message SET source_node_id = ? WHERE id = ?", [.text(nodeID), .integer(id)])
        try changed(message: id)
    }

    /// Makes a message a first one (`check --repair`, cutting a loop of parents).
    func detach(message id: Int64) throws {
        try database.run("UPDATE message SET parent_id = NULL WHERE id = ?", [.integer(id)])
        try changed(message: id)
    }

    /// Numbers the messages of a conversation again in tree order (parents before children),
    /// after a message was hung under one stored after it; nothing when they are in order.
    func renumberInTreeOrder(conversation id: Int64) throws {
        let rows = try database.query(
            "SELECT id, parent_id, position FROM message WHERE conversation_id = ? ORDER BY position", [.integer(id)]
        ) { (id: $0.int64(0), parent: $0.optionalInt64(1), position: $0.int64(2)) }
        let order = ConversationTree(nodes: rows.map { (id: $0.id, parentID: $0.parent) }).order
        guard order.count == rows.count, order != rows.map(\.id) else { return }
        try renumber(order, above: (rows.map(\.position).max() ?? 0) + 1)
    }

    /// Gives the messages `order` (of one conversation) the positions 0, 1, 2… in that order,
    /// through numbers from `above` up (positions are unique in a conversation, and may not
    /// be negative).
    func renumber(_ order: [Int64], above: Int64) throws {
        for (offset, id) in order.enumerated() {
            try database.run("UPDATE message SET position = ? WHERE id = ?", [.integer(above + Int64(offset)), .integer(id)])
        }
        for (offset, id) in order.enumerated() {
            try database.run("UPDATE message SET position = ? WHERE id = ?", [.integer(Int64(offset)), .integer(id)])
        }
    }

    // MARK: Branches

    /// The branch a conversation shows by default: its last message and its length. Neither
    /// the updated time nor the search index changes.
    ///
    /// - Parameter chosen: the person chose it (in the reader), rather than an import or a
    ///   restore setting it: an edit, whose clock is recorded while sync is off too.
    func setBranch(conversation id: Int64, leaf: Int64?, length: Int, chosen: Bool = false) throws {
        try database.run(
            "UPDATE conversation SET current_leaf_id = ?, branch_length = ? WHERE id = ?",
            [SQLValue(leaf), .integer(Int64(length)), .integer(id)])
        try changed(conversation: id, [.leaf], edit: chosen)
    }

    /// Remembers that the reader left the branch through `message` while on `leaf`.
    func remember(conversation id: Int64, message: Int64, leaf: Int64) throws {
        try database.run(
            "INSERT OR REPLACE INTO branch_choice (conversation_id, message_id, leaf_id) VALUES (?, ?, ?)",
            [.integer(id), .integer(message), .integer(leaf)])
    }

    // MARK: Counts

    /// What new messages add to their conversation while the count triggers are set aside
    /// (a bulk load, a page of synced ops), as `message_counted` would have added it.
    struct AddedMessages {
        var messages = 0
        var hidden = 0
        var latest: Int64
    }

    /// Adds `added` (by conversation id) to the conversations' counts and updated times.
    func count(_ added: [Int64: AddedMessages]) throws {
        guard !added.isEmpty else { return }
        let update = try database.statement(
            """
            UPDATE conversation SET message_count = message_count + ?, hidden_count = hidden_count + ?, updated_at = max(updated_at, ?)
             WHERE id = ?
            """)
        defer { update.reset() }
        for (conversation, count) in added {
            try update.bind(.integer(Int64(count.messages)), at: 1)
            try update.bind(.integer(Int64(count.hidden)), at: 2)
            try update.bind(.integer(count.latest), at: 3)
            try update.bind(.integer(conversation), at: 4)
            while try update.step() {}
            update.reset()
        }
    }

    /// Every conversation's message count and updated time as `message_counted` keeps them,
    /// and the count of conversations: after a bulk load (which sets the trigger aside) or a
    /// repair.
    func recount() throws {
        try database.execute(
            """
            UPDATE conversation SET message_count = counted.messages, hidden_count = counted.hidden,
                   updated_at = max(updated_at, coalesce(counted.latest, updated_at))
              FROM (SELECT c.id AS id, count(m.id) AS messages, max(m.created_at) AS latest,
                           count(m.id) FILTER (WHERE m.kind IN (\(MessageKind.hiddenSQLList))) AS hidden
                      FROM conversation AS c LEFT JOIN message AS m ON m.conversation_id = c.id GROUP BY c.id) AS counted
             WHERE counted.id = conversation.id
               AND (conversation.message_count <> counted.messages OR conversation.updated_at < counted.latest
                    OR conversation.hidden_count <> counted.hidden);
            """)
        try retally()
    }

    /// The count of conversations in `tally`, counted: after a bulk delete (which sets the
    /// trigger aside) or a repair.
    func retally() throws {
        try database.execute("INSERT OR REPLACE INTO tally (name, value) SELECT 'conversations', count(*) FROM conversation")
    }
}
