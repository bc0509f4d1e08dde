import CLibPQ
import Foundation
import ScrollbackModel
import ScrollbackStorage
import ScrollbackSync

/// Sync snapshots, beside raw libpq in the same run (part of the sync section, on its
/// history): the upload against a binary `COPY … FROM STDIN` of the same sealed chunks; a
/// new machine's catch-up from it against a binary `COPY … TO STDOUT` of them and against
/// the op replay measured before; the peak memory of each, in a process of its own, at the
/// section's size and a tenth of it.
@MainActor
enum SnapshotBench {
    static func run(
        source: String, url: String, key: SyncKey, folder: String, raw: RawPQ, replay: Double, count: Int, small: (path: String, url: String),
        report: inout Report
    ) throws {
        // The upload, in a child (its memory apart): the image is made first, then sent.
        let upload = try child("snapshotout", database: source, conninfo: url, key: key)
        let uploadMs = upload.times["upload-ms"] ?? 0
        let imageMs = upload.times["image-ms"] ?? 0
        let connection = try RawPQ(url)
        _ = connection
        let chunks = try sealedChunks(url)
        let bytes = chunks.reduce(0) { $0 + $1.count }
        try raw.execute("CREATE TABLE snapshot_chunk (snapshot_id text NOT NULL, idx integer NOT NULL, sealed bytea NOT NULL, PRIMARY KEY (snapshot_id, idx))")
        let rawUpload = try Measure.time { try copyIn(raw, chunks) }
        report.add(
            "sync", "snapshot upload: \(chunks.count) chunks, \(bytes >> 20) MiB (the image took \(Int(imageMs)) ms before it)",
            ours: uploadMs, baseline: rawUpload, unit: "ms", figure: rawUpload / max(uploadMs, 0.001), figureName: "raw/ours", atLeast: 1.0 / 3)

        // A new machine from it, then its first sync; raw reads the same chunks out.
        let rawDownload = try Measure.time {
            _ = try raw.copyOut("COPY (SELECT sealed FROM snapshot_chunk ORDER BY snapshot_id, idx) TO STDOUT (FORMAT binary)")
        }
        let fresh = folder + "/from-snapshot.sqlite"
        let catchUp = try child("snapshotin", database: fresh, conninfo: url, key: key)
        let catchUpMs = catchUp.times["catchup-ms"] ?? 0
        if let phases = catchUp.phases { print("sync: snapshot catch-up: \(phases)") }
        report.add(
            "sync", "new machine from the snapshot (\(count) conversations) vs COPY TO STDOUT of its chunks", ours: catchUpMs,
            baseline: rawDownload, unit: "ms", figure: rawDownload / max(catchUpMs, 0.001), figureName: "raw/ours", atLeast: 1.0 / 3)
        report.add(
            "sync", "new machine from the snapshot vs replaying every op (measured above)", ours: catchUpMs, baseline: replay, unit: "ms",
            figure: catchUpMs / max(replay, 0.001), figureName: "ours/replay", atMost: 0.3)

        // Memory, at both sizes: each side's peak in MiB.
        let smallUpload = try child("snapshotout", database: small.path, conninfo: small.url, key: key)
        let smallCatchUp = try child("snapshotin", database: folder + "/from-small-snapshot.sqlite", conninfo: small.url, key: key)
        for (name, big, little) in [("upload", upload.peak, smallUpload.peak), ("catch-up", catchUp.peak, smallCatchUp.peak)] {
            report.add(
                "sync", "snapshot \(name) peak memory: \(count) vs \(max(count / 10, 1)) conversations", ours: big, baseline: little, unit: "MiB",
                figure: big, figureName: "MiB", atMost: 64)
        }
    }

    struct ChildRun {
        var peak: Double
        var times: [String: Double]
        var phases: String?
    }

