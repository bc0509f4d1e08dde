import Foundation
import ScrollbackModel
import ScrollbackStorage
@testable import ScrollbackSync
import Testing
import TestSupport

/// Attachments through a real PostgreSQL server: the files go up once, sealed in chunks under
/// names the server cannot test a file against, and come down when fetched, byte-identical.
@Suite("Attachments through sync", .serialized)
struct SyncAttachmentTests {
    static let time = Timestamp(milliseconds: 1_767_225_600_000)

    static func conversation(_ id: String, files: [(String, [UInt8])]) -> ImportedConversation {
        var message = ImportedMessage(role: .user, content: "what is in this picture?", createdAt: time, nodeID: "u")
        message.attachments = files.map { ImportedAttachment(name: $0.0, mime: "image/png", data: $0.1) }
        return ImportedConversation(
            source: "chatgpt", sourceID: id, title: "Photo \(id)", model: nil, createdAt: time, updatedAt: time,
            messages: [message, ImportedMessage(role: .assistant, content: "A plot.", createdAt: time, nodeID: "a", parent: .node("u"))])
    }

    static func bytes(of store: Store, _ sha256: String) throws -> [UInt8] {
        var all: [UInt8] = []
        try store.readAttachment(sha256: sha256) { all.append(contentsOf: $0) }
        return all
    }

    static func attachments(_ machine: SyncMachine, _ title: String) throws -> [AttachmentDTO] {
        try machine.store.attachments(conversation: try machine.id(title))
    }

    @Test("an image added on one machine is a line on the other at once, its bytes fetched when opened, byte-identical; the server holds only sealed chunks under names that are not its hash; a file is sent once")
    func imageAcrossMachines() throws {
        let scene = try SyncScene()
        let folder = try TemporaryDirectory()
        let a = try scene.machine("a")
        let b = try scene.machine("b")
        // A real PNG, padded past two chunks (its header still says what it is).
        let png = try TestFiles.image("png", width: 640, height: 480, in: folder) + TestFiles.bytes(2 * SyncEngine.fileChunk + 4_321, seed: 3)
        _ = try a.store.upsert(Self.conversation("p1", files: [("plot.png", png)]))
        try a.turnOn()
        let first = try a.sync()
        #expect(first.filesSent == 1)
        let stored = try #require(try Self.attachments(a, "Photo p1").first)
        let hash = try #require(stored.sha256)

        // What the server holds: three sealed chunks under the HMAC name, no hash, no plain bytes.
        let name = try scene.key.fileName(sha256: hash)
        #expect(name != hash && name.count == 64)
        let names = try scene.server.psql(scene.url, "SELECT name || ':' || chunks FROM scrollback.file")
        #expect(names.trimmingCharacters(in: .whitespacesAndNewlines) == "\(name):3")
        let dump = try scene.server.psql(scene.url, "SELECT idx || ' ' || encode(sealed, 'hex') FROM scrollback.file_chunk ORDER BY idx")
        #expect(!dump.contains(hash))
        let hex = { (bytes: ArraySlice<UInt8>) in bytes.map { String(format: "%02x", $0) }.joined() }
        for offset in [0, 100_000, SyncEngine.fileChunk + 5, 2 * SyncEngine.fileChunk + 10] {
            #expect(!dump.contains(hex(png[offset..<(offset + 32)])), "plain bytes at \(offset) are on the server")
        }
        let everything = try scene.server.psql(scene.url, "SELECT string_agg(encode(payload, 'hex'), '') FROM scrollback.op")
        #expect(!everything.contains(hex(Array(hash.utf8)[...])) && !everything.contains(hex(Array("plot.png".utf8)[...])))

        // B sees the line at once, its bytes not here yet.
        try b.turnOn()
        let received = try b.sync()
        #expect(received.filesFetched == 0)
        let line = try #require(try Self.attachments(b, "Photo p1").first)
        #expect(line.name == "plot.png" && !line.isStored && line.awaited == hash && line.size == Int64(png.count))
        #expect(line.width == 640 && line.height == 480 && line.missingReason == AttachmentDTO.notHereYet)
        #expect(try b.store.awaitedFiles().map(\.sha256) == [hash])

        // Opened: fetched, checked, the same bytes.
        try SyncEngine(store: b.store, conninfo: scene.url, key: scene.key).fetch(sha256: hash, size: line.size, shownName: "plot.png")
        let fetched = try #require(try Self.attachments(b, "Photo p1").first)
        #expect(fetched.isStored && fetched.sha256 == hash && fetched.awaited == nil)
        #expect(try Self.bytes(of: b.store, hash) == png)
        #expect(try b.store.awaitedFiles().isEmpty)
        #expect(try b.store.check().problems.isEmpty)
        // B does not send it back; nor does A again.
        #expect(try b.sync().filesSent == 0)
        _ = try a.store.upsert(Self.conversation("p2", files: [("again.png", png)]))
        #expect(try a.sync().filesSent == 0)
        #expect(try scene.server.psql(scene.url, "SELECT count(*) FROM scrollback.file_chunk").hasPrefix("3"))

        // A machine that had the same file already sends nothing of it either.
        let c = try scene.machine("c")
        _ = try c.store.upsert(Self.conversation("own", files: [("mine.png", png)]))
        try c.turnOn()
        #expect(try c.sync().filesSent == 0)
        // It has the file: the other machines' attachments of it are stored at once.
        #expect(try Self.attachments(c, "Photo p1").first?.isStored == true)

        // With fetch_attachments = always, a sync brings every file.
        let d = try scene.machine("d")
        try d.turnOn()
        let engine = try SyncEngine(store: d.store, conninfo: scene.url, key: scene.key)
        engine.fetchAttachments = true
        let report = try engine.sync()
        #expect(report.filesFetched == 1 && report.fileProblems.isEmpty)
        #expect(try Self.attachments(d, "Photo p2").first?.isStored == true)
        #expect(try Self.bytes(of: d.store, hash) == png)
        try a.sync()
        // The same history (in the order each stored it: the times are equal).
        #expect(try d.export().split(separator: "\n").sorted() == a.export().split(separator: "\n").sorted())
    }

