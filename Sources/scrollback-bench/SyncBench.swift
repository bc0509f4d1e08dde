import CLibPQ
import Foundation
import ScrollbackExport
import ScrollbackDemo
import ScrollbackImport
import ScrollbackModel
import ScrollbackStorage
import ScrollbackSync
import TestSupport

/// Sync against a throwaway PostgreSQL server started here, beside raw libpq in the same
/// run: the initial push against a binary `COPY` of the same sealed payloads into a table
/// like ours; a new machine's catch-up against a binary `COPY … TO STDOUT` of the same rows;
/// an incremental sync of 10 changes against one round trip; the peak memory of a catch-up
/// of the whole history against one of a tenth of it.
@MainActor
enum SyncBench {
    static func run(work: String, count: Int, report: inout Report) throws {
        let server = try PostgresServer()
        let folder = (work as NSString).appendingPathComponent("sync")
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let key = try SyncKey.generate()
        let url = try server.newDatabase()
        let raw = try server.newDatabase()

        print("sync: making \(count) conversations…")
        let a = try Store.open(path: folder + "/a.sqlite")
        let outcome = try DemoGenerator(seed: 1).fill(a, count: count)
        try SyncEngine.prepareServer(conninfo: url, key: key)
        let machineA = SyncEngine.newMachineID()
        let ops = try a.turnSyncOn(machine: machineA, joining: false)

        // Raw: the same ops, sealed the same way, copied in binary into a table like ours
        // (sealing is not timed: it is the same work on both sides).
        var rows: [(seq: Int64, opID: String, entity: String, wall: Int64, counter: Int64, sealed: [UInt8])] = []
        var after: Int64 = 0
        while true {
            let page = try a.outgoing(after: after, limit: 5_000)
            guard let last = page.last else { break }
            for op in page {
                let sealed = try key.seal(
                    op.plaintext, aad: SyncEngine.aad(machine: machineA, seq: op.seq, opID: op.opID, entity: op.entity, clock: op.clock))
                rows.append((op.seq, op.opID, op.entity, op.clock.wall, op.clock.counter, sealed))
            }
            after = last.seq
        }
        let rawConnection = try RawPQ(raw)
        try rawConnection.execute(
            """
            CREATE TABLE op (machine_id text NOT NULL, seq bigint NOT NULL, op_id text NOT NULL UNIQUE, entity text NOT NULL,
                             clock_wall bigint NOT NULL, clock_counter bigint NOT NULL, payload bytea NOT NULL,
                             PRIMARY KEY (machine_id, seq))
            """)
        let rawPush = try Measure.time { try rawConnection.copyIn(machine: machineA, rows: rows) }
        let push = try Measure.time {
            let engine = try SyncEngine(store: a, conninfo: url, key: key)
            let sent = try engine.sync()
            guard sent.sent == ops else { throw BenchError("sync sent \(sent.sent) of \(ops)") }
        }
        report.add(
            "sync", "initial push: \(ops) ops (\(count) conversations, \(outcome.messages) messages)", ours: push, baseline: rawPush,
            unit: "ms", figure: rawPush / max(push, 0.001), figureName: "raw/ours", atLeast: 1.0 / 3)

        // A new machine catches up; raw reads the same rows out in binary.
        let rawPull = try Measure.time { _ = try rawConnection.copyOut("COPY (SELECT * FROM op ORDER BY machine_id, seq) TO STDOUT (FORMAT binary)") }
        let b = try Store.open(path: folder + "/b.sqlite")
        _ = try b.turnSyncOn(machine: SyncEngine.newMachineID(), joining: true)
        let pull = try Measure.time {
            let received = try SyncEngine(store: b, conninfo: url, key: key).sync()
            guard received.received == ops else { throw BenchError("catch-up received \(received.received) of \(ops)") }
        }
        // For scale, not a bar: a new machine now starts from a snapshot (SnapshotBench),
        // where the bar of 1/3 of the raw read stands; this is a catch-up without one.
        report.add(
            "sync", "op replay of \(ops) ops (a catch-up without a snapshot)", ours: pull, baseline: rawPull, unit: "ms",
            figure: rawPull / max(pull, 0.001), figureName: "raw/ours")

        // For scale, not a bar: scrollback's own import of the same history, from its
        // JSON Lines export, into a new database (what storing it here costs at the least).
        let exported = folder + "/a.jsonl"
        var lines = ""
        let exporter = Exporter(store: a)
        try exporter.forEachConversation { lines += try exporter.render($0, as: .jsonl) + "\n" }
        try lines.write(toFile: exported, atomically: false, encoding: .utf8)
        lines = ""
        let imported = try Store.open(path: folder + "/import.sqlite")
        let importing = try Measure.time {
            let summary = Importer(store: imported).run(paths: [exported], format: nil)
            guard summary.failed.isEmpty else { throw BenchError("import failed: \(summary.failed)") }
        }
        report.add(
            "sync", "new machine's catch-up vs an import of the same history", ours: pull, baseline: importing, unit: "ms",
            figure: pull / max(importing, 0.001), figureName: "ours/import")

        // Ten changes, then a sync; against one round trip.
        let engineA = try SyncEngine(store: a, conninfo: url, key: key)
        let ids = try a.conversations.page(sort: .updated, filter: .none, at: .first, limit: 10).items.map(\.id)
        var incremental: [Double] = []
        for round in 0..<5 {
            for (index, id) in ids.enumerated() { _ = try a.conversations.rename(id: id, to: "bench \(round) \(index)") }
            incremental.append(try Measure.time { _ = try engineA.sync() })
        }
        let roundTrip = Measure.median(try Measure.samples(20) { try rawConnection.execute("SELECT 1") })
        let median = Measure.median(incremental)
        report.add(
            "sync", "incremental sync of 10 changes (median of 5) vs a round trip", ours: median, baseline: roundTrip, unit: "ms",
            figure: median - roundTrip, figureName: "ms beyond", atMost: 50)

        // Memory: a catch-up of everything against one of a tenth, each in a process of its own.
        let small = try server.newDatabase()
        let c = try Store.open(path: folder + "/c.sqlite")
        _ = try DemoGenerator(seed: 2).fill(c, count: max(count / 10, 1))
        try SyncEngine.prepareServer(conninfo: small, key: key)
        _ = try c.turnSyncOn(machine: SyncEngine.newMachineID(), joining: false)
        _ = try SyncEngine(store: c, conninfo: small, key: key).sync()
        func peak(_ conninfo: String, _ name: String) throws -> Double {
            let result = try Measure.run(
                CommandLine.arguments[0], ["--child", "catchup", "--db", folder + "/\(name).sqlite", "--file", conninfo],
                environment: ["SCROLLBACK_BENCH_KEY": key.text])
            guard result.status == 0, let peak = result.peakKilobytes else { throw BenchError("child catchup failed: \(result.output)") }
            return Double(peak) / 1024
        }
        let bigPeak = try peak(url, "d")
        let smallPeak = try peak(small, "e")
        report.add(
            "sync", "catch-up peak memory: \(count) vs \(max(count / 10, 1)) conversations", ours: bigPeak, baseline: smallPeak,
            unit: "MiB", figure: bigPeak / max(smallPeak, 0.001), figureName: "big/small", atMost: 1.5)

        try SnapshotBench.run(
            source: folder + "/a.sqlite", url: url, key: key, folder: folder, raw: rawConnection, replay: pull, count: count,
            small: (folder + "/c.sqlite", small), report: &report)
    }

