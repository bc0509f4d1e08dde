import Foundation
import ScrollbackModel
import ScrollbackSync
import Testing
import TestSupport

/// `scrollback sync snapshot` and a new machine's `sync init`, through the binary.
@Suite("sync snapshots, through the binary", .serialized)
struct SnapshotCommandTests {
    @Test("sync snapshot says what it sent (--json too); a new machine's sync init starts from it and then takes the changes after it; a damaged snapshot is said in one line and the init catches up from the changes instead; both end as the source")
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

        // A damaged snapshot: the init says so and catches up from the changes.
        _ = try server.psql(url, "UPDATE scrollback.snapshot_chunk SET sealed = overlay(sealed placing '\\x00'::bytea from 30 for 1)")
        let c = try BinaryRunner()
        let fallback = try c.run(["sync", "init"], environment: secrets)
        #expect(fallback.status == 0, "\(fallback.error)")
        #expect(fallback.error.contains("the server's snapshot could not be used (chunk 0 of") && fallback.error.contains("catching up from the changes instead"), "\(fallback.error)")
        #expect(fallback.error.split(separator: "\n").count == 1)
        #expect(fallback.output.contains("Sync is on: this machine is"), "\(fallback.output)")
        #expect(try RestoreCommandTests.export(c) == RestoreCommandTests.export(a))
        #expect(!c.dataFiles().contains { $0.contains(".received-") }, "\(c.dataFiles())")
        // --readonly refuses it before anything is made.
        let readOnly = try a.run(["--readonly", "sync", "snapshot"], environment: secrets)
        #expect(readOnly.status == 1 && readOnly.error.contains("--readonly"), "\(readOnly.error)")
    }
}
