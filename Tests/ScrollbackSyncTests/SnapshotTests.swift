import Foundation
import ScrollbackModel
import ScrollbackStorage
@testable import ScrollbackSync
import Testing
import TestSupport

/// Sync snapshots against a real PostgreSQL server: made, a new machine caught up from one
/// (then the ops after it), a cut upload taken up again at every chunk, damaged, swapped,
/// replayed, truncated and foreign chunks refused (nothing of them opened), the lease.
@Suite("Sync snapshots through a real PostgreSQL server", .serialized)
struct SnapshotTests {
    /// A machine with `count` conversations that syncs, in a new scene.
    static func source(_ scene: SyncScene, count: Int = 40) throws -> SyncMachine {
        let a = try scene.machine("a")
        for index in 0..<count { _ = try a.store.upsert(syncFixture(index, messages: 4)) }
        try a.turnOn()
        try a.sync()
        return a
    }

    static func engine(_ machine: SyncMachine, chunk: Int = 16 << 10) throws -> SyncEngine {
        let engine = try SyncEngine(store: machine.store, conninfo: machine.url, key: machine.key)
        engine.snapshotChunkSize = chunk
        return engine
    }

    /// A new machine `name`: its empty database caught up from the newest snapshot, then synced.
    static func newMachine(_ scene: SyncScene, _ name: String) throws -> (machine: SyncMachine, fromSnapshot: Bool) {
        let path = scene.folder.file("\(name).sqlite")
        _ = try Store.open(path: path)
        let caught = try SyncEngine.catchUp(conninfo: scene.url, key: scene.key, databasePath: path)
        let machine = try SyncMachine(scene.folder, name, url: scene.url, key: scene.key, machine: caught?.machine)
        if caught == nil { try machine.turnOn() }
        try machine.sync()
        return (machine, caught != nil)
    }

    @Test("a snapshot, then edits after it: a new machine starts from the snapshot (its outbox empty: it sends nothing of it), gets the edits after it, and holds what the source holds; its own edits reach the source")
    func newMachineFromSnapshot() throws {
        let scene = try SyncScene()
        let a = try Self.source(scene)
        let report = try Self.engine(a).makeSnapshot()
        #expect(report.chunks > 3, "\(report)")
        #expect(try scene.server.psql(scene.url, "SELECT count(*) FROM scrollback.snapshot WHERE complete_at IS NOT NULL").hasPrefix("1"))
        // After the snapshot: a rename, a delete, a new conversation.
        _ = try a.store.conversations.rename(id: try a.id("Conversation 3"), to: "Renamed after the snapshot")
        _ = try a.store.conversations.delete(ids: [try a.id("Conversation 5")])
        _ = try a.store.upsert(syncFixture(100, title: "Imported after the snapshot"))
        try a.sync()
        let (b, fromSnapshot) = try Self.newMachine(scene, "b")
        #expect(fromSnapshot)
        #expect(try b.export() == a.export())
        #expect(try b.store.check().problems.isEmpty)
        #expect(try b.store.localSyncState().pending == 0)
        // Nothing of A's history went up again under B's name.
        #expect(try scene.server.psql(scene.url, "SELECT count(*) FROM scrollback.op WHERE machine_id = '\(b.machine)'").hasPrefix("0"))
        _ = try b.store.conversations.rename(id: try b.id("Conversation 7"), to: "Renamed on B")
        try b.sync()
        try a.sync()
        #expect(try a.titles().contains("Renamed on B"))
        #expect(try a.export() == b.export())
        // No file of the snapshot is left beside either database.
        let left = try FileManager.default.contentsOfDirectory(atPath: scene.folder.path).filter { $0.hasPrefix(".") }
        #expect(left.isEmpty, "\(left)")
    }

    @Test("an upload cut after every chunk in turn is taken up again from the chunks the server holds, with the same image; a new machine from it is whole")
    func resumedAtEveryChunk() throws {
        let scene = try SyncScene()
        let a = try Self.source(scene, count: 20)
        let chunk = 32 << 10
        var resumedTotal = 0
        var cuts = 0
        var final: SnapshotReport?
        // Each call sends one chunk more, then is cut; the last one finishes.
        while final == nil {
            do {
                final = try Self.engine(a, chunk: chunk).makeSnapshot(stopAfter: 1)
            } catch SyncError.connectionLost {
                cuts += 1
                #expect(try scene.server.psql(scene.url, "SELECT count(*) FROM scrollback.snapshot").hasPrefix("1"))
                #expect(try scene.server.psql(scene.url, "SELECT count(*) FROM scrollback.snapshot WHERE complete_at IS NOT NULL").hasPrefix("0"))
            }
            #expect(cuts < 100)
            if cuts >= 100 { break }
        }
        let report = try #require(final)
        resumedTotal = report.resumed
        #expect(report.chunks >= 3 && cuts == report.chunks - 1, "\(report), \(cuts) cuts")
        #expect(resumedTotal == report.chunks - 1)
        #expect(try a.store.pendingSnapshot() == nil)
        let (b, fromSnapshot) = try Self.newMachine(scene, "b")
        #expect(fromSnapshot)
        #expect(try b.export() == a.export())
    }

