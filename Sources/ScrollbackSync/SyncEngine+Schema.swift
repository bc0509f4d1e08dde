import Foundation
import ScrollbackModel
import ScrollbackStorage
import TerminalText

// The server's schema (created, migrated, refused when newer) and the key check.
extension SyncEngine {
    /// Creates or migrates the server's schema, in one transaction under an advisory lock
    /// (which a pooler keeps for the transaction). Refuses a schema newer than this
    /// program's.
    static func prepareSchema(_ connection: PostgresConnection) throws {
        try connection.execute("BEGIN")
        do {
            try connection.execute("SELECT pg_advisory_xact_lock(7135582941005215531)")
            // Made only where missing: `CREATE … IF NOT EXISTS` asks for the right to create
            // even when there is nothing to make, which a user of a schema made by its owner
            // may not have.
            let present = try connection.query(
                "SELECT (to_regnamespace('scrollback') IS NOT NULL)::int::int8, (to_regclass('scrollback.schema_version') IS NOT NULL)::int::int8")
            if present.integer(0, 0) != 1 { try connection.execute("CREATE SCHEMA IF NOT EXISTS scrollback") }
            if present.integer(0, 1) != 1 {
                try connection.execute("CREATE TABLE IF NOT EXISTS scrollback.schema_version (version integer NOT NULL)")
            }
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
            // Raised only when older: a user who may only read and write the tables of a
            // current server syncs all the same.
            if version < Int64(serverSchemaVersion) { try raiseVersion(connection) }
            try connection.execute("COMMIT")
        } catch {
            if connection.isOpen { _ = try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    /// Raises a server of an older version (with its tables) to this program's, so that a
    /// scrollback that would lose what this one sends refuses it from now on.
    /// Version 3 adds the tables of attachments' bytes (`SyncEngine+Files`): a scrollback
    /// that knows only version 2 would drop every file, so it refuses the server instead.
    /// Version 4 adds snapshots (`SyncEngine+Snapshot`) and, with them, compaction: a
    /// scrollback that knows only version 3 would wait for ever on ops a compaction removed.
    static func raiseVersion(_ connection: PostgresConnection) throws {
        do {
            try createFileTables(connection)
            try createSnapshotTables(connection)
            try connection.execute(
                "UPDATE scrollback.schema_version SET version = \(serverSchemaVersion) WHERE version >= 1 AND version < \(serverSchemaVersion)")
        } catch SyncError.server(let state, let message) where state == "42501" {
            throw SyncError.cannotRaiseSchema(message)
        }
    }

    private static func createSnapshotTables(_ connection: PostgresConnection) throws {
        let present = try connection.query(
            """
            SELECT (to_regclass('scrollback.snapshot') IS NOT NULL AND to_regclass('scrollback.snapshot_chunk') IS NOT NULL
                    AND to_regclass('scrollback.snapshot_lease') IS NOT NULL AND to_regclass('scrollback.progress') IS NOT NULL
                    AND to_regclass('scrollback.compacted') IS NOT NULL)::int::int8
            """)
        if present.integer(0, 0) == 1 { return }
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS scrollback.snapshot (
                id          text        PRIMARY KEY CHECK (id ~ '^[0-9a-f]{32}$'),
                machine_id  text        NOT NULL CHECK (machine_id ~ '^[0-9a-f]{32}$'),
                chunk_size  integer     NOT NULL CHECK (chunk_size >= 1),
                chunks      integer     NOT NULL CHECK (chunks >= 1),
                bytes       bigint      NOT NULL CHECK (bytes >= 0),
                machines    text[]      NOT NULL,
                seqs        bigint[]    NOT NULL,
                files       text[]      NOT NULL DEFAULT '{}',
                started_at  timestamptz NOT NULL DEFAULT now(),
                complete_at timestamptz
            );
            CREATE TABLE IF NOT EXISTS scrollback.snapshot_chunk (
                snapshot_id text    NOT NULL REFERENCES scrollback.snapshot (id) ON DELETE CASCADE,
                idx         integer NOT NULL CHECK (idx >= 0),
                sealed      bytea   NOT NULL,
                PRIMARY KEY (snapshot_id, idx)
            );
            CREATE TABLE IF NOT EXISTS scrollback.progress (
                machine_id text        PRIMARY KEY CHECK (machine_id ~ '^[0-9a-f]{32}$'),
                synced_at  timestamptz NOT NULL DEFAULT now(),
                machines   text[]      NOT NULL,
                seqs       bigint[]    NOT NULL
            );
            CREATE TABLE IF NOT EXISTS scrollback.compacted (
                machine_id text   PRIMARY KEY CHECK (machine_id ~ '^[0-9a-f]{32}$'),
                through    bigint NOT NULL CHECK (through >= 0)
            );
            CREATE TABLE IF NOT EXISTS scrollback.snapshot_lease (
                id         integer     PRIMARY KEY CHECK (id = 1),
                machine_id text        NOT NULL,
                expires_at timestamptz NOT NULL
            );
            """)
    }

    private static func createFileTables(_ connection: PostgresConnection) throws {
        let present = try connection.query(
            "SELECT (to_regclass('scrollback.file_chunk') IS NOT NULL AND to_regclass('scrollback.file') IS NOT NULL)::int::int8")
        if present.integer(0, 0) == 1 { return }
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS scrollback.file_chunk (
                name   text    NOT NULL CHECK (name ~ '^[0-9a-f]{64}$'),
                idx    integer NOT NULL CHECK (idx >= 0),
                sealed bytea   NOT NULL,
                PRIMARY KEY (name, idx)
            );
            CREATE TABLE IF NOT EXISTS scrollback.file (
                name    text        PRIMARY KEY CHECK (name ~ '^[0-9a-f]{64}$'),
                chunks  integer     NOT NULL CHECK (chunks >= 1),
                sent_at timestamptz NOT NULL DEFAULT now()
            );
            """)
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
                       greatest((SELECT coalesce(max(seq), 0)::int8 FROM scrollback.op WHERE machine_id = $1),
                                (SELECT coalesce(max(through), 0)::int8 FROM scrollback.compacted WHERE machine_id = $1))
                """, [.text(machine)])
        } catch SyncError.server(let state, _) where state == "42P01" || state == "3F000" {
            throw SyncError.notInitialized
        }
        let version = result.integer(0, 0) ?? 0
        if version > Int64(Self.serverSchemaVersion) {
            throw SyncError.newerServerSchema(found: Int(clamping: version), known: Self.serverSchemaVersion)
        }
        if version < 1 { throw result.isNull(0, 1) ? SyncError.notInitialized : SyncError.damagedServer }
        // Raised under the schema's lock, in a transaction, as `sync init` makes it.
        if version < Int64(Self.serverSchemaVersion) { try Self.prepareSchema(connection) }
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
}
