import Foundation
import ScrollbackModel
import ScrollbackStorage
import TerminalText

// The pull: the other machines' ops read in pages (planned by PullPlan), opened and applied.
extension SyncEngine {
    /// Machines whose ops one pull query reads, each up to ten batches' worth: at most
    /// 100,000 ops in memory with the default batch.
    public static let pullMachines = 20

    /// The columns a pull reads, in order, with the types `prepareSchema` gives them: each
    /// is read as the binary form of its type.
    static let opColumns: [(name: String, type: String, oid: UInt32)] = [
        ("machine_id", "text", 25), ("seq", "bigint", 20), ("op_id", "text", 25), ("entity", "text", 25),
        ("clock_wall", "bigint", 20), ("clock_counter", "bigint", 20), ("payload", "bytea", 17),
    ]

    /// What the pull's reader knows: the cursors as far as it has read (ahead of what is
    /// applied), the machines read up to a gap, and the group of machines it is in. Used by
    /// one thread at a time: the reader's while a read is in flight, else the caller's.
    final class PullReader: @unchecked Sendable {
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
    func read(_ reader: PullReader) throws -> [(origin: String, page: [IncomingOp])]? {
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
    func pull(progress: ((SyncProgress) -> Void)?) throws -> (received: Int, applied: Int, parked: Int) {
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
                        guard ContinuousClock.now - started < transactionTime else { return }
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
    static func arrays(of cursors: [String: Int64]) -> [PostgresValue] {
        let machines = cursors.keys.sorted()
        return [
            .text("{" + machines.joined(separator: ",") + "}"),
            .text("{" + machines.map { String(cursors[$0] ?? 0) }.joined(separator: ",") + "}"),
        ]
    }
}