    /// The child's part: a new machine's catch-up from `conninfo`, into `database`.
    static func catchUp(database: String, conninfo: String) throws {
        guard let text = ProcessInfo.processInfo.environment["SCROLLBACK_BENCH_KEY"], let key = SyncKey(text: text) else {
            throw BenchError("no key")
        }
        let store = try Store.open(path: database)
        _ = try store.turnSyncOn(machine: SyncEngine.newMachineID(), joining: true)
        _ = try SyncEngine(store: store, conninfo: conninfo, key: key).sync()
    }
}

/// libpq and nothing else: the baseline.
final class RawPQ {
    let handle: OpaquePointer

    init(_ conninfo: String) throws {
        guard let handle = PQconnectdb(conninfo), PQstatus(handle) == CONNECTION_OK else { throw BenchError("raw connect failed") }
        self.handle = handle
    }

    deinit { PQfinish(handle) }

    func execute(_ sql: String) throws {
        guard let result = PQexec(handle, sql) else { throw BenchError("raw exec failed") }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw BenchError("raw: \(String(cString: PQerrorMessage(handle)))")
        }
    }

    /// `COPY op FROM STDIN (FORMAT binary)` of `rows`, in one transaction.
    func copyIn(machine: String, rows: [(seq: Int64, opID: String, entity: String, wall: Int64, counter: Int64, sealed: [UInt8])]) throws {
        try execute("BEGIN")
        guard let started = PQexec(handle, "COPY op FROM STDIN (FORMAT binary)"), PQresultStatus(started) == PGRES_COPY_IN else {
            throw BenchError("raw: COPY did not start")
        }
        PQclear(started)
        var buffer: [UInt8] = Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00] + [0, 0, 0, 0] + [0, 0, 0, 0]
        func int16(_ value: Int16) { withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) } }
        func int32(_ value: Int32) { withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) } }
        func field(_ bytes: [UInt8]) {
            int32(Int32(bytes.count))
            buffer.append(contentsOf: bytes)
        }
        func int64(_ value: Int64) {
            int32(8)
            withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) }
        }
        func flush() throws {
            let sent = buffer.withUnsafeBufferPointer { pointer in
                pointer.withMemoryRebound(to: CChar.self) { PQputCopyData(handle, $0.baseAddress, Int32(pointer.count)) }
            }
            guard sent == 1 else { throw BenchError("raw: COPY data refused") }
            buffer.removeAll(keepingCapacity: true)
        }
        let machineBytes = Array(machine.utf8)
        for row in rows {
            int16(7)
            field(machineBytes)
            int64(row.seq)
            field(Array(row.opID.utf8))
            field(Array(row.entity.utf8))
            int64(row.wall)
            int64(row.counter)
            field(row.sealed)
            if buffer.count > 1 << 20 { try flush() }
        }
        int16(-1)
        try flush()
        guard PQputCopyEnd(handle, nil) == 1 else { throw BenchError("raw: COPY end refused") }
        while let result = PQgetResult(handle) {
            let status = PQresultStatus(result)
            PQclear(result)
            guard status == PGRES_COMMAND_OK else { throw BenchError("raw: COPY failed: \(String(cString: PQerrorMessage(handle)))") }
        }
        try execute("COMMIT")
    }

    /// The bytes of a `COPY … TO STDOUT`.
    func copyOut(_ sql: String) throws -> Int {
        guard let started = PQexec(handle, sql), PQresultStatus(started) == PGRES_COPY_OUT else { throw BenchError("raw: COPY out") }
        PQclear(started)
        var total = 0
        while true {
            var pointer: UnsafeMutablePointer<CChar>?
            let count = PQgetCopyData(handle, &pointer, 0)
            if let pointer { PQfreemem(pointer) }
            if count < 0 { break }
            total += Int(count)
        }
        while let result = PQgetResult(handle) { PQclear(result) }
        return total
    }
}