    static func child(_ mode: String, database: String, conninfo: String, key: SyncKey) throws -> ChildRun {
        let result = try Measure.run(
            CommandLine.arguments[0], ["--child", mode, "--db", database, "--file", conninfo], environment: ["SCROLLBACK_BENCH_KEY": key.text])
        guard result.status == 0, let peak = result.peakKilobytes else { throw BenchError("child \(mode) failed: \(result.output)") }
        var times: [String: Double] = [:]
        for line in result.output.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, parts[0].hasSuffix("-ms"), let value = Double(parts[1]) { times[String(parts[0])] = value }
        }
        let phases = result.output.split(separator: "\n").first { $0.hasPrefix("phases: ") }.map { String($0.dropFirst(8)) }
        return ChildRun(peak: Double(peak) / 1024, times: times, phases: phases)
    }

    /// The child's parts.
    static func upload(database: String, conninfo: String) throws {
        let key = try benchKey()
        let store = try Store.open(path: database)
        let engine = try SyncEngine(store: store, conninfo: conninfo, key: key)
        let started = Date()
        var firstChunk: Date?
        _ = try engine.makeSnapshot(progress: { done, _ in if done == 0 && firstChunk == nil { firstChunk = Date() } })
        let sending = firstChunk ?? started
        print("image-ms \(sending.timeIntervalSince(started) * 1000)")
        print("upload-ms \(Date().timeIntervalSince(sending) * 1000)")
    }

    static func catchUp(database: String, conninfo: String) throws {
        let key = try benchKey()
        try? FileManager.default.removeItem(atPath: database)
        _ = try Store.open(path: database)
        var phases: [(String, Double)] = []
        let seconds = try Measure.time {
            guard let caught = try SyncEngine.catchUp(conninfo: conninfo, key: key, databasePath: database, phases: { phases.append(($0, $1)) })
            else {
                throw BenchError("no snapshot on the server")
            }
            let started = Date()
            let store = try Store.open(path: database)
            _ = try SyncEngine(store: store, conninfo: conninfo, key: key).sync()
            phases.append(("sync", Date().timeIntervalSince(started) * 1000))
            _ = caught
        }
        print("catchup-ms \(seconds)")
        print("phases: " + phases.map { "\($0.0) \(Int($0.1)) ms" }.joined(separator: ", "))
    }

    static func benchKey() throws -> SyncKey {
        guard let text = ProcessInfo.processInfo.environment["SCROLLBACK_BENCH_KEY"], let key = SyncKey(text: text) else { throw BenchError("no key") }
        return key
    }

    /// The sealed chunks of the newest snapshot, as the server holds them.
    static func sealedChunks(_ conninfo: String) throws -> [[UInt8]] {
        let connection = try RawPQ(conninfo)
        guard
            let result = PQexecParams(
                connection.handle,
                "SELECT sealed FROM scrollback.snapshot_chunk WHERE snapshot_id = (SELECT id FROM scrollback.snapshot WHERE complete_at IS NOT NULL ORDER BY complete_at DESC LIMIT 1) ORDER BY idx",
                0, nil, nil, nil, nil, 1)
        else { throw BenchError("raw: no chunks") }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_TUPLES_OK else { throw BenchError("raw: \(String(cString: PQerrorMessage(connection.handle)))") }
        return (0..<PQntuples(result)).map { row in
            let length = Int(PQgetlength(result, row, 0))
            guard let value = PQgetvalue(result, row, 0) else { return [] }
            return value.withMemoryRebound(to: UInt8.self, capacity: max(length, 1)) { Array(UnsafeBufferPointer(start: $0, count: length)) }
        }
    }

    /// `COPY snapshot_chunk FROM STDIN (FORMAT binary)` of `chunks`, in one transaction.
    nonisolated static func copyIn(_ raw: RawPQ, _ chunks: [[UInt8]]) throws {
        try raw.execute("BEGIN")
        guard let started = PQexec(raw.handle, "COPY snapshot_chunk FROM STDIN (FORMAT binary)"), PQresultStatus(started) == PGRES_COPY_IN else {
            throw BenchError("raw: COPY did not start")
        }
        PQclear(started)
        var buffer: [UInt8] = Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00] + [0, 0, 0, 0] + [0, 0, 0, 0]
        func int16(_ value: Int16) { withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) } }
        func int32(_ value: Int32) { withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) } }
        func flush() throws {
            let sent = buffer.withUnsafeBufferPointer { pointer in
                pointer.withMemoryRebound(to: CChar.self) { PQputCopyData(raw.handle, $0.baseAddress, Int32(pointer.count)) }
            }
            guard sent == 1 else { throw BenchError("raw: COPY data refused") }
            buffer.removeAll(keepingCapacity: true)
        }
        let id = Array("00000000000000000000000000000001".utf8)
        for (index, chunk) in chunks.enumerated() {
            int16(3)
            int32(Int32(id.count))
            buffer.append(contentsOf: id)
            int32(4)
            int32(Int32(index))
            int32(Int32(chunk.count))
            buffer.append(contentsOf: chunk)
            try flush()
        }
        int16(-1)
        try flush()
        guard PQputCopyEnd(raw.handle, nil) == 1 else { throw BenchError("raw: COPY end refused") }
        while let result = PQgetResult(raw.handle) {
            let status = PQresultStatus(result)
            PQclear(result)
            guard status == PGRES_COMMAND_OK else { throw BenchError("raw: COPY failed: \(String(cString: PQerrorMessage(raw.handle)))") }
        }
        try raw.execute("COMMIT")
    }
}
