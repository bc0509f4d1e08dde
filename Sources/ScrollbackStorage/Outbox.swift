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

    enum Key {
        static let machine = "sync.machine"
        static let nextSeq = "sync.next_seq"
        static let clock = "sync.clock"
        /// `base`; none on a machine that turned sync on before this version: the origin.
        static let base = "sync.base"
        /// The last reading of the clock of edits made while sync is off (not a `sync.`
        /// setting: it outlives `sync off --force`).
        static let unsyncedClock = "edits.clock"
    }

    /// The machine id of a clock read while sync is off (never on, or forgotten): `sync init`
    /// gives such clocks the machine's own id (`Store.turnSyncOn`).
    static let unsyncedMachine = String(repeating: "0", count: 32)

    /// A new reading of the clock of edits made here while sync is off: the time now, after
    /// every reading before it (`Key.unsyncedClock`), so that a later edit is never older.
    static func tickUnsynced(in database: Database) throws -> HybridClock {
        let last = try database.queryFirst("SELECT value FROM settings WHERE key = ?", [.text(Key.unsyncedClock)]) { $0.text(0) }
            .flatMap(HybridClock.init(text:)) ?? .origin(of: unsyncedMachine)
        var next = last.tick(now: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
        next.machine = unsyncedMachine
        try database.run("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", [.text(Key.unsyncedClock), .text(next.text)])
        return next
    }

    /// The outbox when sync is on in `database`, else nil.
    static func load(_ database: Database) throws -> Outbox? {
        let values = try database.query(
            "SELECT key, value FROM settings WHERE key IN ('sync.machine', 'sync.next_seq', 'sync.clock', 'sync.base')"
        ) { ($0.text(0), $0.text(1)) }
        var found: [String: String] = [:]
        for (key, value) in values { found[key] = value }
        guard let machine = found[Key.machine], HybridClock.isMachineID(machine) else { return nil }
        let next = found[Key.nextSeq].flatMap { Int64($0) }.flatMap { $0 >= 1 ? $0 : nil } ?? 1
        var clock = found[Key.clock].flatMap(HybridClock.init(text:)) ?? .origin(of: machine)
        clock.machine = machine
        let base = found[Key.base].flatMap(HybridClock.init(text:)) ?? .origin(of: machine)
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
        let saved = try database.queryFirst("SELECT value FROM settings WHERE key = 'sync.next_seq'") { $0.text(0) }
            .flatMap { Int64($0) } ?? 1
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
        try database.run(
            "INSERT OR REPLACE INTO settings (key, value) VALUES ('sync.next_seq', ?), ('sync.clock', ?)",
            [.text(String(nextSeq)), .text(clock.text)])
        changed = false
    }

    /// Sets the clock of `entity`'s `field` (a conversation's; a message's is in its row).
    static func record(_ clock: HybridClock, entity: String, field: String, in database: Database) throws {
        try database.run(
            "INSERT OR REPLACE INTO sync_clock (entity, field, clock) VALUES (?, ?, ?)",
            [.text(entity), .text(field), .text(clock.text)])
    }

    /// A new op or machine id: 32 lower-case hex digits, random.
    public static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64, low = generator.next() as UInt64
        let digits = String(high, radix: 16), more = String(low, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits + String(repeating: "0", count: 16 - more.count) + more
    }
}
