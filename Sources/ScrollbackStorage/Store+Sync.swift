import Foundation
import ScrollbackModel

/// One of this machine's ops on its way to the server: the entity as it is now, in bytes
/// to seal (see `SyncRecord`).
public struct OutgoingOp: Sendable, Equatable {
    public let seq: Int64
    public let opID: String
    public let entity: String
    public let clock: HybridClock
    public let plaintext: [UInt8]
}

/// An op of another machine, opened.
public struct IncomingOp: Sendable, Equatable {
    public let machine: String
    public let seq: Int64
    public let entity: String
    public let clock: HybridClock
    public let plaintext: [UInt8]

    public init(machine: String, seq: Int64, entity: String, clock: HybridClock, plaintext: [UInt8]) {
        self.machine = machine
        self.seq = seq
        self.entity = entity
        self.clock = clock
        self.plaintext = plaintext
    }
}

/// The local side of sync, as `sync status` shows it.
public struct LocalSyncState: Sendable, Equatable {
    /// This machine's id; nil when sync is off and forgotten (or was never on).
    public var machine: String?
    /// Sync is off, but this machine still notes its changes, for `sync init` to send as
    /// the same machine.
    public var paused = false
    /// Sync is on: the machine syncs.
    public var isOn: Bool { machine != nil && !paused }
    /// The number the next op made here gets (1 when none was made).
    public var nextSeq: Int64 = 1
    /// Ops waiting to be sent.
    public var pending: Int
    /// Ops from elsewhere waiting for what they build on.
    public var parked: Int
    /// When a sync last completed.
    public var lastSync: Timestamp?
    /// The machines whose ops were applied here, with the last one applied.
    public var cursors: [String: Int64]
    /// What the last sync said when it did not complete, and since when syncs fail; nil
    /// when the last one completed (or none ran).
    public var failure: SyncFailure? = nil
}

/// The last sync failed: what it said, when, and when the failures began.
public struct SyncFailure: Sendable, Equatable {
    public var message: String
    /// The first failure since the last sync that completed.
    public var since: Timestamp
    public var last: Timestamp
}

/// What applying a page of ops did.
public struct ApplyResult: Sendable, Equatable {
    public var applied = 0
    /// Older than what is here, or for a deleted conversation.
    public var ignored = 0
    public var parked = 0
}

extension Store {
    private func sentThrough() throws -> Int64 { try Outbox.sentThrough(in: database) }

    public func localSyncState() throws -> LocalSyncState {
        try database.read {
            let outbox = try Outbox.load(database)
            let settings = SettingsTable(database: database)
            let last = try settings.stored(.syncLast).map(Timestamp.init(milliseconds:))
            var cursors: [String: Int64] = [:]
            for (machine, seq) in try database.query("SELECT machine, seq FROM sync_cursor", [], { ($0.text(0), $0.int64(1)) }) {
                cursors[machine] = seq
            }
            let paused = try settings.isSet(.syncPaused)
            let failedAt = Timestamp(milliseconds: try settings.value(.syncFailedAt))
            let failingSince = try settings.stored(.syncFailingSince).map(Timestamp.init(milliseconds:)) ?? failedAt
            let failure = try settings.stored(.syncFailure).map { SyncFailure(message: $0, since: failingSince, last: failedAt) }
            return LocalSyncState(
                machine: outbox?.machine, paused: paused, nextSeq: outbox?.nextSeq ?? 1,
                pending: Int(try database.scalarInt("SELECT count(*) FROM sync_outbox WHERE seq > ?", [.integer(try sentThrough())])),
                parked: Int(try database.scalarInt("SELECT count(*) FROM sync_parked")), lastSync: last, cursors: cursors,
                failure: failure)
        }
    }