    @Test("tampered, swapped, replayed, truncated, moved cursors and foreign-key chunks: each is refused with a clear line, nothing of it is opened or left, and the database is as it was; put back, it is taken")
    func refusedChunks() throws {
        let scene = try SyncScene()
        let a = try Self.source(scene)
        let old = try Self.engine(a).makeSnapshot()
        // Its first chunk, kept aside: the next snapshot replaces it on the server.
        _ = try scene.server.psql(scene.url, "CREATE TABLE old_chunk AS SELECT * FROM scrollback.snapshot_chunk WHERE snapshot_id = '\(old.id)' AND idx = 0")
        _ = try a.store.conversations.rename(id: try a.id("Conversation 1"), to: "Between the snapshots")
        try a.sync()
        let new = try Self.engine(a).makeSnapshot()
        #expect(new.chunks >= 3)
        func psql(_ sql: String) throws { _ = try scene.server.psql(scene.url, sql) }
        let backup = "CREATE TABLE IF NOT EXISTS kept AS SELECT * FROM scrollback.snapshot_chunk WHERE snapshot_id = '\(new.id)'"
        let putBack = """
            DELETE FROM scrollback.snapshot_chunk WHERE snapshot_id = '\(new.id)';
            INSERT INTO scrollback.snapshot_chunk SELECT * FROM kept;
            UPDATE scrollback.snapshot SET seqs = (SELECT seqs FROM kept_row), bytes = (SELECT bytes FROM kept_row), chunks = (SELECT chunks FROM kept_row) WHERE id = '\(new.id)';
            """
        try psql(backup)
        try psql("CREATE TABLE kept_row AS SELECT * FROM scrollback.snapshot WHERE id = '\(new.id)'")
        let other = try SyncKey.generate()
        let row = try #require(try SyncEngine.snapshots(on: PostgresConnection(conninfo: scene.url), where: "id = $1", [.text(new.id)]).first)
        let foreign = try other.seal(Array(repeating: 7, count: row.chunkSize), aad: SyncEngine.snapshotAAD(row, index: 1))
        let hex = foreign.map { String(format: "%02x", $0) }.joined()
        let cases: [(String, String, String)] = [
            ("a changed byte", "UPDATE scrollback.snapshot_chunk SET sealed = overlay(sealed placing '\\x00'::bytea from 40 for 1) WHERE snapshot_id = '\(new.id)' AND idx = 1", "chunk 1 of"),
            ("two chunks swapped", "UPDATE scrollback.snapshot_chunk AS c SET sealed = o.sealed FROM scrollback.snapshot_chunk AS o WHERE c.snapshot_id = '\(new.id)' AND o.snapshot_id = c.snapshot_id AND c.idx IN (0, 1) AND o.idx = 1 - c.idx", "chunk 0 of"),
            ("a chunk of the older snapshot", "UPDATE scrollback.snapshot_chunk AS c SET sealed = o.sealed FROM old_chunk AS o WHERE c.snapshot_id = '\(new.id)' AND c.idx = 0", "chunk 0 of"),
            ("the last chunk dropped", "DELETE FROM scrollback.snapshot_chunk WHERE snapshot_id = '\(new.id)' AND idx = \(new.chunks - 1)", "is missing"),
            ("cut to fewer chunks", "UPDATE scrollback.snapshot SET chunks = 2, bytes = 2 * chunk_size WHERE id = '\(new.id)'", "chunk 0 of 2"),
            ("cursors moved", "UPDATE scrollback.snapshot SET seqs = array_replace(seqs, seqs[1], seqs[1] - 1) WHERE id = '\(new.id)'", "older than the changes it compacted"),
            ("a chunk sealed with another key", "UPDATE scrollback.snapshot_chunk SET sealed = '\\x\(hex)'::bytea WHERE snapshot_id = '\(new.id)' AND idx = 1", "chunk 1 of"),
        ]
        for (index, (name, tamper, says)) in cases.enumerated() {
            try psql(tamper)
            let path = scene.folder.file("new-\(index).sqlite")
            _ = try Store.open(path: path)
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            do {
                _ = try SyncEngine.catchUp(conninfo: scene.url, key: scene.key, databasePath: path)
                Issue.record("\(name): taken")
            } catch let error as SnapshotError {
                #expect(error.description.contains(says), "\(name): \(error)")
                #expect(!error.description.contains("\n"))
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "\(name)")
            let left = try FileManager.default.contentsOfDirectory(atPath: scene.folder.path).filter { $0.contains(".received-") }
            #expect(left.isEmpty, "\(name): \(left)")
            try psql(putBack)
        }
        // Put back whole, it is taken.
        let (b, fromSnapshot) = try Self.newMachine(scene, "b")
        #expect(fromSnapshot)
        #expect(try b.export() == a.export())
        // A machine with a history of its own merges as before: no snapshot is used.
        let c = try scene.machine("c")
        _ = try c.store.upsert(syncFixture(500, title: "C's own"))
        #expect(try !c.store.holdsNothing())
    }

