import Foundation
import ScrollbackModel

/// Sync's record of this machine's changes, while sync is on: `Writer` appends an op for
/// each change it makes, in the same transaction, so that no change is made without its
/// op and no op is kept for a change rolled back. Ops are numbered per machine without
/// gaps (`seq`) and stamped with a hybrid clock; the entity's field clock is kept beside
/// it (`sync_clock`; a message's in its row), so that an older op from elsewhere does not
/// undo it.
///
/// Loaded once per write transaction (`Database.outbox()`), under the write lock, so a
/// sync turned on by another process meanwhile is seen; the numbers are saved before the
/// transaction commits.
public final class Outbox {
    let machine: String
    private(set) var nextSeq: Int64
    private(set) var clock: HybridClock
    /// The clock of what this machine held when sync was turned on and has no clock of its
    /// own (imported, or from before): see `Store.turnSyncOn`.
    let base: HybridClock
    private var changed = false

    init(machine: String, nextSeq: Int64, clock: HybridClock, base: HybridClock) {
        self.machine = machine
        self.nextSeq = nextSeq
        self.clock = clock
        self.base = base
    }

    /// The machine id of a clock read while sync is off (never on, or forgotten): `sync init`
    /// gives such clocks the machine's own id (`Store.turnSyncOn`).
    static let unsyncedMachine = String(repeating: "0", count: 32)