    /// Turns sync on with the machine id `machine`: everything stored is put in the outbox.
    /// Returns how many ops were queued.
    ///
    /// What was merely stored (imported, received before) carries no edit, and is stamped
    /// with the machine's base clock, older than any edit: on the first machine (`joining`
    /// false: the server holds no history yet) the origin's next reading, and on a `joining`
    /// one the origin, older than that, so that a machine joining late does not undo the
    /// server's history with its own copies (where both have a conversation, the server's
    /// fields win). An edit made here while sync was off keeps the clock it recorded then
    /// (with this machine's id now), so that it wins over what was merely stored anywhere
    /// and over older edits, on every machine, whichever joins first. A conversation stored
    /// before edits had clocks (`sync_unclocked`, see `Schema.version7`) may have been
    /// edited at any time: on the first machine it is stamped with this moment, and on a
    /// joining one it is stored state like any other.
    public func turnSyncOn(machine: String, joining: Bool) throws -> Int {
        guard HybridClock.isMachineID(machine) else { throw StorageError.conflict("a machine id is 32 hex digits") }
        return try database.write {
            if let existing = try Outbox.load(database) {
                throw StorageError.conflict("sync is on already here (machine \(existing.machine))")
            }
            try clearSyncState()
            // The edits' clocks become this machine's; the clock goes on after all of them.
            let unsynced = Outbox.unsyncedMachine
            try database.run(
                "UPDATE sync_clock SET clock = substr(clock, 1, 20) || ? WHERE substr(clock, 21) = ?", [.text(machine), .text(unsynced)])
            try database.run(
                "UPDATE sync_tombstone SET clock = substr(clock, 1, 20) || ? WHERE substr(clock, 21) = ?", [.text(machine), .text(unsynced)])
            var now = try Outbox.tickUnsynced(in: database)
            now.machine = machine
            let base = HybridClock(wall: 0, counter: joining ? 0 : 1, machine: machine)
            let origin = base.text
            let legacy = joining ? origin : now.text
            if !joining {
                // Here too, their fields are as of now: what comes from elsewhere older than
                // this does not replace them.
                try database.run(
                    """
                    INSERT OR IGNORE INTO sync_clock (entity, field, clock)
                    SELECT c.public_id, f.field, ? FROM sync_unclocked AS u JOIN conversation AS c ON c.id = u.id
                     CROSS JOIN (SELECT '*' AS field UNION ALL SELECT 'leaf') AS f
                    """, [.text(now.text)])
            }
            let queued = try Outbox.start(machine: machine, now: now, base: base, legacy: legacy, in: database)
            try database.run("DELETE FROM sync_unclocked")
            return Int(queued)
        }
    }

    /// Turns sync off; the data and the tombstones stay. Unless `forget`, the machine stays
    /// as it was and goes on noting its changes in the outbox, stamped with their clocks, so
    /// that `resumeSync()` sends them as its own: a machine that joined again as a new one
    /// would send what it holds as older than any change (see `turnSyncOn`), and edits made
    /// while off would give way to the server's copies. With `forget`, the outbox, clocks,
    /// cursors and parked ops go, and the machine id with them.
    public func turnSyncOff(forget: Bool) throws {
        try database.write {
            if forget { return try clearSyncState() }
            guard try Outbox.load(database) != nil else { throw StorageError.conflict("sync is off here already") }
            try SettingsTable(database: database).set(true, for: .syncPaused)
        }
    }

    /// Turns sync on again for the machine kept by `turnSyncOff(forget: false)`.
    public func resumeSync() throws {
        try database.write {
            guard try Outbox.load(database) != nil else { throw StorageError.conflict("no machine was kept here; sync init joins as a new one") }
            try SettingsTable(database: database).remove(.syncPaused)
        }
    }

    /// A restored copy's sync, made a new machine's (`restore`): the machine it was may have
    /// sent changes after this copy was made, under the numbers this copy would use next,
    /// and the server refuses a number twice. The new machine reads the old one's changes
    /// from where this copy's own end (so that what it sent after the copy comes back like
    /// any other machine's), keeps its cursors of the others, and sends again, under new
    /// numbers and op ids, the ops this copy had not sent (another machine takes an op it
    /// has already as older than or as old as what it holds). Nil when sync is off here
    /// (never turned on, or forgotten); a paused machine stays paused.
    public func continueAsNewMachine() throws -> (previous: String, machine: String, resent: Int)? {
        try database.write {
            let settings = SettingsTable(database: database)
            guard let outbox = try Outbox.load(database) else { return nil }
            let sent = try sentThrough()
            let machine = Outbox.newID()
            let resent = try Outbox.renumberUnsent(after: sent, in: database)
            try settings.set(machine, for: .syncMachine)
            try settings.set(resent + 1, for: .syncNextSeq)
            try settings.remove(.syncSentThrough)
            var clock = try settings.stored(.syncClock) ?? .origin(of: machine)
            clock.machine = machine
            try settings.set(clock, for: .syncClock)
            try settings.remove(.syncFailure)
            try settings.remove(.syncFailingSince)
            try settings.remove(.syncFailedAt)
            let own = outbox.nextSeq - 1
            if own > 0 { try SyncCursors.advance(outbox.machine, to: own, in: database) }
            return (outbox.machine, machine, Int(resent))
        }
    }

    /// Forgets the machine: its outbox, clocks, cursors and parked ops. The clocks of edits
    /// made while sync was off stay (there are none while it is on: its edits have ops).
    private func clearSyncState() throws {
        try Outbox.forget(in: database)
        try database.execute("DELETE FROM sync_cursor; DELETE FROM sync_parked; DELETE FROM sync_shadow; DELETE FROM sync_file;")
        try SettingsTable(database: database).removeSync()
        try database.run("DELETE FROM sync_clock WHERE substr(clock, 21) <> ?", [.text(Outbox.unsyncedMachine)])
        try Writer(database: database).forgetMessageClocks()
    }

