import Foundation
import ScrollbackModel
import ScrollbackStorage
import TerminalText

// The push: this machine's outbox sealed and sent, by one statement or by COPY.
extension SyncEngine {
    /// Ops at least this many go up through `COPY` (a few round trips more, far less work
    /// for the server than thousands of parameters); fewer, through one statement.
    public static let copyThreshold = 200
    /// The number of ops sent after which the server's statistics are brought up to date.
    static let analyzeThreshold = 10_000

    func push(progress: ((SyncProgress) -> Void)?) throws -> Int {
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
    func pushByCopy(total: Int, progress: ((SyncProgress) -> Void)?) throws -> Int {
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
    func copyData(_ ops: [OutgoingOp]) throws -> [UInt8] {
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
    func sendCopy(_ ops: [OutgoingOp], data: [UInt8]) throws {
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

    func verifySent(_ ops: [OutgoingOp]) throws {
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
}