    @Test("a chunk swapped, dropped, cut, moved from another file or a lying count is refused with a clear line; nothing of the file is kept, and the good copy still comes after")
    func damagedChunks() throws {
        let scene = try SyncScene()
        let a = try scene.machine("a")
        let b = try scene.machine("b")
        let photo = TestFiles.bytes(2 * SyncEngine.fileChunk + 99, seed: 11)
        let other = TestFiles.bytes(SyncEngine.fileChunk + 7, seed: 12)
        _ = try a.store.upsert(Self.conversation("p1", files: [("photo.png", photo), ("other.png", other)]))
        try a.turnOn()
        #expect(try a.sync().filesSent == 2)
        try b.turnOn()
        try b.sync()
        let lines = try Self.attachments(b, "Photo p1")
        let hash = try #require(lines.first?.awaited)
        let otherHash = try #require(lines.last?.awaited)
        let name = try scene.key.fileName(sha256: hash)
        let otherName = try scene.key.fileName(sha256: otherHash)
        let engine = try SyncEngine(store: b.store, conninfo: scene.url, key: scene.key)
        func refused(_ damage: String, undo: String, saying expected: String) throws {
            _ = try scene.server.psql(scene.url, damage)
            do {
                try engine.fetch(sha256: hash, size: lines.first?.size, shownName: "photo.png")
                Issue.record("fetched a damaged file (\(damage))")
            } catch let error as SyncError {
                #expect(error.description.contains(expected), "\(error.description)")
                #expect(error.description.contains("nothing of that file was kept"))
            }
            #expect(try b.store.attachmentFiles(prefix: hash).isEmpty)
            #expect(try Self.attachments(b, "Photo p1").first?.awaited == hash)
            _ = try scene.server.psql(scene.url, undo)
        }
        let save = "CREATE TABLE saved AS SELECT * FROM scrollback.file_chunk WHERE name = '\(name)'"
        _ = try scene.server.psql(scene.url, save)
        let putBack = "DELETE FROM scrollback.file_chunk WHERE name = '\(name)'; INSERT INTO scrollback.file_chunk SELECT * FROM saved"
        try refused(
            "UPDATE scrollback.file_chunk SET idx = 100 WHERE name = '\(name)' AND idx = 0; UPDATE scrollback.file_chunk SET idx = 0 WHERE name = '\(name)' AND idx = 1; UPDATE scrollback.file_chunk SET idx = 1 WHERE name = '\(name)' AND idx = 100",
            undo: putBack, saying: "chunk 1 of 3 of photo.png on the sync server does not open")
        try refused(
            "DELETE FROM scrollback.file_chunk WHERE name = '\(name)' AND idx = 1", undo: putBack, saying: "lacks chunk 2 of 3 of photo.png")
        try refused(
            "DELETE FROM scrollback.file_chunk WHERE name = '\(name)' AND idx = 2", undo: putBack, saying: "lacks chunk 3 of 3 of photo.png")
        try refused(
            "UPDATE scrollback.file_chunk SET sealed = substring(sealed FROM 1 FOR length(sealed) - 10) WHERE name = '\(name)' AND idx = 2",
            undo: putBack, saying: "chunk 3 of 3 of photo.png on the sync server does not open")
        try refused(
            "UPDATE scrollback.file_chunk SET sealed = (SELECT sealed FROM scrollback.file_chunk WHERE name = '\(otherName)' AND idx = 0) WHERE name = '\(name)' AND idx = 0",
            undo: putBack, saying: "chunk 1 of 3 of photo.png on the sync server does not open")
        try refused(
            "UPDATE scrollback.file SET chunks = 2 WHERE name = '\(name)'", undo: "UPDATE scrollback.file SET chunks = 3 WHERE name = '\(name)'",
            saying: "says photo.png is in 2 chunks, not the 3")
        // Not on the server (never sent whole): said so.
        _ = try scene.server.psql(scene.url, "DELETE FROM scrollback.file WHERE name = '\(name)'")
        #expect(throws: SyncError.fileNotOnServer(name: "photo.png")) {
            try engine.fetch(sha256: hash, size: lines.first?.size, shownName: "photo.png")
        }
        _ = try scene.server.psql(scene.url, "INSERT INTO scrollback.file (name, chunks) VALUES ('\(name)', 3)")
        // The good copy comes, byte-identical.
        try engine.fetch(sha256: hash, size: lines.first?.size, shownName: "photo.png")
        #expect(try Self.bytes(of: b.store, hash) == photo)
        #expect(try b.store.check().problems.isEmpty)
    }

    @Test("a cut upload goes on from the chunks the server holds; a damaged file here is passed over and the others go")
    func resumedUpload() throws {
        let scene = try SyncScene()
        let a = try scene.machine("a")
        let photo = TestFiles.bytes(3 * SyncEngine.fileChunk, seed: 21)
        _ = try a.store.upsert(Self.conversation("p1", files: [("photo.png", photo)]))
        try a.turnOn()
        try a.sync()
        let hash = try #require(try Self.attachments(a, "Photo p1").first?.sha256)
        let name = try scene.key.fileName(sha256: hash)
        // As if the upload was cut after two chunks: the file's row and its last chunk gone,
        // and A not knowing it was sent.
        let kept = try scene.server.psql(scene.url, "SELECT xmin::text FROM scrollback.file_chunk WHERE name = '\(name)' AND idx < 2 ORDER BY idx")
        _ = try scene.server.psql(scene.url, "DELETE FROM scrollback.file WHERE name = '\(name)'; DELETE FROM scrollback.file_chunk WHERE idx = 2")
        try SQLite3.run(a.path, "DELETE FROM sync_file")
        #expect(try a.sync().filesSent == 1)
        // The first two chunks are the same rows (not sent again), the third came.
        #expect(try scene.server.psql(scene.url, "SELECT xmin::text FROM scrollback.file_chunk WHERE name = '\(name)' AND idx < 2 ORDER BY idx") == kept)
        #expect(try scene.server.psql(scene.url, "SELECT count(*) FROM scrollback.file_chunk").hasPrefix("3"))
        let b = try scene.machine("b")
        try b.turnOn()
        try b.sync()
        try SyncEngine(store: b.store, conninfo: scene.url, key: scene.key).fetch(sha256: hash, size: Int64(photo.count), shownName: "photo.png")
        #expect(try Self.bytes(of: b.store, hash) == photo)

        // A file damaged here is not sent (`check` says why); the next one is.
        let good = TestFiles.bytes(5_000, seed: 22)
        let bad = TestFiles.bytes(6_000, seed: 23)
        _ = try a.store.upsert(Self.conversation("p2", files: [("good.png", good), ("bad.png", bad)]))
        let badHash = try #require(try Self.attachments(a, "Photo p2").last?.sha256)
        try SQLite3.run(
            a.path,
            "UPDATE attachment_chunk SET data = zeroblob(6000) WHERE content_id = (SELECT id FROM attachment_content WHERE sha256 = '\(badHash)')")
        #expect(try a.sync().filesSent == 1)
        #expect(try scene.server.psql(scene.url, "SELECT count(*) FROM scrollback.file").hasPrefix("2"))
    }
}