    /// Notes that a sync completed at `time`: no failure stands any more.
    public func recordSync(at time: Timestamp) throws {
        try database.write {
            let settings = SettingsTable(database: database)
            try settings.set(time.milliseconds, for: .syncLast)
            try settings.remove(.syncFailure)
            try settings.remove(.syncFailingSince)
            try settings.remove(.syncFailedAt)
        }
    }

    /// Notes that a sync failed at `time` with `message` (one line, safe to show), for
    /// `sync status` and the browser's footer; the first failure since the last sync that
    /// completed stays as when the failures began.
    public func recordSyncFailure(_ message: String, at time: Timestamp) throws {
        try database.write {
            let settings = SettingsTable(database: database)
            try settings.setIfUnset(time.milliseconds, for: .syncFailingSince)
            try settings.set(message, for: .syncFailure)
            try settings.set(time.milliseconds, for: .syncFailedAt)
        }
    }

    // MARK: Sending

    /// Up to `limit` ops of the outbox not sent yet after `seq`, in order, each with its
    /// entity as it is now (a delete with what it was).
    public func outgoing(after seq: Int64 = 0, limit: Int) throws -> [OutgoingOp] {
        try database.read {
            let rows = try database.query(
                "SELECT seq, op_id, entity, kind, clock, payload FROM sync_outbox WHERE seq > ? ORDER BY seq LIMIT ?",
                [.integer(max(seq, try sentThrough())), .integer(Int64(max(limit, 1)))]
            ) { row in
                (seq: row.int64(0), opID: row.text(1), entity: row.text(2), kind: row.text(3), clock: row.text(4),
                 payload: row.isNull(5) ? nil : row.blob(5))
            }
            return try rows.map { row in
                guard let clock = HybridClock(text: row.clock) else {
                    throw StorageError.conflict("the sync outbox holds a damaged clock at op \(row.seq); run `scrollback sync off --force`, then `sync init`")
                }
                let record = try row.payload.flatMap { SyncRecord(decoding: $0) } ?? currentRecord(kind: row.kind, entity: row.entity)
                return OutgoingOp(seq: row.seq, opID: row.opID, entity: row.entity, clock: clock, plaintext: record.encoded())
            }
        }
    }

    /// The record for an op of `kind` about `entity`, as the entity is now (`void` when it
    /// is gone).
    private func currentRecord(kind name: String, entity: String) throws -> SyncRecord {
        guard let kind = SyncOpKind(rawValue: name) else { return SyncRecord(kind: .void) }
        switch kind {
        case .conversation, .title, .model, .pin, .times:
            let found = try database.queryFirst(
                "SELECT title, model, source, source_id, created_at, updated_at, pinned, project, git_branch FROM conversation WHERE public_id = ?",
                [.text(entity)]
            ) { row in
                SyncRecord(
                    kind: kind, title: row.text(0), model: row.optionalText(1), source: row.text(2), sourceID: row.optionalText(3),
                    createdAt: row.int64(4), updatedAt: row.int64(5), pinned: row.bool(6), project: row.optionalText(7),
                    gitBranch: row.optionalText(8))
            }
            guard var record = found else { return SyncRecord(kind: .void) }
            switch kind {
            case .title: record = SyncRecord(kind: kind, title: record.title)
            case .model: record = SyncRecord(kind: kind, model: record.model)
            case .pin: record = SyncRecord(kind: kind, pinned: record.pinned)
            case .times:
                record = SyncRecord(
                    kind: kind, createdAt: record.createdAt, updatedAt: record.updatedAt, project: record.project, gitBranch: record.gitBranch)
            default: break
            }
            return record
        case .leaf:
            let found = try database.queryFirst(
                "SELECT m.public_id FROM conversation AS c LEFT JOIN message AS m ON m.id = c.current_leaf_id WHERE c.public_id = ?",
                [.text(entity)]
            ) { SyncRecord(kind: .leaf, leaf: $0.optionalText(0)) }
            return found ?? SyncRecord(kind: .void)
        case .message:
            let found = try database.queryFirst(
                """
                SELECT c.public_id, p.public_id, m.role, m.content, m.created_at, m.model, m.source_node_id,
                       m.input_tokens, m.output_tokens, m.duration_ms, m.kind, m.id,
                       EXISTS (SELECT 1 FROM attachment AS a WHERE a.message_id = m.id)
                  FROM message AS m JOIN conversation AS c ON c.id = m.conversation_id
                  LEFT JOIN message AS p ON p.id = m.parent_id
                 WHERE m.public_id = ?
                """, [.text(entity)]
            ) { row in
                (SyncRecord(
                    kind: .message, conversation: row.text(0), model: row.optionalText(5), createdAt: row.int64(4),
                    parent: row.optionalText(1), role: row.text(2), content: row.text(3), nodeID: row.optionalText(6),
                    inputTokens: row.optionalInt64(7), outputTokens: row.optionalInt64(8), durationMilliseconds: row.optionalInt64(9),
                    messageKind: row.text(10)), id: row.int64(11), attached: row.bool(12))
            }
            guard let found else { return SyncRecord(kind: .void) }
            var record = found.0
            // Every message says its files (none, too), so that one removed is removed elsewhere.
            record.attachments = found.attached ? try AttachmentTables(database: database).synced(message: found.id) : []
            return record
        case .restore:
            return SyncRecord(kind: .restore)
        case .delete, .void:
            return SyncRecord(kind: .void)
        }
    }

