import Foundation
import ScrollbackModel
import ScrollbackSync
import Testing
import TestSupport

/// `scrollback sync snapshot` and a new machine's `sync init`, through the binary.
@Suite("sync snapshots, through the binary", .serialized)
struct SnapshotCommandTests {
    @Test("sync snapshot says what it sent (--json too); a new machine's sync init starts from it and then takes the changes after it; a damaged snapshot is said and the init catches up from the changes, or (compacted) says to make a new snapshot, after which the next sync catches up; all end as the source")
    func snapshotAndInit() throws {
        let server = try PostgresServer()
        let url = try server.newDatabase()
        let key = try SyncKey.generate()
        let secrets = ["SCROLLBACK_SYNC_URL": url, "SCROLLBACK_SYNC_KEY": key.text]
        let a = try BinaryRunner()
        #expect(try a.run(["demo", "--count", "300"]).status == 0)
        #expect(try a.run(["sync", "init"], environment: secrets).status == 0)
        let made = try a.run(["sync", "snapshot"], environment: secrets)
        #expect(made.status == 0, "\(made.error)")
        #expect(made.output.contains("Snapshot ") && made.output.contains("sent: ") && made.output.contains("sealed chunk"), "\(made.output)")
        let json = try a.run(["sync", "snapshot", "--json"], environment: secrets)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any], "\(json.output) \(json.error)")
        #expect((object["chunks"] as? Int ?? 0) >= 1 && (object["bytes"] as? Int ?? 0) > 0)
        let listed = (try a.json(["list", "--limit", "1"])["conversations"] as? [[String: Any]])?.first?["id"] as? String
        #expect(try a.run(["rename", try #require(listed), "After the snapshot"]).status == 0)
        #expect(try a.run(["sync"], environment: secrets).status == 0)

        let b = try BinaryRunner()
        let joined = try b.run(["sync", "init"], environment: secrets)
        #expect(joined.status == 0, "\(joined.error)")
        #expect(joined.output.contains("it starts from the server's snapshot") && joined.output.contains("300 conversations"), "\(joined.output)")
        #expect(joined.output.contains("Synced: sent 0, received 1."), "\(joined.output)")
        #expect(try RestoreCommandTests.export(b) == RestoreCommandTests.export(a))
        #expect(try b.run(["check"]).status == 0)

        // A damaged snapshot: the init says so and catches up from the changes; the ones it
        // covers were compacted, so that fails too, saying what to do; a new snapshot made
        // on A lets the next sync through.
        _ = try server.psql(url, "UPDATE scrollback.snapshot_chunk SET sealed = overlay(sealed placing '\\x00'::bytea from 30 for 1)")
        let c = try BinaryRunner()
        let fallback = try c.run(["sync", "init"], environment: secrets)
        #expect(fallback.error.contains("the server's snapshot could not be used (chunk 0 of") && fallback.error.contains("catching up from the changes instead"), "\(fallback.error)")
        #expect(fallback.output.contains("Sync is on: this machine is"), "\(fallback.output)")
        #expect(fallback.status == 1 && fallback.error.contains("the changes it covers were compacted") && fallback.error.contains("run `scrollback sync snapshot` on a machine that syncs"), "\(fallback.error)")
        #expect(!c.dataFiles().contains { $0.contains(".received-") }, "\(c.dataFiles())")
        #expect(try a.run(["sync", "snapshot"], environment: secrets).status == 0)
        let again = try c.run(["sync"], environment: secrets)
        #expect(again.status == 0 && again.output.contains("caught up from the server's newest snapshot first"), "\(again.output) \(again.error)")
        #expect(try RestoreCommandTests.export(c) == RestoreCommandTests.export(a))
        // --readonly refuses it before anything is made.
        let readOnly = try a.run(["--readonly", "sync", "snapshot"], environment: secrets)
        #expect(readOnly.status == 1 && readOnly.error.contains("--readonly"), "\(readOnly.error)")
    }

    /// Now, as `--at` takes it (milliseconds, UTC).
    static func stamp() -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date())
    }

    @Test("restore --at rebuilds, into a new file, the history as exports taken at those times show it: from the beginning before any compaction, from a monthly snapshot plus the changes after it, from the newest, from a local backup (with the server's changes after it, or alone); before the oldest kept snapshot it says what the oldest time is; the database is never touched")
    func asOf() throws {
        let server = try PostgresServer()
        let url = try server.newDatabase()
        let key = try SyncKey.generate()
        let secrets = ["SCROLLBACK_SYNC_URL": url, "SCROLLBACK_SYNC_KEY": key.text]
        let a = try BinaryRunner()
        func export() throws -> String { try RestoreCommandTests.export(a) }
        func id(_ title: String) throws -> String {
            let list = try a.json(["list", "--limit", "100"])["conversations"] as? [[String: Any]] ?? []
            return try #require(list.first { ($0["title"] as? String) == title }?["id"] as? String)
        }
        func at(_ time: String, _ name: String) throws -> (BinaryRunner.Result, String) {
            let out = a.folder.file(name)
            return (try a.run(["restore", "--at", time, "--out", out], environment: secrets), out)
        }
        #expect(try a.run(["import", try a.recordExport(titles: ["One", "Two", "Three"])]).status == 0)
        #expect(try a.run(["sync", "init"], environment: secrets).status == 0)
        usleep(20_000)
        let t0 = Self.stamp()
        let e0 = try export()
        usleep(20_000)
        #expect(try a.run(["rename", try id("One"), "One, renamed"]).status == 0)
        #expect(try a.run(["sync"], environment: secrets).status == 0)
        // Nothing compacted yet: from the beginning.
        let (first, firstOut) = try at(t0, "t0.sqlite")
        #expect(first.status == 0, "\(first.error)")
        // As of the time typed, to the millisecond.
        #expect(first.output.contains("as of \(t0),"), "\(first.output)")
        #expect(try RestoreCommandTests.export(a, db: firstOut) == e0)
        // A snapshot (which compacts what it covers), dated last month: kept as the monthly one.
        #expect(try a.run(["sync", "snapshot"], environment: secrets).status == 0)
        _ = try server.psql(url, "UPDATE scrollback.snapshot SET started_at = now() - interval '40 days', complete_at = now() - interval '40 days'")
        usleep(20_000)
        #expect(try a.run(["pin", try id("Two")]).status == 0)
        #expect(try a.run(["delete", try id("Three"), "--yes"]).status == 0)
        #expect(try a.run(["sync"], environment: secrets).status == 0)
        usleep(20_000)
        let t1 = Self.stamp()
        let e1 = try export()
        // A local backup of this moment, to start from later.
        let local = a.folder.file("local-t1.sqlite")
        #expect(try a.run(["backup", local]).status == 0)
        usleep(20_000)
        #expect(try a.run(["import", try a.recordExport(titles: ["One", "Two", "Three", "Four"])]).status == 0)
        #expect(try a.run(["rename", try id("Two"), "Two, renamed"]).status == 0)
        #expect(try a.run(["sync", "snapshot"], environment: secrets).status == 0)
        usleep(20_000)
        #expect(try a.run(["unpin", try id("Two, renamed")]).status == 0)
        #expect(try a.run(["sync"], environment: secrets).status == 0)
        usleep(20_000)
        let t2 = Self.stamp()
        let e2 = try export()
        let before = try Data(contentsOf: URL(fileURLWithPath: a.databasePath))
        let (second, secondOut) = try at(t1, "t1.sqlite")
        #expect(second.status == 0 && second.output.contains("from the snapshot of"), "\(second.output) \(second.error)")
        #expect(try RestoreCommandTests.export(a, db: secondOut) == e1)
        let (third, thirdOut) = try at(t2, "t2.sqlite")
        #expect(third.status == 0, "\(third.error)")
        #expect(try RestoreCommandTests.export(a, db: thirdOut) == e2)
        #expect(try a.run(["--db", thirdOut, "--readonly", "check"], withDatabase: false).status == 0)
        // From the local backup: it, then the server's changes after it up to the time.
        let fromBackup = a.folder.file("from-backup.sqlite")
        let rebuilt = try a.run(["restore", "--at", t2, "--from", local, "--out", fromBackup], environment: secrets)
        #expect(rebuilt.status == 0 && rebuilt.output.contains("local-t1.sqlite (its newest change of"), "\(rebuilt.output) \(rebuilt.error)")
        #expect(try RestoreCommandTests.export(a, db: fromBackup) == e2)
        // Without the server's secrets: the backup as it is, when it holds nothing later.
        let alone = a.folder.file("alone.sqlite")
        #expect(try a.run(["restore", "--at", t2, "--from", local, "--out", alone]).status == 0)
        #expect(try RestoreCommandTests.export(a, db: alone) == e1)
        // A backup with changes after the time is refused.
        let tooNew = try a.run(["restore", "--at", t0, "--from", local, "--out", a.folder.file("too-new.sqlite")], environment: secrets)
        #expect(tooNew.status == 1 && tooNew.error.contains("holds changes made after that time"), "\(tooNew.error)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: a.databasePath)) == before)
        // Only the newest snapshot kept (keep_months = 0): a time before it is too early,
        // and it says what the oldest time is.
        let config = a.folder.file(".config/scrollback/config.toml")
        try FileManager.default.createDirectory(atPath: (config as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try "[sync]\nkeep_months = 0\n".write(toFile: config, atomically: false, encoding: .utf8)
        #expect(try a.run(["sync", "snapshot"], environment: secrets).status == 0)
        #expect(try server.psql(url, "SELECT count(*) FROM scrollback.snapshot").hasPrefix("1"))
        let unchanged = try Data(contentsOf: URL(fileURLWithPath: a.databasePath))
        let (early, earlyOut) = try at(t1, "early.sqlite")
        #expect(early.status == 1 && early.error.contains("the server keeps the history from ") && early.error.contains("give --at a time from then"), "\(early.error)")
        #expect(!FileManager.default.fileExists(atPath: earlyOut))
        // Never over a file; a date it cannot read; no --out.
        let (taken, _) = try at(t2, "t2.sqlite")
        #expect(taken.status == 1 && taken.error.contains("exists; --out takes the name of a new file"), "\(taken.error)")
        #expect(try a.run(["restore", "--at", "someday", "--out", a.folder.file("x.sqlite")], environment: secrets).status == 2)
        #expect(try a.run(["restore", "--at", "2026-11-01"], environment: secrets).status == 2)
        #expect(try Data(contentsOf: URL(fileURLWithPath: a.databasePath)) == unchanged)
        #expect(try !a.folder.listing().contains { $0.contains(".rebuild-") })
    }

    @Test("what killed snapshot, catch-up and restore processes left beside the database (unlocked, a minute old) goes at the next command that writes; what is young stays (another may be making it)")
    func sweep() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["import", try runner.recordExport(titles: ["Alpha"])]).status == 0)
        let folder = runner.dataFolder
        let old = [".history.sqlite.snapshot-AAAAAA", ".history.sqlite.received-BBBBBB", ".history.sqlite.restore-CCCCCC",
                   ".history.sqlite.upload-0123456789abcdef0123456789abcdef"]
        let young = ".history.sqlite.received-DDDDDD"
        for name in old + [young, old[0] + "-wal"] { try Data("x".utf8).write(to: URL(fileURLWithPath: folder + "/" + name)) }
        for name in old + [old[0] + "-wal"] {
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-120)], ofItemAtPath: folder + "/" + name)
        }
        let id = (try runner.json(["list"])["conversations"] as? [[String: Any]])?.first?["id"] as? String
        #expect(try runner.run(["pin", try #require(id)]).status == 0)
        let left = runner.dataFiles().filter { $0.hasPrefix(".") }
        #expect(left == [young], "\(left)")
    }
}