extension SyncAttachmentTests {
    struct Bytes: AttachmentSource {
        let bytes: [UInt8]
        var size: Int { bytes.count }
        func read(_ sink: (UnsafeRawBufferPointer) throws -> Void) throws { try bytes.withUnsafeBytes { try sink($0) } }
    }

    @Test("bytes a later import finds for a message synced before (conversations.json first, the ZIP after) reach the other machines")
    func filledLater() throws {
        let scene = try SyncScene()
        let a = try scene.machine("a")
        let b = try scene.machine("b")
        let photo = TestFiles.bytes(70_000, seed: 31)
        var conversation = Self.conversation("p1", files: [])
        conversation.messages[0].attachments = [ImportedAttachment(name: "photo.png", mime: "image/png", reference: "file-service://file-XYZ")]
        _ = try a.store.upsert(conversation)
        try a.turnOn()
        try a.sync()
        try b.turnOn()
        try b.sync()
        let before = try #require(try Self.attachments(b, "Photo p1").first)
        #expect(!before.isStored && before.awaited == nil && before.missingReason == "the export did not hold it")
        // The ZIP, imported later on A, holds the file.
        _ = try a.store.upsert(conversation, attachments: { $0.reference == "file-service://file-XYZ" ? Bytes(bytes: photo) : nil })
        let sent = try a.sync()
        #expect(sent.filesSent == 1 && sent.sent == 1)
        try b.sync()
        let after = try #require(try Self.attachments(b, "Photo p1").first)
        let hash = try #require(try Self.attachments(a, "Photo p1").first?.sha256)
        #expect(after.awaited == hash && after.size == Int64(photo.count))
        try SyncEngine(store: b.store, conninfo: scene.url, key: scene.key).fetch(sha256: hash, size: after.size, shownName: "photo.png")
        #expect(try Self.bytes(of: b.store, hash) == photo)
        #expect(try a.export() == b.export())
    }
}