    /// The ops through `seq` are on the server: they are not sent again (`Outbox.markSent`).
    public func markSent(through seq: Int64) throws {
        try database.write { try Outbox.markSent(through: seq, in: database) }
    }

    // MARK: Receiving

    /// The last op applied here of each other machine.
    public func syncCursors() throws -> [String: Int64] {
        try localSyncState().cursors
    }

    /// Applies `ops` of `machine` (its next ones, in order) and moves its cursor past them,
    /// in one transaction; then the parked ops that can go now. Each change goes through
    /// `Writer`, so the search index and counts follow, and appends nothing to the outbox.
    public func apply(_ ops: [IncomingOp], from machine: String, through seq: Int64) throws -> ApplyResult {
        // A large page indexes the rows it adds at its end, in id order.
        if ops.count >= Self.indexedPage && database.indexingLoad == nil {
            return try SearchIndex.applying(database) { try applyPage(ops, cursor: (machine, seq)) }
        }
        return try applyPage(ops, cursor: (machine, seq))
    }

    /// Applies ops made of a snapshot's state (`snapshotOps`), as any op from elsewhere is
    /// applied (each field by its clock), moving no cursor: `advanceCursors` does once all
    /// are in.
    public func applySnapshotOps(_ ops: [IncomingOp]) throws -> ApplyResult {
        if ops.count >= Self.indexedPage && database.indexingLoad == nil {
            return try SearchIndex.applying(database) { try applyPage(ops, cursor: nil) }
        }
        return try applyPage(ops, cursor: nil)
    }

    /// Moves each machine's cursor to the one given, never back (a snapshot merged here
    /// holds the effect of every op through them).
    public func advanceCursors(_ cursors: [String: Int64]) throws {
        try database.write {
            for (machine, seq) in cursors where HybridClock.isMachineID(machine) { try SyncCursors.advance(machine, to: seq, in: database) }
        }
    }

    /// This store's whole state as ops, as `turnSyncOn` queues it on a machine that joins
    /// (what was merely stored with the oldest clock, every edit and delete with its own), a
    /// page of `limit` at a time after `seq`: for a snapshot's image, whose state another
    /// machine merges (`applySnapshotOps`). The first call turns sync on in it as `machine`.
    public func snapshotOps(as machine: String, after seq: Int64, limit: Int) throws -> [IncomingOp] {
        if seq == 0, try Outbox.load(database) == nil {
            // As `turnSyncOn` queues a joining machine's state, but every clock kept: the
            // image's clocks are the history's.
            try database.write {
                let base = HybridClock(wall: 0, counter: 0, machine: machine)
                _ = try Outbox.start(machine: machine, now: base, base: base, legacy: base.text, in: database)
            }
        }
        return try outgoing(after: seq, limit: limit).map {
            IncomingOp(machine: machine, seq: $0.seq, entity: $0.entity, clock: $0.clock, plaintext: $0.plaintext)
        }
    }

    /// Runs `body`, which applies pages of ops (`apply(_:from:through:)`), in one write
    /// transaction: all of its pages, with their cursors, or none of them. When about
    /// `count` ops or more come (a page's worth, `indexedPage`), the rows they add are
    /// indexed and counted at its end, in id order (`SearchIndex.applying`); fewer go row by
    /// row, without setting triggers aside (which changes the schema, so that every other
    /// connection prepares its statements again).
    public func applyingPages<T>(about count: Int, _ body: () throws -> T) throws -> T {
        if count >= Self.indexedPage { return try SearchIndex.applying(database, body) }
        return try database.write(body)
    }

    /// The smallest page of ops whose new rows are indexed at its end (`SearchIndex.applying`)
    /// rather than one by one.
    public static let indexedPage = 1_000