    /// A new reading of the clock of edits made here while sync is off: the time now, after
    /// every reading before it (`SettingKey.editsClock`), so that a later edit is never older.
    static func tickUnsynced(in database: Database) throws -> HybridClock {
        let settings = SettingsTable(database: database)
        let last = try settings.stored(.editsClock) ?? .origin(of: unsyncedMachine)
        var next = last.tick(now: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
        next.machine = unsyncedMachine
        try settings.set(next, for: .editsClock)
        return next
    }

    /// The outbox when sync is on in `database`, else nil.
    static func load(_ database: Database) throws -> Outbox? {
        let settings = SettingsTable(database: database)
        guard let machine = try settings.stored(.syncMachine), HybridClock.isMachineID(machine) else { return nil }
        let next = try settings.stored(.syncNextSeq).flatMap { $0 >= 1 ? $0 : nil } ?? 1
        var clock = try settings.stored(.syncClock) ?? .origin(of: machine)
        clock.machine = machine
        let base = try settings.stored(.syncBase) ?? .origin(of: machine)
        return Outbox(machine: machine, nextSeq: next, clock: clock, base: base)
    }

    /// A new reading of this machine's clock.
    func tick() -> HybridClock {
        let now = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        clock = clock.tick(now: now)
        changed = true
        return clock
    }

    /// Moves this machine's clock past `remote` (an op applied from elsewhere).
    func observe(_ remote: HybridClock) {
        let next = clock.observing(remote)
        if next != clock {
            clock = next
            changed = true
        }
    }

    /// Appends an op for `entity`, stamped `clock` (a new reading by default), and records
    /// the clock of the field it sets.
    @discardableResult
    func append(
        _ kind: SyncOpKind, entity: String, payload: [UInt8]? = nil, clock given: HybridClock? = nil, in database: Database
    ) throws -> HybridClock {
        let stamp = given ?? tick()
        let statement = try database.statement(
            "INSERT INTO sync_outbox (seq, op_id, entity, kind, clock, payload) VALUES (?, ?, ?, ?, ?, ?)")
        defer { statement.reset() }
        try statement.bind(.integer(nextSeq), at: 1)
        try statement.bind(.text(Self.newID()), at: 2)
        try statement.bind(.text(entity), at: 3)
        try statement.bind(.text(kind.rawValue), at: 4)
        try statement.bind(.text(stamp.text), at: 5)
        if let payload { try statement.bind(.blob(payload), at: 6) }
        while try statement.step() {}
        nextSeq += 1
        changed = true
        // A message's clock is kept in its row, by `Writer`.
        if let field = kind.field, kind != .message {
            try Self.record(stamp, entity: entity, field: field, in: database)
        }
        return stamp
    }

    /// After a savepoint rolled back: the next number follows the ops that are left (those
    /// of this transaction, else the saved number).
    func renumber(in database: Database) throws {
        let saved = try SettingsTable(database: database).stored(.syncNextSeq) ?? 1
        let last = try database.scalarInt("SELECT coalesce(max(seq), 0) FROM sync_outbox")
        nextSeq = max(saved, last + 1)
    }

    /// Takes back the ops from `mark` on (appended in this transaction), with their field
    /// clocks.
    func truncate(from mark: Int64, in database: Database) throws {
        try database.run("DELETE FROM sync_clock WHERE entity IN (SELECT entity FROM sync_outbox WHERE seq >= ?)", [.integer(mark)])
        try database.run("DELETE FROM sync_outbox WHERE seq >= ?", [.integer(mark)])
        nextSeq = min(nextSeq, mark)
        changed = true
    }

    /// Saves the numbers (before the transaction commits).
    func save(in database: Database) throws {
        guard changed else { return }
        let settings = SettingsTable(database: database)
        try settings.set(nextSeq, for: .syncNextSeq)
        try settings.set(clock, for: .syncClock)
        changed = false
    }

    /// Sets the clock of `entity`'s `field` (a conversation's; a message's is in its row).
    static func record(_ clock: HybridClock, entity: String, field: String, in database: Database) throws {
        try database.run(
            "INSERT OR REPLACE INTO sync_clock (entity, field, clock) VALUES (?, ?, ?)",
            [.text(entity), .text(field), .text(clock.text)])
    }

    // MARK: Turning sync on and off, and sending

    /// Queues everything stored, as turning sync on as `machine` does (`Store.turnSyncOn`
    /// says with which clocks: `base` for what was merely stored, `legacy` for what was
    /// stored before edits had clocks), and numbers the ops that follow after them.
    /// Returns how many ops were queued.
    static func start(machine: String, now: HybridClock, base: HybridClock, legacy: String, in database: Database) throws -> Int64 {
        let origin = base.text
        var queued: Int64 = 0
        func queue(_ sql: String, _ values: [SQLValue]) throws {
            try database.run(sql, [.integer(queued)] + values)
            queued = try database.scalarInt("SELECT count(*) FROM sync_outbox")
        }
        // A restore first: the conversation's op after it brings it back where it was deleted.
        try queue(
            """
            INSERT INTO sync_outbox (seq, op_id, entity, kind, clock)
            SELECT ? + row_number() OVER (ORDER BY k.entity), lower(hex(randomblob(16))), k.entity, 'restore', k.clock
              FROM sync_clock AS k WHERE k.field = 'restore' AND k.entity IN (SELECT public_id FROM conversation)
            """, [])
        try queue(
            """
            INSERT INTO sync_outbox (seq, op_id, entity, kind, clock)
            SELECT ? + row_number() OVER (ORDER BY id), lower(hex(randomblob(16))), public_id, 'conv',
                   CASE WHEN id IN (SELECT id FROM sync_unclocked) THEN ? ELSE ? END
              FROM conversation
            """, [.text(legacy), .text(origin)])
        try queue(
            """
            INSERT INTO sync_outbox (seq, op_id, entity, kind, clock)
            SELECT ? + row_number() OVER (ORDER BY conversation_id, position), lower(hex(randomblob(16))), public_id, 'msg', ?
              FROM message
            """, [.text(origin)])
        try queue(
            """
            INSERT INTO sync_outbox (seq, op_id, entity, kind, clock)
            SELECT ? + row_number() OVER (ORDER BY c.id), lower(hex(randomblob(16))), c.public_id, 'leaf',
                   coalesce(k.clock, CASE WHEN c.id IN (SELECT id FROM sync_unclocked) THEN ? ELSE ? END)
              FROM conversation AS c LEFT JOIN sync_clock AS k ON k.entity = c.public_id AND k.field = 'leaf'
             WHERE c.current_leaf_id IS NOT NULL
            """, [.text(legacy), .text(origin)])
        // Each field edited here, with its edit's clock (the conversation's op above
        // carries it as well, as of the origin).
        try queue(
            """
            INSERT INTO sync_outbox (seq, op_id, entity, kind, clock)
            SELECT ? + row_number() OVER (ORDER BY k.entity, k.field), lower(hex(randomblob(16))), k.entity, k.field, k.clock
              FROM sync_clock AS k JOIN conversation AS c ON c.public_id = k.entity
             WHERE k.field IN ('title', 'model', 'pin', 'times')
            """, [])
        // What was deleted here goes too, at the time it was deleted (never older than
        // the origin): a delete made while sync was off and forgotten would otherwise
        // never reach the others, and the tombstone would keep their copy out of here.
        let tombstones = try database.query("SELECT public_id, source, source_id, clock FROM sync_tombstone ORDER BY public_id") {
            (publicID: $0.text(0), source: $0.optionalText(1), sourceID: $0.optionalText(2), clock: HybridClock(text: $0.text(3)))
        }
        for tombstone in tombstones {
            queued += 1
            let clock = max(tombstone.clock ?? base, base)
            try database.run(
                "INSERT INTO sync_outbox (seq, op_id, entity, kind, clock, payload) VALUES (?, ?, ?, ?, ?, ?)",
                [.integer(queued), .text(Outbox.newID()), .text(tombstone.publicID), .text(SyncOpKind.delete.rawValue), .text(clock.text),
                 .blob(SyncRecord(kind: .delete, source: tombstone.source, sourceID: tombstone.sourceID).encoded())])
        }
        let settings = SettingsTable(database: database)
        try settings.set(machine, for: .syncMachine)
        try settings.set(queued + 1, for: .syncNextSeq)
        try settings.set(now, for: .syncClock)
        try settings.set(base, for: .syncBase)
        return queued
    }

    /// The ops not sent (after `sent`) numbered again from 1, with new op ids, the sent ones
    /// dropped: a restored copy's outbox for the new machine it becomes
    /// (`Store.continueAsNewMachine`). Returns how many are left.
    static func renumberUnsent(after sent: Int64, in database: Database) throws -> Int64 {
        try database.run("DELETE FROM sync_outbox WHERE seq <= ?", [.integer(sent)])
        // Past every number first, then down from 1: no step meets a number in use, in
        // whatever order SQLite visits the rows.
        let past = try database.scalarInt("SELECT coalesce(max(seq), 0) + 1 FROM sync_outbox")
        try database.run("UPDATE sync_outbox SET seq = seq + ?, op_id = lower(hex(randomblob(16)))", [.integer(past)])
        try database.run("UPDATE sync_outbox SET seq = seq - ?", [.integer(past + sent)])
        return try database.scalarInt("SELECT count(*) FROM sync_outbox")
    }

    /// Drops every op, sent or not (sync forgotten here).
    static func forget(in database: Database) throws {
        try database.run("DELETE FROM sync_outbox")
    }

    /// The last op known to be on the server, 0 when none (or not a number: then everything
    /// in the outbox is sent again, which the server takes as the same ops).
    static func sentThrough(in database: Database) throws -> Int64 {
        max(0, try SettingsTable(database: database).stored(.syncSentThrough) ?? 0)
    }

    /// The ops through `seq` are on the server: they are not sent again. The outbox is
    /// emptied once everything in it is sent, whole: SQLite then drops its pages without
    /// visiting each row, where deleting the sent rows batch by batch cost more than reading
    /// them (every batch touched most pages of the index of random op ids). Rows sent while
    /// others were added meanwhile wait for the next time it is all sent.
    static func markSent(through seq: Int64, in database: Database) throws {
        let through = max(seq, try sentThrough(in: database))
        try SettingsTable(database: database).set(through, for: .syncSentThrough)
        if try database.scalarInt("SELECT coalesce(max(seq), 0) FROM sync_outbox") <= through {
            try forget(in: database)
        }
    }

    /// A new op or machine id: 32 lower-case hex digits, random.
    public static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64, low = generator.next() as UInt64
        let digits = String(high, radix: 16), more = String(low, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits + String(repeating: "0", count: 16 - more.count) + more
    }
}