extension SyncAttachmentTests {
    @Test("a file the server lost (its rows deleted, a server restored from an older backup) is sent again by the next sync of a machine that holds it; a file damaged here is said, not sent")
    func lostFileSentAgain() throws {
        let scene = try SyncScene()
        let a = try scene.machine("a")
        let b = try scene.machine("b")
        let photo = TestFiles.bytes(SyncEngine.fileChunk + 500, seed: 41)
        _ = try a.store.upsert(Self.conversation("p1", files: [("photo.png", photo)]))
        try a.turnOn()
        #expect(try a.sync().filesSent == 1)
        let hash = try #require(try Self.attachments(a, "Photo p1").first?.sha256)
        let name = try scene.key.fileName(sha256: hash)
        _ = try scene.server.psql(scene.url, "DELETE FROM scrollback.file_chunk; DELETE FROM scrollback.file")
        try b.turnOn()
        try b.sync()
        #expect(throws: SyncError.fileNotOnServer(name: "photo.png")) {
            try SyncEngine(store: b.store, conninfo: scene.url, key: scene.key).fetch(sha256: hash, size: Int64(photo.count), shownName: "photo.png")
        }
        // What B's line says is true: A's next sync sends it again.
        #expect(try a.sync().filesSent == 1)
        #expect(try scene.server.psql(scene.url, "SELECT name FROM scrollback.file").trimmingCharacters(in: .whitespacesAndNewlines) == name)
        try SyncEngine(store: b.store, conninfo: scene.url, key: scene.key).fetch(sha256: hash, size: Int64(photo.count), shownName: "photo.png")
        #expect(try Self.bytes(of: b.store, hash) == photo)
        // Damaged here: the sync says so, sends the rest, and succeeds.
        _ = try a.store.upsert(Self.conversation("p2", files: [("bad.png", TestFiles.bytes(3_000, seed: 42)), ("good.png", TestFiles.bytes(4_000, seed: 43))]))
        let bad = try #require(try Self.attachments(a, "Photo p2").first?.sha256)
        try SQLite3.run(a.path, "UPDATE attachment_chunk SET data = zeroblob(3000) WHERE content_id = (SELECT id FROM attachment_content WHERE sha256 = '\(bad)')")
        let report = try a.sync()
        #expect(report.filesSent == 1)
        #expect(report.fileProblems == ["the bytes of file \(bad.prefix(12)) here are damaged, so they were not sent; run `scrollback check`"])
    }

    @Test("a hostile server: a sealed row longer than a chunk is refused without being read, rows past the chunk count are not read, a column of another type is said; the spool file has no name from the start")
    func hostileServer() throws {
        let scene = try SyncScene()
        let a = try scene.machine("a")
        let b = try scene.machine("b")
        let photo = TestFiles.bytes(2 * SyncEngine.fileChunk + 10, seed: 51)
        _ = try a.store.upsert(Self.conversation("p1", files: [("photo.png", photo)]))
        try a.turnOn()
        try a.sync()
        try b.turnOn()
        try b.sync()
        let hash = try #require(try Self.attachments(b, "Photo p1").first?.awaited)
        let name = try scene.key.fileName(sha256: hash)
        let engine = try SyncEngine(store: b.store, conninfo: scene.url, key: scene.key)
        func fetch() throws { try engine.fetch(sha256: hash, size: Int64(photo.count), shownName: "photo.png") }
        _ = try scene.server.psql(scene.url, "CREATE TABLE saved AS SELECT * FROM scrollback.file_chunk")
        _ = try scene.server.psql(scene.url, "UPDATE scrollback.file_chunk SET sealed = sealed || decode(repeat('00', 3000000), 'hex') WHERE idx = 1")
        #expect(throws: SyncError.damagedFile("chunk 2 of 3 of photo.png on the sync server is \(SyncEngine.fileChunk + 28 + 3_000_000) bytes, more than a chunk can be")) { try fetch() }
        _ = try scene.server.psql(scene.url, "DELETE FROM scrollback.file_chunk; INSERT INTO scrollback.file_chunk SELECT * FROM saved")
        // Rows past the count (junk, large) are never read: the file comes.
        _ = try scene.server.psql(
            scene.url, "INSERT INTO scrollback.file_chunk SELECT '\(name)', i, decode(repeat('ff', 2000000), 'hex') FROM generate_series(3, 8) AS i")
        _ = try scene.server.psql(
            scene.url, "ALTER TABLE scrollback.file DROP CONSTRAINT file_chunks_check; ALTER TABLE scrollback.file ALTER COLUMN chunks TYPE text USING chunks::text")
        #expect(throws: SyncError.changedColumn(name: "chunks", type: "integer", table: "scrollback.file")) { try fetch() }
        _ = try scene.server.psql(scene.url, "ALTER TABLE scrollback.file ALTER COLUMN chunks TYPE integer USING chunks::integer")
        try fetch()
        #expect(try Self.bytes(of: b.store, hash) == photo)
        // The temporary file is unlinked at once: a kill leaves nothing behind.
        let spool = try Spool()
        let links = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)
        }
        #expect(links.contains { $0.contains("scrollback-fetch-") && $0.hasSuffix("(deleted)") }, "\(links)")
        spool.close()
    }

    @Test("with fetch_attachments = always, a file the server cannot give is said and the others still come; the sync succeeds")
    func alwaysGoesOn() throws {
        let scene = try SyncScene()
        let a = try scene.machine("a")
        let b = try scene.machine("b")
        _ = try a.store.upsert(Self.conversation("p1", files: [("one.png", TestFiles.bytes(5_000, seed: 61)), ("two.png", TestFiles.bytes(9_000, seed: 62))]))
        try a.turnOn()
        try a.sync()
        let lines = try Self.attachments(a, "Photo p1")
        let broken = try scene.key.fileName(sha256: try #require(lines.first?.sha256))
        _ = try scene.server.psql(scene.url, "UPDATE scrollback.file_chunk SET sealed = substring(sealed FROM 2) WHERE name = '\(broken)'")
        try b.turnOn()
        let engine = try SyncEngine(store: b.store, conninfo: scene.url, key: scene.key)
        engine.fetchAttachments = true
        let report = try engine.sync()
        #expect(report.filesFetched == 1 && report.fileProblems.count == 1, "\(report)")
        #expect(report.fileProblems.first?.contains("does not open with this key") == true)
        let here = try Self.attachments(b, "Photo p1")
        #expect(here.map(\.isStored) == [false, true])
    }

    @Test("a server at version 2 whose user may not create tables: the sync says what to grant, and nothing is changed")
    func cannotRaise() throws {
        let scene = try SyncScene()
        let a = try scene.machine("a")
        _ = try a.store.upsert(Self.conversation("p1", files: [("one.png", TestFiles.bytes(5_000, seed: 71))]))
        try a.turnOn()
        try a.sync()
        _ = try scene.server.psql(
            scene.url,
            """
            DROP TABLE scrollback.file_chunk; DROP TABLE scrollback.file; UPDATE scrollback.schema_version SET version = 2;
            CREATE ROLE limited LOGIN; GRANT USAGE ON SCHEMA scrollback TO limited;
            GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA scrollback TO limited;
            """)
        let engine = try SyncEngine(store: a.store, conninfo: scene.url + " user=limited", key: scene.key)
        do {
            _ = try engine.sync()
            Issue.record("a sync raised the schema without the right")
        } catch let error as SyncError {
            guard case .cannotRaiseSchema = error else {
                Issue.record("\(error)")
                return
            }
            #expect(error.description.contains("GRANT CREATE ON SCHEMA scrollback"), "\(error.description)")
        }
        #expect(try scene.server.psql(scene.url, "SELECT version FROM scrollback.schema_version").hasPrefix("2"))
        // Raised by its owner, the user who may only read and write the tables syncs.
        try a.sync()
        _ = try scene.server.psql(scene.url, "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA scrollback TO limited")
        #expect(throws: Never.self) { _ = try SyncEngine(store: a.store, conninfo: scene.url + " user=limited", key: scene.key).sync() }
        // One who may only read is told which rights to grant.
        _ = try scene.server.psql(scene.url, "CREATE ROLE reader LOGIN; GRANT USAGE ON SCHEMA scrollback TO reader; GRANT SELECT ON ALL TABLES IN SCHEMA scrollback TO reader")
        _ = try a.store.upsert(Self.conversation("p2", files: []))
        do {
            _ = try SyncEngine(store: a.store, conninfo: scene.url + " user=reader", key: scene.key).sync()
            Issue.record("a user who may only read synced")
        } catch let error as SyncError {
            #expect(error.description.contains("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA scrollback"), "\(error.description)")
        }
    }
}

/// The sqlite3 shell on a database file, as another process would change it.
enum SQLite3 {
    static func run(_ path: String, _ sql: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [path, sql]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "sqlite3 \(sql)")
    }
}