    @Test("one machine at a time: a second machine's snapshot is refused while the first holds the lease, saying which; a lease run out is taken over")
    func lease() throws {
        let scene = try SyncScene()
        let a = try Self.source(scene, count: 5)
        let b = try scene.machine("b")
        try b.turnOn()
        try b.sync()
        let first = try Self.engine(a)
        try first.checkServer()
        try first.takeLease()
        do {
            _ = try Self.engine(b).makeSnapshot()
            Issue.record("a second snapshot was made under another's lease")
        } catch let error as SnapshotError {
            guard case .leased(let machine, _) = error else { throw error }
            #expect(machine == a.machine)
            #expect(error.description.contains("is making a snapshot"))
        }
        #expect(try scene.server.psql(scene.url, "SELECT count(*) FROM scrollback.snapshot").hasPrefix("0"))
        // Run out: taken over.
        _ = try scene.server.psql(scene.url, "UPDATE scrollback.snapshot_lease SET expires_at = now() - interval '1 second'")
        let made = try Self.engine(b).makeSnapshot()
        #expect(made.chunks >= 1)
        // The first, whose lease was taken, cannot renew it.
        #expect(throws: SnapshotError.leaseLost) { try first.renewLease() }
        #expect(try scene.server.psql(scene.url, "SELECT count(*) FROM scrollback.snapshot_lease").hasPrefix("0"))
    }

