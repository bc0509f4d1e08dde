import Foundation
import ScrollbackModel
import ScrollbackStorage
import TerminalText

/// How far a sync has come, for a progress line.
public struct SyncProgress: Sendable, Equatable {
    public enum Phase: Sendable, Equatable { case sending, receiving }
    public var phase: Phase
    public var done: Int
    /// Known when sending (the outbox's size); nil when receiving.
    public var total: Int?
}

/// What one sync did.
public struct SyncReport: Sendable, Equatable {
    public var sent = 0
    public var received = 0
    public var applied = 0
    /// Ops received that wait for what they build on.
    public var parked = 0
}

/// What the server says about itself, for `sync status`.
public struct ServerState: Sendable, Equatable {
    public var machines: Int
    /// Ops of other machines not applied here yet.
    public var toReceive: Int64
}

/// Sync through a PostgreSQL server: this machine's outbox goes up, sealed, and the other
/// machines' ops come down, opened and applied. The server holds, per op, the machine id,
/// the sequence number, the op id, the entity's public id, the clock, and the sealed
/// payload; titles, messages and models only ever as ciphertext.
public final class SyncEngine {
    let store: Store
    let key: SyncKey
    let connection: PostgresConnection
    let machine: String
    /// Ops per statement, each way: memory is bounded by it, not by the history.
    public var batch = 500

    /// A new machine id: 32 random hex digits.
    public static func newMachineID() -> String { Outbox.newID() }

    /// The server schema's version this program writes. Version 2 (the tables are
    /// version 1's): ops carry a message's kind, which a scrollback that knows only version
    /// 1 would drop, showing hidden traffic as the conversation: it refuses the server
    /// instead and says to upgrade. A version-1 server is raised to 2 by the first sync of
    /// this program.
    public static let serverSchemaVersion = 2

    /// Connects. Throws `SyncError.off` when sync is off for `store`.
    public init(store: Store, conninfo: String, key: SyncKey) throws {
        let local = try store.localSyncState()
        guard local.isOn, let machine = local.machine else { throw SyncError.off }
        self.store = store
        self.key = key
        self.machine = machine
        connection = try PostgresConnection(conninfo: conninfo)
    }

    // MARK: The server's schema and key