    private func applyPage(_ ops: [IncomingOp], cursor: (machine: String, seq: Int64)?) throws -> ApplyResult {
        // Within `SearchIndex.applying`, no savepoint of its own: a savepoint makes SQLite
        // copy each page it changes to a journal first, once more per page of the database.
        try database.write(savepoint: false) {
            guard let outbox = try database.syncOutbox() else {
                throw StorageError.conflict("sync is off here; nothing was applied")
            }
            var result = ApplyResult()
            defer { database.applyingRemote = nil }
            for op in ops {
                outbox.observe(op.clock)
                guard let record = SyncRecord(decoding: op.plaintext) else {
                    result.ignored += 1
                    continue
                }
                switch try apply(record, op: op, base: outbox.base) {
                case .applied: result.applied += 1
                case .ignored: result.ignored += 1
                case .parked: result.parked += 1
                }
            }
            if let cursor {
                try database.run("INSERT OR REPLACE INTO sync_cursor (machine, seq) VALUES (?, ?)", [.text(cursor.machine), .integer(cursor.seq)])
            }
            if result.applied > 0 { try retryParked(base: outbox.base) }
            return result
        }
    }

    private enum Applied {
        case applied, ignored, parked
    }

    /// Applies one op: last writer wins per field by the clock; a delete wins over edits
    /// and loses only to a newer restore; an op about something not here yet is parked.
    private func apply(_ record: SyncRecord, op: IncomingOp, base: HybridClock) throws -> Applied {
        database.applyingRemote = op.clock
        let writer = Writer(database: database)
        let entity = op.entity
        func isNewer(_ field: String, of entity: String = entity) throws -> Bool {
            op.clock > (try fieldClock(entity, field) ?? base)
        }
        func park(_ waitsFor: String, conversation: String?) throws -> Applied {
            try database.run(
                """
                INSERT OR IGNORE INTO sync_parked (machine, seq, entity, waits_for, conversation, clock, payload)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
                [.text(op.machine), .integer(op.seq), .text(entity), .text(waitsFor), SQLValue(conversation), .text(op.clock.text),
                 .blob(op.plaintext)])
            return .parked
        }
        func stamp(_ field: String) throws { try Outbox.record(op.clock, entity: entity, field: field, in: database) }
        switch record.kind {
        case .void:
            return .ignored
        case .conversation, .title, .model, .pin, .times, .leaf:
            guard let local = try database.queryFirst(
                "SELECT id, title, model, pinned, created_at, updated_at, project, git_branch FROM conversation WHERE public_id = ?",
                [.text(entity)], {
                    (id: $0.int64(0), title: $0.text(1), model: $0.optionalText(2), pinned: $0.bool(3), createdAt: $0.int64(4),
                     updatedAt: $0.int64(5), project: $0.optionalText(6), gitBranch: $0.optionalText(7))
                })
            else {
                if try isBuried(entity) { return .ignored }
                guard record.kind == .conversation else { return try park(entity, conversation: entity) }
                let title = (record.title ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
                let created = record.createdAt ?? 0
                let row = Writer.ConversationRow(
                    publicID: entity, title: title.isEmpty ? "Untitled" : title, model: record.model,
                    source: (record.source ?? "").isEmpty ? "sync" : record.source ?? "sync", sourceID: record.sourceID,
                    createdAt: Timestamp(milliseconds: created),
                    updatedAt: Timestamp(milliseconds: max(created, record.updatedAt ?? created)), pinned: record.pinned ?? false,
                    project: record.project, gitBranch: record.gitBranch)
                // Another conversation here has its source id: both stay, this one unsynced.
                guard let id = try writer.insert(row, ignoringDuplicate: true) else { return .ignored }
                try keepLaterEdits(of: entity, id: id, than: op.clock, writer: writer)
                try stamp("*")
                return .applied
            }
            var changed = false
            if record.kind == .conversation || record.kind == .title, let title = record.title, try isNewer("title") {
                let trimmed = title.trimmingCharacters(in: .whitespacesAndNewlines)
                if !trimmed.isEmpty && trimmed != local.title { try writer.rename(conversation: local.id, to: trimmed) }
                try stamp("title")
                changed = true
            }
            if record.kind == .conversation || record.kind == .model, try isNewer("model") {
                if record.model != local.model { try writer.setModel(conversation: local.id, record.model) }
                try stamp("model")
                changed = true
            }
            if record.kind == .conversation || record.kind == .pin, let pinned = record.pinned, try isNewer("pin") {
                if pinned != local.pinned { try writer.setPinned(conversation: local.id, pinned) }
                try stamp("pin")
                changed = true
            }
            if record.kind == .conversation || record.kind == .times, let created = record.createdAt, try isNewer("times") {
                let updated = max(local.updatedAt, record.updatedAt ?? created, created)
                if created != local.createdAt || updated != local.updatedAt {
                    try writer.setTimes(
                        conversation: local.id, createdAt: Timestamp(milliseconds: created), updatedAt: Timestamp(milliseconds: updated))
                }
                if record.project != nil || record.gitBranch != nil, record.project != local.project || record.gitBranch != local.gitBranch {
                    try writer.setPlace(
                        conversation: local.id, project: record.project ?? local.project, gitBranch: record.gitBranch ?? local.gitBranch)
                }
                try stamp("times")
                changed = true
            }
            if record.kind == .leaf, try isNewer("leaf") {
                var leafID: Int64?
                if let leaf = record.leaf {
                    let leafHere = try messageHere(leaf, in: local.id, of: entity)
                    leafID = leafHere.row
                    if leafID == nil { return try park(leafHere.publicID, conversation: entity) }
                }
                let nodes = try database.query(
                    "SELECT id, parent_id FROM message WHERE conversation_id = ?", [.integer(local.id)]
                ) { (id: $0.int64(0), parentID: $0.optionalInt64(1)) }
                let tree = ConversationTree(nodes: nodes)
                let chosen = leafID.flatMap { tree.contains($0) ? $0 : nil }
                try writer.setBranch(conversation: local.id, leaf: chosen, length: chosen.map { tree.path(to: $0).count } ?? 0)
                try stamp("leaf")
                changed = true
            }
            return changed ? .applied : .ignored
        case .message:
            guard let conversation = record.conversation, let content = record.content,
                let role = record.role.flatMap(Role.init(rawValue:))
            else { return .ignored }
            let usage = MessageUsage(
                inputTokens: record.inputTokens.flatMap { $0 >= 0 ? $0 : nil },
                outputTokens: record.outputTokens.flatMap { $0 >= 0 ? $0 : nil },
                durationMilliseconds: record.durationMilliseconds.flatMap { $0 >= 0 ? $0 : nil })
            guard let conversationID = try database.queryFirst(
                "SELECT id FROM conversation WHERE public_id = ?", [.text(conversation)], { $0.int64(0) })
            else {
                if try isBuried(conversation) { return .ignored }
                return try park(conversation, conversation: conversation)
            }
            // A record from a version before kinds has none: what it sends was seen.
            let kind = record.messageKind.flatMap(MessageKind.init(rawValue:)) ?? .text
            let here = try messageHere(entity, in: conversationID, of: conversation)
            let id = here.publicID
            if let row = here.row, let existing = try database.queryFirst(
                "SELECT id, role, content, model, clock, kind, parent_id FROM message WHERE id = ?", [.integer(row)],
                {
                    (id: $0.int64(0), role: $0.text(1), content: $0.text(2), model: $0.optionalText(3),
                     clock: $0.optionalText(4).flatMap(HybridClock.init(text:)), kind: $0.text(5), parentID: $0.optionalInt64(6))
                })
            {
                // A message without a clock was here before sync was turned on, as it was then.
                guard op.clock > existing.clock ?? base else { return .ignored }
                // Hung under a message a newer import found between it and its parent: that
                // message came first (its op is earlier), else this waits for it.
                if let parent = record.parent {
                    let parentHere = try messageHere(parent, in: conversationID, of: conversation)
                    guard let parentRow = parentHere.row else { return try park(parentHere.publicID, conversation: conversation) }
                    if parentRow != existing.parentID, parentRow != existing.id,
                        try !isBelow(parentRow, existing.id, in: conversationID)
                    {
                        try writer.reparent(message: existing.id, under: parentRow)
                        try writer.renumberInTreeOrder(conversation: conversationID)
                        try repairBranch(of: conversationID)
                    }
                }
                if existing.content != content || existing.role != role.rawValue || existing.model != record.model
                    || existing.kind != kind.rawValue
                {
                    try writer.update(message: existing.id, role: role, content: content, model: record.model, usage: usage, kind: kind)
                }
                if let attachments = record.attachments {
                    try AttachmentTables(database: database).replace(message: existing.id, with: attachments)
                }
                try writer.setClock(message: existing.id, op.clock)
                return .applied
            }
            var parentID: Int64?
            if let parent = record.parent {
                let parentHere = try messageHere(parent, in: conversationID, of: conversation)
                parentID = parentHere.row
                if parentID == nil { return try park(parentHere.publicID, conversation: conversation) }
            }
            let position = try database.scalarInt(
                "SELECT coalesce(max(position), -1) + 1 FROM message WHERE conversation_id = ?", [.integer(conversationID)])
            let inserted = try writer.insert(
                Writer.MessageRow(
                    publicID: id, conversationID: conversationID, position: position, role: role, content: content,
                    createdAt: Timestamp(milliseconds: record.createdAt ?? 0), model: record.model, parentID: parentID,
                    sourceNodeID: record.nodeID, usage: usage, clock: op.clock, kind: kind))
            if let attachments = record.attachments, !attachments.isEmpty {
                try AttachmentTables(database: database).replace(message: inserted, with: attachments)
            }
            return .applied
        case .delete:
            if let restored = try fieldClock(entity, "restore"), restored > op.clock { return .ignored }
            if let id = try database.queryFirst("SELECT id FROM conversation WHERE public_id = ?", [.text(entity)], { $0.int64(0) }) {
                _ = try writer.delete(conversation: id)
            } else {
                try database.run(
                    """
                    INSERT INTO sync_tombstone (public_id, source, source_id, clock) VALUES (?, ?, ?, ?)
                    ON CONFLICT (public_id) DO UPDATE SET clock = max(clock, excluded.clock)
                    """, [.text(entity), SQLValue(record.source), SQLValue(record.sourceID), .text(op.clock.text)])
            }
            try database.run("DELETE FROM sync_parked WHERE conversation = ?", [.text(entity)])
            return .applied
        case .restore:
            if let buried = try database.queryFirst(
                "SELECT clock FROM sync_tombstone WHERE public_id = ?", [.text(entity)], { HybridClock(text: $0.text(0)) }),
                let buried, buried > op.clock
            {
                return .ignored
            }
            try database.run("DELETE FROM sync_tombstone WHERE public_id = ?", [.text(entity)])
            if try isNewer("restore") { try stamp("restore") }
            return .applied
        }
    }

    /// The current branch's length counted again (its leaf kept), after a message on it was
    /// hung under another.
    private func repairBranch(of conversation: Int64) throws {
        let nodes = try database.query(
            "SELECT id, parent_id FROM message WHERE conversation_id = ?", [.integer(conversation)]
        ) { (id: $0.int64(0), parentID: $0.optionalInt64(1)) }
        let tree = ConversationTree(nodes: nodes)
        let leaf = try database.queryFirst(
            "SELECT current_leaf_id FROM conversation WHERE id = ?", [.integer(conversation)]) { $0.optionalInt64(0) } ?? nil
        let chosen = leaf.flatMap { tree.contains($0) ? $0 : nil } ?? tree.newestLeaf
        try Writer(database: database).setBranch(conversation: conversation, leaf: chosen, length: chosen.map { tree.path(to: $0).count } ?? 0)
    }

    /// Whether `row` is `ancestor` or below it (hanging `ancestor` under `row` would make a
    /// loop of parents).
    private func isBelow(_ row: Int64, _ ancestor: Int64, in conversation: Int64) throws -> Bool {
        try database.scalarInt(
            """
            WITH RECURSIVE up(id, steps) AS (
                SELECT ?, 0
                UNION ALL
                SELECT m.parent_id, up.steps + 1 FROM message AS m JOIN up ON m.id = up.id
                 WHERE m.parent_id IS NOT NULL AND up.steps < (SELECT count(*) FROM message WHERE conversation_id = ?)
            )
            SELECT EXISTS (SELECT 1 FROM up WHERE id = ?)
            """, [.integer(row), .integer(conversation), .integer(ancestor)]) != 0
    }

    /// The id that a message of conversation `conversation` (whose public id is
    /// `conversationPublicID`) from another machine has here, and its row when it is here:
    /// its own id, unless a message of another conversation here has it already (two
    /// histories that reuse an id, or a generator's chance); then one derived from both, the
    /// same for every later op that names it (its parent, a branch, a newer copy), so that
    /// neither message is lost. One lookup when the id is not shared.
    private func messageHere(_ publicID: String, in conversation: Int64, of conversationPublicID: String) throws
        -> (publicID: String, row: Int64?)
    {
        let found = try database.queryFirst(
            "SELECT id, conversation_id FROM message WHERE public_id = ?", [.text(publicID)], { (id: $0.int64(0), conversation: $0.int64(1)) })
        guard let found, found.conversation != conversation else { return (publicID, found?.id) }
        let derived = StableID.uuid(conversationPublicID, "message id used by another conversation: " + publicID)
        let row = try database.queryFirst(
            "SELECT id FROM message WHERE public_id = ? AND conversation_id = ?", [.text(derived), .integer(conversation)], { $0.int64(0) })
        return (derived, row)
    }

    /// The clock of `entity`'s `field`: the later of the field's own and the entity's as a
    /// whole (which a conversation op sets for every field it carries: all but the leaf and
    /// the restore); nil when neither is recorded, which means the entity was here before
    /// sync was turned on, as it was then, unedited (the caller takes the machine's base
    /// clock). A leaf never set on a conversation made with sync on is older than any.
    private func fieldClock(_ entity: String, _ field: String) throws -> HybridClock? {
        let rows = try database.query(
            "SELECT field, clock FROM sync_clock WHERE entity = ? AND field IN (?, '*')", [.text(entity), .text(field)]
        ) { (field: $0.text(0), clock: HybridClock(text: $0.text(1))) }
        let own = rows.first { $0.field == field }?.clock
        let whole = rows.first { $0.field == "*" }?.clock
        if field == "leaf" || field == "restore" {
            if let own { return own }
            return whole == nil ? nil : HybridClock(wall: 0, counter: 0, machine: "")
        }
        return [own, whole].compactMap { $0 }.max()
    }

    /// A conversation made again from another machine's copy (a restore there): each field
    /// edited here later than that copy keeps the value it had here (`sync_shadow`), as
    /// the other machines, receiving that edit after the copy, have it.
    private func keepLaterEdits(of entity: String, id: Int64, than clock: HybridClock, writer: Writer) throws {
        guard let shadow = try database.queryFirst(
            "SELECT title, model, pinned, created_at, updated_at FROM sync_shadow WHERE public_id = ?", [.text(entity)], {
                (title: $0.text(0), model: $0.optionalText(1), pinned: $0.bool(2), createdAt: $0.int64(3), updatedAt: $0.int64(4))
            })
        else { return }
        let own = try database.query("SELECT field, clock FROM sync_clock WHERE entity = ?", [.text(entity)]) {
            (field: $0.text(0), clock: HybridClock(text: $0.text(1)))
        }
        func later(_ field: String) -> Bool { own.contains { $0.field == field && ($0.clock.map { $0 > clock } ?? false) } }
        if later("title") { try writer.rename(conversation: id, to: shadow.title) }
        if later("model") { try writer.setModel(conversation: id, shadow.model) }
        if later("pin") { try writer.setPinned(conversation: id, shadow.pinned) }
        if later("times") {
            try writer.setTimes(
                conversation: id, createdAt: Timestamp(milliseconds: shadow.createdAt), updatedAt: Timestamp(milliseconds: shadow.updatedAt))
        }
    }

    private func isBuried(_ conversation: String) throws -> Bool {
        try database.scalarInt("SELECT EXISTS (SELECT 1 FROM sync_tombstone WHERE public_id = ?)", [.text(conversation)]) != 0
    }

    /// Applies the parked ops whose wait is over (what they wait for is here, or their
    /// conversation is deleted), until none is left that can go.
    private func retryParked(base: HybridClock) throws {
        while true {
            let ready = try database.query(
                """
                SELECT machine, seq, entity, clock, payload FROM sync_parked AS p
                 WHERE EXISTS (SELECT 1 FROM conversation WHERE public_id = p.waits_for)
                    OR EXISTS (SELECT 1 FROM message WHERE public_id = p.waits_for)
                    OR EXISTS (SELECT 1 FROM sync_tombstone WHERE public_id IN (p.waits_for, p.conversation))
                 ORDER BY machine, seq
                """
            ) { row in
                (machine: row.text(0), seq: row.int64(1), entity: row.text(2), clock: HybridClock(text: row.text(3)),
                 payload: row.blob(4))
            }
            guard !ready.isEmpty else { return }
            var progress = false
            for row in ready {
                try database.run("DELETE FROM sync_parked WHERE machine = ? AND seq = ?", [.text(row.machine), .integer(row.seq)])
                guard let clock = row.clock, let record = SyncRecord(decoding: row.payload) else { continue }
                let op = IncomingOp(machine: row.machine, seq: row.seq, entity: row.entity, clock: clock, plaintext: row.payload)
                if try apply(record, op: op, base: base) != .parked { progress = true }
            }
            database.applyingRemote = nil
            if !progress { return }
        }
    }
}

/// The cursors of a database: per machine, the last of its ops whose effect it holds.
enum SyncCursors {
    /// Moves `machine`'s cursor to `seq`, never back.
    static func advance(_ machine: String, to seq: Int64, in database: Database) throws {
        try database.run(
            """
            INSERT INTO sync_cursor (machine, seq) VALUES (?, ?)
            ON CONFLICT (machine) DO UPDATE SET seq = max(seq, excluded.seq)
            """, [.text(machine), .integer(max(0, seq))])
    }

    static func all(in database: Database) throws -> [String: Int64] {
        var cursors: [String: Int64] = [:]
        for (machine, seq) in try database.query("SELECT machine, seq FROM sync_cursor", [], { ($0.text(0), $0.int64(1)) }) {
            cursors[machine] = seq
        }
        return cursors
    }
}