    @Test("compaction: the ops a snapshot covers that every machine active in the last 90 days has passed go (the server then holds the history, not every edit); a machine away longer comes back with unsent changes, catches up from the snapshot, and its changes win or lose by their clocks; snapshots kept one a month")
    func compaction() throws {
        let scene = try SyncScene()
        let a = try Self.source(scene, count: 30)
        let b = try scene.machine("b")
        try b.turnOn()
        try b.sync()
        let c = try scene.machine("c")
        try c.turnOn()
        try c.sync()
        // C goes away with changes it never sent: one that nobody else touches, one that A
        // changes again later (A's, newer, wins).
        _ = try c.store.conversations.rename(id: try c.id("Conversation 2"), to: "C's own, never sent until it came back")
        _ = try c.store.conversations.rename(id: try c.id("Conversation 4"), to: "C's older rename")
        usleep(20_000)
        // Meanwhile: many edits on A and B.
        let churn = try a.id("Conversation 1")
        for round in 0..<200 { _ = try a.store.conversations.rename(id: churn, to: "churn \(round)") }
        _ = try a.store.conversations.rename(id: try a.id("Conversation 4"), to: "A's newer rename")
        try a.sync()
        try b.sync()
        _ = try b.store.conversations.delete(ids: [try b.id("Conversation 6")])
        _ = try b.store.upsert(syncFixture(300, title: "B's new one"))
        try b.sync()
        try a.sync()
        // C synced last 100 days ago, as far as the server knows.
        _ = try scene.server.psql(scene.url, "UPDATE scrollback.progress SET synced_at = now() - interval '100 days' WHERE machine_id = '\(c.machine)'")
        let before = Int(try scene.server.psql(scene.url, "SELECT count(*) FROM scrollback.op").trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        let engine = try Self.engine(a)
        engine.keepMonths = 0
        let made = try engine.makeSnapshot()
        let after = Int(try scene.server.psql(scene.url, "SELECT count(*) FROM scrollback.op").trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(made.compacted.ops > 200 && after == before - made.compacted.ops, "\(made.compacted) \(before) → \(after)")
        #expect(after < 50, "\(after) ops left of \(before)")
        // A new machine still starts from it; B, active, goes on as before.
        let (d, fromSnapshot) = try Self.newMachine(scene, "d")
        #expect(fromSnapshot)
        #expect(try d.export() == a.export())
        // C comes back: its unsent changes go up; it catches up from the snapshot first.
        let back = try c.sync()
        #expect(back.mergedSnapshot)
        #expect(try c.titles().contains("B's new one"))
        #expect(try c.titles().contains("A's newer rename") && !c.titles().contains("C's older rename"))
        #expect(try !c.titles().contains("Conversation 6"))
        #expect(try c.titles().contains("churn 199"))
        try a.sync()
        try b.sync()
        try d.sync()
        #expect(try a.titles().contains("C's own, never sent until it came back"))
        #expect(try a.export() == c.export())
        #expect(try b.export() == c.export())
        #expect(try d.export() == c.export())
        #expect(try c.store.check().problems.isEmpty)
        // Another sync of C merges nothing more.
        #expect(try c.sync().mergedSnapshot == false)

        // Kept: the newest, and one a month for keep_months.
        _ = try scene.server.psql(scene.url, "UPDATE scrollback.snapshot SET started_at = now() - interval '40 days', complete_at = now() - interval '40 days'")
        _ = try Self.engine(a).makeSnapshot()
        _ = try scene.server.psql(scene.url, "UPDATE scrollback.snapshot SET started_at = started_at - interval '1 day', complete_at = complete_at - interval '1 day' WHERE started_at > now() - interval '1 hour'")
        let monthly = try Self.engine(a)
        monthly.keepMonths = 12
        _ = try monthly.makeSnapshot()
        #expect(try scene.server.psql(scene.url, "SELECT count(*) FROM scrollback.snapshot").hasPrefix("2"))
        let newestOnly = try Self.engine(a)
        newestOnly.keepMonths = 0
        _ = try newestOnly.makeSnapshot()
        #expect(try scene.server.psql(scene.url, "SELECT count(*) FROM scrollback.snapshot").hasPrefix("1"))
        #expect(try scene.server.psql(scene.url, "SELECT count(*) FROM scrollback.snapshot_chunk WHERE snapshot_id NOT IN (SELECT id FROM scrollback.snapshot)").hasPrefix("0"))
    }

    @Test("a cut upload is not taken up again once another machine finished a newer snapshot (its image is older), and the newest image is the one kept; a damaged newest snapshot gives way to an older kept one, the changes after it still on the server")
    func staleAndFallback() throws {
        let scene = try SyncScene()
        let a = try Self.source(scene, count: 30)
        let b = try scene.machine("b")
        try b.turnOn()
        try b.sync()
        // A's upload is cut; its lease runs out; B, later, makes and finishes a newer one.
        #expect(throws: SyncError.self) { try Self.engine(a).makeSnapshot(stopAfter: 1) }
        #expect(try a.store.pendingSnapshot() != nil)
        _ = try scene.server.psql(scene.url, "UPDATE scrollback.snapshot_lease SET expires_at = now() - interval '1 second'")
        _ = try b.store.conversations.rename(id: try b.id("Conversation 3"), to: "After A's image")
        try b.sync()
        try a.sync()
        let newer = try Self.engine(b).makeSnapshot()
        // A again: a new image, not the old one finished.
        let again = try Self.engine(a).makeSnapshot()
        #expect(again.resumed == 0 && again.id != newer.id)
        let (c, fromSnapshot) = try Self.newMachine(scene, "c")
        #expect(fromSnapshot)
        #expect(try c.titles().contains("After A's image"))
        #expect(try c.export() == a.export())
        // Kept: the newest image (A's second), whatever finished last.
        #expect(try scene.server.psql(scene.url, "SELECT id FROM scrollback.snapshot").contains(again.id))

        // The newest damaged, an older one kept for its month: a new machine starts from
        // the older one and takes the changes after it.
        _ = try scene.server.psql(scene.url, "UPDATE scrollback.snapshot SET started_at = now() - interval '40 days'")
        _ = try a.store.conversations.rename(id: try a.id("Conversation 5"), to: "After the monthly one")
        try a.sync()
        let newest = try Self.engine(a).makeSnapshot()
        #expect(try scene.server.psql(scene.url, "SELECT count(*) FROM scrollback.snapshot").hasPrefix("2"))
        _ = try scene.server.psql(scene.url, "UPDATE scrollback.snapshot_chunk SET sealed = overlay(sealed placing '\\x00'::bytea from 30 for 1) WHERE snapshot_id = '\(newest.id)'")
        let (d, fromOlder) = try Self.newMachine(scene, "d")
        #expect(fromOlder)
        #expect(try d.titles().contains("After the monthly one"))
        #expect(try d.export() == a.export())
    }
}