    /// Creates or migrates the server's schema, in one transaction under an advisory lock
    /// (which a pooler keeps for the transaction). Refuses a schema newer than this
    /// program's.
    static func prepareSchema(_ connection: PostgresConnection) throws {
        try connection.execute("BEGIN")
        do {
            try connection.execute(
                """
                SELECT pg_advisory_xact_lock(7135582941005215531);
                CREATE SCHEMA IF NOT EXISTS scrollback;
                CREATE TABLE IF NOT EXISTS scrollback.schema_version (version integer NOT NULL);
                """)
            let found = try connection.query("SELECT coalesce(max(version), 0)::int8 FROM scrollback.schema_version")
            let version = found.integer(0, 0) ?? 0
            if version > Int64(serverSchemaVersion) {
                throw SyncError.newerServerSchema(found: Int(clamping: version), known: serverSchemaVersion)
            }
            if version < 1 {
                let tables = try connection.query(
                    "SELECT (to_regclass('scrollback.key_check') IS NOT NULL OR to_regclass('scrollback.op') IS NOT NULL)::int::int8")
                if tables.integer(0, 0) == 1 { throw SyncError.damagedServer }
                try connection.execute(
                    """
                    CREATE TABLE scrollback.key_check (
                        id         integer PRIMARY KEY CHECK (id = 1),
                        sealed     bytea NOT NULL,
                        created_at timestamptz NOT NULL DEFAULT now()
                    );
                    CREATE TABLE scrollback.machine (
                        machine_id    text PRIMARY KEY CHECK (machine_id ~ '^[0-9a-f]{32}$'),
                        registered_at timestamptz NOT NULL DEFAULT now()
                    );
                    CREATE TABLE scrollback.op (
                        machine_id    text   NOT NULL,
                        seq           bigint NOT NULL CHECK (seq >= 1),
                        op_id         text   NOT NULL UNIQUE,
                        entity        text   NOT NULL,
                        clock_wall    bigint NOT NULL,
                        clock_counter bigint NOT NULL,
                        payload       bytea  NOT NULL,
                        PRIMARY KEY (machine_id, seq)
                    );
                    DELETE FROM scrollback.schema_version;
                    INSERT INTO scrollback.schema_version (version) VALUES (1);
                    """)
            }
            try raiseVersion(connection)
            try connection.execute("COMMIT")
        } catch {
            if connection.isOpen { _ = try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    /// Raises a server of an older version (with its tables) to this program's, so that a
    /// scrollback that would lose what this one sends refuses it from now on.
    static func raiseVersion(_ connection: PostgresConnection) throws {
        try connection.execute(
            "UPDATE scrollback.schema_version SET version = \(serverSchemaVersion) WHERE version >= 1 AND version < \(serverSchemaVersion)")
    }

    static let keyCheckText = Array("scrollback key check v1".utf8)
    static let keyCheckAAD = Array("scrollback-key-check".utf8)

    /// The sealed key check on the server, if there is one.
    static func keyCheck(_ connection: PostgresConnection) throws -> [UInt8]? {
        let result = try connection.query("SELECT sealed FROM scrollback.key_check WHERE id = 1")
        return result.rows > 0 ? result.bytes(0, 0) : nil
    }

    /// Whether `key` opens the server's key check.
    static func opens(_ key: SyncKey, _ sealed: [UInt8]) -> Bool {
        key.open(sealed, aad: keyCheckAAD) == keyCheckText
    }

    /// One op on the server, when it holds any: whether `key` opens it (nil when there is
    /// none). The history of a server whose key check was lost is still sealed with its key.
    static func opensAnOp(_ key: SyncKey?, on connection: PostgresConnection) throws -> Bool? {
        let result = try connection.query(
            "SELECT machine_id, seq, op_id, entity, clock_wall, clock_counter, payload FROM scrollback.op ORDER BY machine_id, seq LIMIT 1")
        guard result.rows > 0 else { return nil }
        guard let key else { return false }
        guard let machine = result.text(0, 0), let seq = result.integer(0, 1), let opID = result.text(0, 2),
            let entity = result.text(0, 3), let wall = result.integer(0, 4), let counter = result.integer(0, 5),
            let sealed = result.bytes(0, 6), HybridClock.isMachineID(machine), wall >= 0, wall <= HybridClock.wallLimit,
            counter >= 0, counter <= HybridClock.counterLimit
        else { return false }
        let clock = HybridClock(wall: wall, counter: counter, machine: machine)
        return key.open(sealed, aad: aad(machine: machine, seq: seq, opID: opID, entity: entity, clock: clock)) != nil
    }

    /// Writes the key check for `key` unless one is there; then checks that `key` opens the
    /// one that is (another machine may have written its own first). Where the check is
    /// missing but ops are there (someone deleted the row), it is written only for a key
    /// that opens them: a new key would lock every machine out.
    static func establish(_ key: SyncKey, on connection: PostgresConnection) throws {
        if try keyCheck(connection) == nil, try opensAnOp(key, on: connection) == false { throw SyncError.wrongKey }
        let sealed = try key.seal(keyCheckText, aad: keyCheckAAD)
        try connection.query(
            "INSERT INTO scrollback.key_check (id, sealed) VALUES (1, $1) ON CONFLICT (id) DO NOTHING", [.bytes(sealed)])
        guard let stored = try keyCheck(connection), opens(key, stored) else { throw SyncError.wrongKey }
    }

    /// Checks, in one round trip, that the server's schema is one this program knows and
    /// that the key opens its key check: before anything is written anywhere.
    func checkServer() throws {
        let result: PostgresResult
        do {
            result = try connection.query(
                """
                SELECT (SELECT coalesce(max(version), 0)::int8 FROM scrollback.schema_version),
                       (SELECT sealed FROM scrollback.key_check WHERE id = 1),
                       (SELECT coalesce(max(seq), 0)::int8 FROM scrollback.op WHERE machine_id = $1)
                """, [.text(machine)])
        } catch SyncError.server(let state, _) where state == "42P01" || state == "3F000" {
            throw SyncError.notInitialized
        }
        let version = result.integer(0, 0) ?? 0
        if version > Int64(Self.serverSchemaVersion) {
            throw SyncError.newerServerSchema(found: Int(clamping: version), known: Self.serverSchemaVersion)
        }
        if version < 1 { throw result.isNull(0, 1) ? SyncError.notInitialized : SyncError.damagedServer }
        if version < Int64(Self.serverSchemaVersion) { try Self.raiseVersion(connection) }
        if let sealed = result.bytes(0, 1) {
            guard Self.opens(key, sealed) else { throw SyncError.wrongKey }
        } else {
            // The key check was deleted: this machine's key writes it again if it opens the
            // ops there (`establish` refuses one that does not).
            try Self.establish(key, on: connection)
        }
        // The server must hold what this machine sent; one reset or restored from an older
        // backup does not, and the others would wait for the missing changes for ever.
        let local = try store.localSyncState()
        let sentThrough = local.nextSeq - 1 - Int64(local.pending)
        if let held = result.integer(0, 2), held < sentThrough {
            throw SyncError.serverLost(machine: machine, held: held, sent: sentThrough)
        }
    }

    /// Connects to `conninfo` and makes the server ready for `key`: schema, key check.
    /// Returns whether the server held a history already (a key check).
    public static func prepareServer(conninfo: String, key: SyncKey) throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        try prepareSchema(connection)
        try establish(key, on: connection)
    }

    /// Whether the server at `conninfo` holds a history (a key check), after making its
    /// schema current; and whether `key`, when given, opens it.
    public static func probe(conninfo: String, key: SyncKey?) throws -> (hasHistory: Bool, keyOpens: Bool?) {
        let connection = try PostgresConnection(conninfo: conninfo)
        try prepareSchema(connection)
        guard let sealed = try keyCheck(connection) else {
            // No key check, but ops: a history all the same, which only its key opens.
            guard let opened = try opensAnOp(key, on: connection) else { return (false, nil) }
            return (true, key == nil ? nil : opened)
        }
        return (true, key.map { opens($0, sealed) })
    }

    // MARK: Sync

    /// Connects and syncs (`sync(progress:)`); a failure of either is noted in the store
    /// (`Store.recordSyncFailure`) before it is thrown, so that `sync status` and the
    /// browser's footer say what the last sync said, and since when.
    public static func run(store: Store, conninfo: String, key: SyncKey, progress: ((SyncProgress) -> Void)? = nil) throws -> SyncReport {
        do {
            return try SyncEngine(store: store, conninfo: conninfo, key: key).sync(progress: progress)
        } catch SyncError.off {
            throw SyncError.off
        } catch SyncError.busy {
            throw SyncError.busy
        } catch {
            // A full disk or a busy database may refuse this note too: the error is the answer.
            try? store.recordSyncFailure(Self.line(for: error), at: .now())
            throw error
        }
    }

    /// What `error` says, on one line safe to show.
    static func line(for error: any Error) -> String {
        let text: String
        switch error {
        case let error as SyncError: text = error.description
        case StorageError.diskFull(let path): text = "the disk holding \(path) is full"
        default: text = String(describing: error)
        }
        return UntrustedText.sanitized(text.split(whereSeparator: \.isNewline).joined(separator: " "))
    }

    /// Sends the outbox, then applies the other machines' new ops. Refuses a wrong key or a
    /// newer server schema before anything is written. Each batch sent is marked sent only
    /// after the server committed it; each page received is applied, with its cursor, in
    /// one local transaction; so a sync cut anywhere resumes where it stopped.
    public func sync(progress: ((SyncProgress) -> Void)? = nil) throws -> SyncReport {
        try checkServer()
        if try store.localSyncState().lastSync == nil, HybridClock.isMachineID(machine) {
            // Counted among the server's machines from its first sync, even with nothing to send.
            try connection.execute("INSERT INTO scrollback.machine (machine_id) VALUES ('\(machine)') ON CONFLICT DO NOTHING")
        }
        var report = SyncReport()
        report.sent = try push(progress: progress)
        let pulled = try pull(progress: progress)
        report.received = pulled.received
        report.applied = pulled.applied
        report.parked = pulled.parked
        try store.recordSync(at: .now())
        return report
    }

    /// The associated data of an op: everything the server sees of it, so that none of it
    /// can be changed (or the payload moved to another op) without the open failing.
    public static func aad(machine: String, seq: Int64, opID: String, entity: String, clock: HybridClock) -> [UInt8] {
        Array("scrollback-op-v1\u{1F}\(machine)\u{1F}\(seq)\u{1F}\(opID)\u{1F}\(entity)\u{1F}\(clock.wall)\u{1F}\(clock.counter)".utf8)
    }

    /// Ops at least this many go up through `COPY` (a few round trips more, far less work
    /// for the server than thousands of parameters); fewer, through one statement.
    public static let copyThreshold = 200
    /// The number of ops sent after which the server's statistics are brought up to date.
    static let analyzeThreshold = 10_000
    /// Machines whose ops one pull query reads, each up to ten batches' worth: at most
    /// 100,000 ops in memory with the default batch.
    public static let pullMachines = 20

    /// The columns a pull reads, in order, with the types `prepareSchema` gives them: each
    /// is read as the binary form of its type.
    static let opColumns: [(name: String, type: String, oid: UInt32)] = [
        ("machine_id", "text", 25), ("seq", "bigint", 20), ("op_id", "text", 25), ("entity", "text", 25),
        ("clock_wall", "bigint", 20), ("clock_counter", "bigint", 20), ("payload", "bytea", 17),
    ]

    /// How long a local transaction of a pull goes on taking pages (see `pull(progress:)`).
    static let transactionTime = Duration.seconds(1)

    private func push(progress: ((SyncProgress) -> Void)?) throws -> Int {
        let total = try store.localSyncState().pending
        var sent = 0
        if total >= Self.copyThreshold {
            let copied = try pushByCopy(total: total, progress: progress)
            // Fresh statistics for the pull's plan: without them (autovacuum takes a minute
            // to notice), PostgreSQL sorted every op of a machine for each page of a
            // machine that catches up at once, and compiled the query too (11 s instead of
            // 0.6 for 170,000 ops). Needs the table's owner; without, autovacuum does it.
            if copied >= Self.analyzeThreshold { _ = try? connection.execute("ANALYZE scrollback.op") }
            return copied
        }
        while true {
            let ops = try store.outgoing(limit: batch)
            guard let last = ops.last else { break }
            var values: [String] = []
            var parameters: [PostgresValue] = [.text(machine)]
            for op in ops {
                let sealed = try key.seal(
                    op.plaintext, aad: Self.aad(machine: machine, seq: op.seq, opID: op.opID, entity: op.entity, clock: op.clock))
                let base = parameters.count
                values.append(
                    "($\(base + 1)::int8, $\(base + 2)::text, $\(base + 3)::text, $\(base + 4)::int8, $\(base + 5)::int8, $\(base + 6)::bytea)")
                parameters += [
                    .text(String(op.seq)), .text(op.opID), .text(op.entity), .text(String(op.clock.wall)),
                    .text(String(op.clock.counter)), .bytes(sealed),
                ]
            }
            // One statement, so one round trip: nothing of the batch is written when another op
            // holds one of its numbers under this machine's id (a copied database sends too).
            let inserted = try connection.query(
                """
                WITH incoming (seq, op_id, entity, clock_wall, clock_counter, payload) AS (VALUES \(values.joined(separator: ", "))),
                     clash AS (SELECT 1 FROM scrollback.op AS o JOIN incoming AS i ON o.seq = i.seq
                                WHERE o.machine_id = $1 AND o.op_id <> i.op_id LIMIT 1),
                     registered AS (INSERT INTO scrollback.machine (machine_id) SELECT $1 WHERE NOT EXISTS (SELECT 1 FROM clash)
                                    ON CONFLICT DO NOTHING)
                INSERT INTO scrollback.op (machine_id, seq, op_id, entity, clock_wall, clock_counter, payload)
                SELECT $1, seq, op_id, entity, clock_wall, clock_counter, payload FROM incoming
                 WHERE NOT EXISTS (SELECT 1 FROM clash)
                ON CONFLICT DO NOTHING RETURNING seq
                """, parameters)
            if inserted.rows < ops.count {
                // Sent before (a sync cut after the server's commit): the same ops must be
                // there, else another database sends under this machine's id.
                try verifySent(ops)
            }
            try store.markSent(through: last.seq)
            sent += ops.count
            progress?(SyncProgress(phase: .sending, done: sent, total: max(total, sent)))
        }
        return sent
    }

    /// One batch in one transaction, its sealed ops sent with a binary `COPY` straight into
    /// `scrollback.op`. When one of their numbers is taken there (a batch sent before a kill
    /// kept it from being marked sent, or a copied database), the transaction is rolled back
    /// and the batch goes through a temporary table instead, inserted from there as the
    /// one-statement push does. Temporary tables go with their transaction, so a transaction
    /// pooler may give the next one to another backend.
    ///
    /// The batches overlap: while one is sealed and sent on another thread, the next is read
    /// from the outbox here. The connection is used by one thread at a time (a send starts
    /// after the one before it ended), and a batch is marked sent after the server committed
    /// it, so a cut push resends at most the batches in the air.
    private func pushByCopy(total: Int, progress: ((SyncProgress) -> Void)?) throws -> Int {
        final class Flight: @unchecked Sendable {
            let done = DispatchSemaphore(value: 0)
            var error: (any Error)?
        }
        struct Cargo: @unchecked Sendable {
            let engine: SyncEngine
            let ops: [OutgoingOp]
        }
        var sent = 0
        var inFlight: (ops: [OutgoingOp], flight: Flight)?
        func land() throws {
            guard let current = inFlight else { return }
            inFlight = nil
            current.flight.done.wait()
            if let error = current.flight.error { throw error }
            guard let last = current.ops.last else { return }
            try store.markSent(through: last.seq)
            sent += current.ops.count
            progress?(SyncProgress(phase: .sending, done: sent, total: max(total, sent)))
        }
        do {
            var after: Int64 = 0
            while true {
                let ops = try store.outgoing(after: after, limit: batch * 10)
                guard let last = ops.last else { break }
                after = last.seq
                try land()
                let flight = Flight()
                let cargo = Cargo(engine: self, ops: ops)
                Thread.detachNewThread {
                    do {
                        try cargo.engine.sendCopy(cargo.ops, data: cargo.engine.copyData(cargo.ops))
                    } catch {
                        flight.error = error
                    }
                    flight.done.signal()
                }
                inFlight = (ops, flight)
            }
            try land()
        } catch {
            // The connection is the sender's until it is done.
            inFlight?.flight.done.wait()
            throw error
        }
        return sent
    }

    /// The binary `COPY` input of `ops`, sealed.
    private func copyData(_ ops: [OutgoingOp]) throws -> [UInt8] {
        var data: [UInt8] = Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00, 0, 0, 0, 0, 0, 0, 0, 0]
        func int16(_ value: Int16) { withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) } }
        func int32(_ value: Int32) { withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) } }
        func field(_ bytes: [UInt8]) throws {
            guard let length = Int32(exactly: bytes.count) else { throw SyncError.crypto("a change is too large to send") }
            int32(length)
            data.append(contentsOf: bytes)
        }
        func int64(_ value: Int64) {
            int32(8)
            withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) }
        }
        let machineBytes = Array(machine.utf8)
        for op in ops {
            let sealed = try key.seal(
                op.plaintext, aad: Self.aad(machine: machine, seq: op.seq, opID: op.opID, entity: op.entity, clock: op.clock))
            int16(7)
            try field(machineBytes)
            int64(op.seq)
            try field(Array(op.opID.utf8))
            try field(Array(op.entity.utf8))
            int64(op.clock.wall)
            int64(op.clock.counter)
            try field(sealed)
        }
        int16(-1)
        return data
    }

    /// Sends one batch by `COPY` (see `pushByCopy(total:progress:)`).
    private func sendCopy(_ ops: [OutgoingOp], data: [UInt8]) throws {
        let columns = "(machine_id, seq, op_id, entity, clock_wall, clock_counter, payload)"
        // The machine id is 32 hex digits (checked when sync was turned on): safe in the text.
        guard HybridClock.isMachineID(machine) else { throw SyncError.off }
        do {
            try transaction {
                try connection.execute("INSERT INTO scrollback.machine (machine_id) VALUES ('\(machine)') ON CONFLICT DO NOTHING")
                try connection.copyIn("COPY scrollback.op \(columns) FROM STDIN (FORMAT binary)", data: data)
            }
            return
        } catch SyncError.server(let state, _) where state == "23505" {
            // Taken numbers: the careful way below.
        }
        let inserted = try transaction {
            try connection.execute(
                """
                CREATE TEMP TABLE scrollback_incoming (machine_id text, seq int8, op_id text, entity text, clock_wall int8,
                                                       clock_counter int8, payload bytea) ON COMMIT DROP
                """)
            try connection.copyIn("COPY scrollback_incoming \(columns) FROM STDIN (FORMAT binary)", data: data)
            return try connection.query(
                """
                WITH clash AS (SELECT 1 FROM scrollback.op AS o JOIN scrollback_incoming AS i ON o.seq = i.seq
                                WHERE o.machine_id = $1 AND o.op_id <> i.op_id LIMIT 1),
                     registered AS (INSERT INTO scrollback.machine (machine_id) SELECT $1 WHERE NOT EXISTS (SELECT 1 FROM clash)
                                    ON CONFLICT DO NOTHING)
                INSERT INTO scrollback.op \(columns)
                SELECT $1, seq, op_id, entity, clock_wall, clock_counter, payload FROM scrollback_incoming
                 WHERE NOT EXISTS (SELECT 1 FROM clash)
                ON CONFLICT DO NOTHING RETURNING seq
                """, [.text(machine)]).rows
        }
        if inserted < ops.count { try verifySent(ops) }
    }

    /// `body` in a transaction on the server: committed when it returns, rolled back when it
    /// throws.
    private func transaction<T>(_ body: () throws -> T) throws -> T {
        try connection.execute("BEGIN")
        do {
            let result = try body()
            try connection.execute("COMMIT")
            return result
        } catch {
            if connection.isOpen { _ = try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    private func verifySent(_ ops: [OutgoingOp]) throws {
        guard let first = ops.first, let last = ops.last else { return }
        let result = try connection.query(
            "SELECT seq, op_id FROM scrollback.op WHERE machine_id = $1 AND seq BETWEEN $2::int8 AND $3::int8",
            [.text(machine), .text(String(first.seq)), .text(String(last.seq))])
        var stored: [Int64: String] = [:]
        for row in 0..<result.rows {
            if let seq = result.integer(row, 0), let opID = result.text(row, 1) { stored[seq] = opID }
        }
        for op in ops where stored[op.seq] != op.opID {
            throw SyncError.machineClash(
                "another copy of this database syncs as machine \(machine): the server holds another change under its number \(op.seq); nothing of this batch was sent; a copied database file must not sync as the same machine: on the copy that should stop, run `scrollback sync off --force`, then `scrollback sync init` (it joins as a new machine)")
        }
    }

    /// What the pull's reader knows: the cursors as far as it has read (ahead of what is
    /// applied), the machines read up to a gap, and the group of machines it is in. Used by
    /// one thread at a time: the reader's while a read is in flight, else the caller's.
    private final class PullReader: @unchecked Sendable {
        var cursors: [String: Int64]
        var stalled = Set<String>()
        /// The machines go by in groups, in the order of their ids; those up to `after` are
        /// done for this sync.
        var after = ""
        /// Ops a read takes in all (about ten batches), split among the machines that had
        /// ops to read the last time (all of a group at first): a machine done leaves its
        /// share to the others.
        let perRead: Int
        var active: Int
        var perMachine: Int { max(perRead / 10, perRead / max(1, active)) }
        /// The first damaged op read: its machine is read no further in this sync, what
        /// came before it is applied, and the pull says so at its end.
        var damaged: SyncError?

        init(cursors: [String: Int64], perRead: Int, active: Int) {
            self.cursors = cursors
            self.perRead = perRead
            self.active = active
        }
    }

    /// One read of the pull: a page of ops per machine of a group, in the order of the
    /// machines' ids, checked and opened; empty when a group of machines is done and another
    /// follows; nil when nothing is left. Moves the reader's cursors past what it read.
    private func read(_ reader: PullReader) throws -> [(origin: String, page: [IncomingOp])]? {
        var cursors = reader.cursors
        for machine in reader.stalled { cursors[machine] = Int64.max }
        // Shaped so that the planner's estimate stays under PostgreSQL's JIT threshold
        // (literal limits, a group of machines a query): compiling the query took 25 ms
        // of an incremental sync. Every machine of the group comes back, with a row of
        // nulls when nothing of it waits. Each machine's ops come in order; they are
        // checked so.
        let result = try connection.query(
            """
            SELECT m.machine_id, o.seq, o.op_id, o.entity, o.clock_wall, o.clock_counter, o.payload
              FROM (SELECT machine_id FROM scrollback.machine WHERE machine_id <> $1 AND machine_id > $4
                     ORDER BY machine_id LIMIT \(Self.pullMachines)) AS m
              LEFT JOIN unnest($2::text[], $3::int8[]) AS c (machine_id, seq) ON c.machine_id = m.machine_id
              LEFT JOIN LATERAL (SELECT * FROM scrollback.op AS o
                                  WHERE o.machine_id = m.machine_id AND o.seq > coalesce(c.seq, 0)
                                  ORDER BY o.seq LIMIT \(reader.perMachine)) AS o ON true
            """,
            [.text(machine)] + Self.arrays(of: cursors) + [.text(reader.after)])
        guard result.rows > 0 else { return nil }
        for (index, column) in Self.opColumns.enumerated() where result.type(index) != column.oid {
            throw SyncError.changedColumn(name: column.name, type: column.type)
        }
        let rows = (0..<result.rows).map { row in
            ServerOpRow(
                machine: result.text(row, 0), nothing: result.isNull(row, 1), seq: result.integer(row, 1), opID: result.text(row, 2),
                entity: result.text(row, 3), wall: result.integer(row, 4), counter: result.integer(row, 5), sealed: result.bytes(row, 6))
        }
        let key = self.key
        let plan = try PullPlan.plan(rows: rows, cursors: cursors, stalled: reader.stalled, groupSize: Self.pullMachines) { row, clock in
            guard let sealed = row.sealed, let opID = row.opID, let entity = row.entity, let seq = row.seq else { return nil }
            return key.open(sealed, aad: Self.aad(machine: clock.machine, seq: seq, opID: opID, entity: entity, clock: clock))
        }
        reader.stalled = plan.stalled
        if reader.damaged == nil { reader.damaged = plan.damaged }
        if plan.isDone { return nil }
        if let after = plan.nextGroupAfter { reader.after = after }
        for (origin, page) in plan.pages {
            if let last = page.last { reader.cursors[origin] = last.seq }
        }
        reader.active = plan.pages.isEmpty ? Self.pullMachines : plan.pages.count
        return plan.pages
    }

    /// Reads the other machines' ops and applies them. The next read is in flight on another
    /// thread while a page is applied here, and the network is never waited for inside a
    /// local transaction: a slow or stalled server would keep every other writer of the
    /// database out (the browser's own keys included). Pages are applied in local
    /// transactions of several pages each, up to about a second long, each page with its
    /// cursor: a commit per page of 5,000 ops wrote the pages of the random indexes it
    /// touched (public ids, field clocks) again every time. A transaction takes the next
    /// read only when it has arrived; no transaction when nothing comes.
    private func pull(progress: ((SyncProgress) -> Void)?) throws -> (received: Int, applied: Int, parked: Int) {
        final class Flight: @unchecked Sendable {
            let done = DispatchSemaphore(value: 0)
            var pages: [(origin: String, page: [IncomingOp])]?
            var error: (any Error)?
            /// Whether the read is over; once true, `land` does not wait.
            var isOver: Bool {
                guard done.wait(timeout: .now()) == .success else { return false }
                done.signal()
                return true
            }
        }
        struct Cargo: @unchecked Sendable {
            let engine: SyncEngine
            let reader: PullReader
        }
        let others = try connection.query("SELECT count(*)::int8 FROM scrollback.machine WHERE machine_id <> $1", [.text(machine)])
        let group = max(1, min(Self.pullMachines, Int(clamping: others.integer(0, 0) ?? 1)))
        let reader = PullReader(cursors: try store.syncCursors(), perRead: max(10, batch * 10), active: group)
        func launch() -> Flight {
            let flight = Flight()
            let cargo = Cargo(engine: self, reader: reader)
            Thread.detachNewThread {
                do {
                    flight.pages = try cargo.engine.read(cargo.reader)
                } catch {
                    flight.error = error
                }
                flight.done.signal()
            }
            return flight
        }
        func land(_ flight: Flight) throws -> [(origin: String, page: [IncomingOp])]? {
            flight.done.wait()
            if let error = flight.error { throw error }
            return flight.pages
        }
        var received = 0, applied = 0
        var inFlight: Flight? = launch()
        do {
            var pending: [(origin: String, page: [IncomingOp])] = []
            while true {
                if pending.isEmpty {
                    guard let flight = inFlight else { break }
                    inFlight = nil
                    guard let pages = try land(flight) else { break }
                    inFlight = launch()
                    pending = pages
                    if pending.isEmpty { continue }
                }
                let started = ContinuousClock.now
                var counted = (received: 0, applied: 0)
                try store.applyingPages(about: pending.reduce(0) { $0 + $1.page.count }) {
                    counted = (0, 0)
                    while let (origin, page) = pending.first, let last = page.last {
                        let result = try store.apply(page, from: origin, through: last.seq)
                        pending.removeFirst()
                        counted.received += page.count
                        counted.applied += result.applied
                        guard ContinuousClock.now - started < Self.transactionTime else { return }
                        // The next read, if it is here already.
                        if pending.isEmpty, let flight = inFlight, flight.isOver {
                            inFlight = nil
                            guard let pages = try land(flight) else { return }
                            inFlight = launch()
                            pending = pages
                        }
                    }
                }
                received += counted.received
                applied += counted.applied
                progress?(SyncProgress(phase: .receiving, done: received, total: nil))
            }
        } catch {
            // The connection is the reader's until it is done.
            inFlight?.done.wait()
            throw error
        }
        if let damaged = reader.damaged { throw damaged }
        if let origin = reader.stalled.sorted().first {
            let cursor = (try store.syncCursors())[origin] ?? 0
            throw SyncError.gap(machine: origin, after: cursor)
        }
        // What still waits at the end, not what waited on the way.
        return (received, applied, try store.localSyncState().parked)
    }

    /// `cursors` as two parameters, PostgreSQL arrays of the machine ids and of their
    /// cursors in the same order (for `unnest($n::text[], $m::int8[])`).
    private static func arrays(of cursors: [String: Int64]) -> [PostgresValue] {
        let machines = cursors.keys.sorted()
        return [
            .text("{" + machines.joined(separator: ",") + "}"),
            .text("{" + machines.map { String(cursors[$0] ?? 0) }.joined(separator: ",") + "}"),
        ]
    }

    /// The server's machines and how many of their ops wait to be applied here.
    public func serverState() throws -> ServerState {
        try checkServer()
        // Counted, not told by the numbers: a damaged or hostile row's number is no count
        // (and two of them added would not fit in 64 bits).
        let result = try connection.query(
            """
            SELECT (SELECT count(*) FROM scrollback.machine)::int8,
                   (SELECT count(*) FROM scrollback.op AS o
                      JOIN scrollback.machine AS m ON m.machine_id = o.machine_id
                      LEFT JOIN unnest($2::text[], $3::int8[]) AS c (machine_id, seq) ON c.machine_id = o.machine_id
                     WHERE o.machine_id <> $1 AND o.seq > coalesce(c.seq, 0))::int8
            """,
            [.text(machine)] + Self.arrays(of: try store.syncCursors()))
        guard result.rows == 1, let count = result.integer(0, 0), let waiting = result.integer(0, 1), let machineCount = Int(exactly: count)
        else {
            throw SyncError.damagedOp("the server's count of machines and changes is not a number")
        }
        return ServerState(machines: machineCount, toReceive: waiting)
    }
}

