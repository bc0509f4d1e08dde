import Foundation
import ScrollbackModel
import TestSupport
import Testing

@testable import ScrollbackStorage

/// A source that gives its bytes in pieces of an odd size, and can fail part way.
private struct PiecesSource: AttachmentSource {
    let bytes: [UInt8]
    var piece = 70_001
    var failAfter: Int? = nil
    var size: Int { bytes.count }
    func read(_ sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        var at = 0
        while at < bytes.count {
            if let failAfter, at >= failAfter { throw AttachmentUnreadable(reason: "the test's source broke") }
            let end = min(bytes.count, at + piece)
            try bytes[at..<end].withUnsafeBytes { try sink($0) }
            at = end
        }
    }
}

@Suite("Attachment storage")
struct AttachmentStorageTests {
    static let time = Timestamp(milliseconds: 1_772_323_200_000)

    static func conversation(_ id: String, attachments: [ImportedAttachment]) -> ImportedConversation {
        var message = ImportedMessage(role: .user, content: "look", createdAt: time, nodeID: "u")
        message.attachments = attachments
        return ImportedConversation(
            source: "chatgpt", sourceID: id, title: id, model: nil, createdAt: time, updatedAt: time,
            messages: [message, ImportedMessage(role: .assistant, content: "I see", createdAt: time, nodeID: "a", parent: .node("u"))])
    }

    @Test("v12: a version 11 database gains the attachment tables, backup first, and `check` passes; the fresh schema is the upgraded one")
    func upgrade() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("v11.sqlite")
        do {
            let old = try Store.open(path: path, migrator: Migrator(migrations: Array(Migrator.scrollback.migrations.prefix(11))))
            _ = try old.upsert(Self.conversation("c1", attachments: []))
        }
        let store = try Store.open(path: path, migrator: Migrator(migrations: Array(Migrator.scrollback.migrations.prefix(12))))
        #expect(store.migration.fromVersion == 11 && store.migration.toVersion == 12)
        #expect(store.migration.backupPath.map { FileManager.default.fileExists(atPath: $0) } == true)
        #expect(try store.check().problems.isEmpty)
        _ = try store.upsert(Self.conversation("c2", attachments: [ImportedAttachment(name: "a.png", data: [1, 2, 3])]))
        #expect(try store.attachmentTotals() == AttachmentTotals(attachments: 1, missing: 0, files: 1, bytes: 3))
        let fresh = try Store.open(path: ":memory:", migrator: Migrator(migrations: Array(Migrator.scrollback.migrations.prefix(12))))
        #expect(
            try DatabaseCheck.schema(of: fresh.database).mapValues(DatabaseCheck.normalized)
                == DatabaseCheck.schema(of: store.database).mapValues(DatabaseCheck.normalized))
    }

    @Test("bytes over several chunks come back exactly, stored once for two conversations; a missing file is a reference; check hashes them all")
    func storedOnceAndExactly() throws {
        let store = try Store.open(path: ":memory:")
        let photo = TestFiles.bytes(2 * AttachmentTables.chunkSize + 12_345, seed: 7)
        let sources: [String: any AttachmentSource] = ["file-service://file-A1": PiecesSource(bytes: photo)]
        let find: AttachmentFinder = { sources[$0.reference ?? ""] }
        let pointer = ImportedAttachment(name: "photo.jpg", mime: "image/jpeg", width: 640, height: 480, reference: "file-service://file-A1")
        let gone = ImportedAttachment(name: "file-B2", size: 999, reference: "sediment://file_B2")
        #expect(try store.upsert(Self.conversation("c1", attachments: [pointer, gone]), attachments: find) == .inserted)
        // The same photo again, under another reference: the same bytes, one copy.
        let again = ImportedAttachment(name: "copy.jpg", reference: "file-service://file-C3")
        let second: [String: any AttachmentSource] = ["file-service://file-C3": PiecesSource(bytes: photo, piece: 4096)]
        #expect(try store.upsert(Self.conversation("c2", attachments: [again]), attachments: { second[$0.reference ?? ""] }) == .inserted)
        #expect(try store.attachmentTotals() == AttachmentTotals(attachments: 3, missing: 1, files: 1, bytes: Int64(photo.count)))
        let id = try store.database.scalarInt("SELECT id FROM conversation WHERE title = 'c1'")
        let listed = try store.attachments(conversation: id)
        #expect(listed.map(\.name) == ["photo.jpg", "file-B2"])
        #expect(listed[0].size == Int64(photo.count) && listed[0].width == nil && listed[0].mime == "image/jpeg", "random bytes: no pixels kept")
        #expect(listed[1].sha256 == nil && listed[1].size == 999 && listed[1].reference == "sediment://file_B2")
        var read: [UInt8] = []
        try store.readAttachment(sha256: try #require(listed[0].sha256)) { read += $0 }
        #expect(read == photo)
        #expect(try store.database.scalarInt("SELECT count(*) FROM attachment_chunk") == 3)
        #expect(try store.check().problems.isEmpty)

        // A re-import with the file now present fills the missing one in.
        let late: [String: any AttachmentSource] = ["sediment://file_B2": InMemoryAttachmentSource([9, 9, 9])]
        #expect(try store.upsert(Self.conversation("c1", attachments: [pointer, gone]), attachments: { late[$0.reference ?? ""] }) == .updated)
        #expect(try store.attachmentTotals().missing == 0)
        // And once more: nothing changes.
        #expect(try store.upsert(Self.conversation("c1", attachments: [pointer, gone]), attachments: { late[$0.reference ?? ""] }) == .unchanged)

        // One byte changed on disk: check says which file.
        try store.database.execute("UPDATE attachment_chunk SET data = zeroblob(length(data)) WHERE idx = 1")
        let problems = try store.check().problems
        let hash = String((listed[0].sha256 ?? "").prefix(12))
        #expect(problems.contains { $0.contains(hash) && $0.contains("SHA-256") }, "\(problems)")
    }

    @Test("a source that breaks part way keeps the attachment as missing with the reason, and no bytes; the conversation is kept")
    func brokenSource() throws {
        let store = try Store.open(path: ":memory:")
        let broken = PiecesSource(bytes: TestFiles.bytes(3 * AttachmentTables.chunkSize, seed: 3), failAfter: AttachmentTables.chunkSize + 5)
        let attachment = ImportedAttachment(name: "big.wav", reference: "sediment://file_X")
        #expect(try store.upsert(Self.conversation("c", attachments: [attachment]), attachments: { _ in broken }) == .inserted)
        #expect(try store.database.scalarInt("SELECT count(*) FROM attachment_chunk") == 0)
        let rows = try store.database.query("SELECT name, absence, content_id FROM attachment") { "\($0.text(0)) \($0.optionalText(1) ?? "-") \($0.optionalInt64(2) ?? -1)" }
        #expect(rows.count == 1 && rows[0].contains("the test's source broke"), "\(rows)")
        #expect(try store.check().problems.isEmpty)
    }

    @Test("deleting the conversations takes their attachments; the bytes stay for undo (which brings them back) until collected, then go")
    func deleteAndCollect() throws {
        let store = try Store.open(path: ":memory:")
        _ = try store.upsert(Self.conversation("c", attachments: [ImportedAttachment(name: "a", data: TestFiles.bytes(5000, seed: 1))]))
        let ids = try store.database.query("SELECT id FROM conversation") { $0.int64(0) }
        let snapshots = try store.conversations.deleteKeepingSnapshots(ids: ids)
        #expect(try store.database.scalarInt("SELECT count(*) FROM attachment") == 0)
        #expect(try store.collectUnusedAttachments().files == 0)
        #expect(try store.database.scalarInt("SELECT count(*) FROM attachment_chunk") == 1)
        #expect(try store.check().problems.isEmpty)
        // Undo: the attachment is back, with its bytes.
        try store.conversations.restore(snapshots)
        #expect(try store.attachmentTotals() == AttachmentTotals(attachments: 1, missing: 0, files: 1, bytes: 5000))
        #expect(try store.collectUnusedAttachments(all: true) == (files: 0, bytes: 0))
        #expect(try store.check().problems.isEmpty)
        _ = try store.conversations.deleteKeepingSnapshots(ids: try store.database.query("SELECT id FROM conversation") { $0.int64(0) })
        #expect(try store.collectUnusedAttachments(all: true) == (files: 1, bytes: 5000))
        #expect(try store.database.scalarInt("SELECT count(*) FROM attachment_chunk") == 0)
        #expect(try store.check().problems.isEmpty)
    }

    @Test("what the bytes are, from real PNG, JPEG, GIF and WebP files made by ImageMagick: type and pixels kept with the attachment, over what the source declared")
    func sniffedFacts() throws {
        let folder = try TemporaryDirectory()
        let store = try Store.open(path: ":memory:")
        let shapes: [(format: String, mime: String, width: Int, height: Int)] = [
            ("png", "image/png", 640, 480), ("jpg", "image/jpeg", 301, 199), ("gif", "image/gif", 17, 33), ("webp", "image/webp", 1000, 20),
        ]
        var attachments: [ImportedAttachment] = []
        for shape in shapes {
            let bytes = try TestFiles.image(shape.format, width: shape.width, height: shape.height, in: folder)
            #expect(FileFacts.sniff(Array(bytes.prefix(FileFacts.prefixLength))) == FileFacts(mime: shape.mime, width: shape.width, height: shape.height), "\(shape.format)")
            // The source declares a wrong size and no type: the bytes' own facts win.
            attachments.append(ImportedAttachment(name: "image.\(shape.format)", width: 1, height: 1, data: bytes))
        }
        _ = try store.upsert(Self.conversation("facts", attachments: attachments))
        let conversation = try #require(try store.conversations.page(sort: .created, filter: .none, at: .first, limit: 1).items.first)
        let stored = try store.attachments(conversation: conversation.id)
        #expect(stored.map(\.mime) == shapes.map(\.mime))
        #expect(stored.map(\.width) == shapes.map(\.width) && stored.map(\.height) == shapes.map(\.height))
        // Truncated, wrong magic, or a header declaring zero or 2^32 pixels: no size is made up.
        #expect(FileFacts.sniff([0x89, 0x50, 0x4E, 0x47]) == FileFacts())
        #expect(FileFacts.sniff(Array("GIF89a".utf8) + [0, 0, 0, 0]) == FileFacts(mime: "image/gif"))
        var huge: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
        huge += [0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x01, 0x86, 0xA0]
        #expect(FileFacts.sniff(huge) == FileFacts(mime: "image/png", width: nil, height: 100_000))
        #expect(FileFacts.sniff([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == FileFacts(mime: "image/jpeg"))
        #expect(FileFacts.sniff(Array(repeating: 0xFF, count: 100)) == FileFacts())
    }

    @Test("reading a stored file hashes it as it goes: bytes changed behind the store's back throw at the end, with what to do")
    func readVerifies() throws {
        let store = try Store.open(path: ":memory:")
        let bytes = TestFiles.bytes(AttachmentTables.chunkSize + 999, seed: 11)
        _ = try store.upsert(Self.conversation("v", attachments: [ImportedAttachment(name: "f.bin", data: bytes)]))
        let conversation = try #require(try store.conversations.page(sort: .created, filter: .none, at: .first, limit: 1).items.first)
        let hash = try #require(try store.attachments(conversation: conversation.id).first?.sha256)
        var read: [UInt8] = []
        try store.readAttachment(sha256: hash) { read += $0 }
        #expect(read == bytes)
        try store.database.run("UPDATE attachment_chunk SET data = zeroblob(length(data)) WHERE idx = 1")
        #expect {
            try store.readAttachment(sha256: hash) { _ in }
        } throws: { error in
            "\(error)".contains("damaged") && "\(error)".contains("scrollback check")
        }
    }

    @Test("freeing after a delete no undo follows: the files only the deleted used go, a file another conversation shares stays; check clean")
    func freedAfterDelete() throws {
        let store = try Store.open(path: ":memory:")
        let shared = TestFiles.bytes(7000, seed: 21)
        let own = TestFiles.bytes(3000, seed: 22)
        _ = try store.upsert(Self.conversation("one", attachments: [ImportedAttachment(name: "s", data: shared), ImportedAttachment(name: "o", data: own)]))
        _ = try store.upsert(Self.conversation("two", attachments: [ImportedAttachment(name: "s2", data: shared)]))
        let all = try store.conversations.page(sort: .title, filter: .none, at: .first, limit: 5).items
        let one = try #require(all.first { $0.title == "one" })
        let files = try store.attachmentHashes(conversations: [one.id])
        #expect(files.count == 2)
        _ = try store.conversations.delete(ids: [one.id])
        // Unused until freed, and counted so (stats says it).
        #expect(try store.attachmentTotals() == AttachmentTotals(attachments: 1, missing: 0, files: 1, bytes: 7000, unusedFiles: 1, unusedBytes: 3000))
        #expect(try store.freeUnusedAttachments(files) == (files: 1, bytes: 3000))
        #expect(try store.attachmentTotals() == AttachmentTotals(attachments: 1, missing: 0, files: 1, bytes: 7000))
        #expect(try store.check().problems.isEmpty)
        // Nothing of it is left to free again.
        #expect(try store.freeUnusedAttachments(files) == (files: 0, bytes: 0))
    }
}

@Suite("Attachments' local side of sync: schema 13, the records")
struct AttachmentSyncStorageTests {
    @Test("v13: a version 12 database with attachments gains the awaited column and sync_file, backup first; its files stay, check passes, and the fresh schema is the upgraded one")
    func upgrade() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("v12.sqlite")
        let photo = TestFiles.bytes(AttachmentTables.chunkSize + 77, seed: 5)
        do {
            let old = try Store.open(path: path, migrator: Migrator(migrations: Array(Migrator.scrollback.migrations.prefix(12))))
            #expect(old.migration.toVersion == 12)
            _ = try old.upsert(AttachmentStorageTests.conversation("c1", attachments: [ImportedAttachment(name: "a.png", data: photo)]))
        }
        let store = try Store.open(path: path)
        #expect(store.migration.fromVersion == 12 && store.migration.toVersion == 13)
        #expect(store.migration.backupPath.map { FileManager.default.fileExists(atPath: $0) } == true)
        #expect(try store.check().problems.isEmpty)
        let listed = try store.attachments(conversation: try store.database.scalarInt("SELECT id FROM conversation"))
        #expect(listed.count == 1 && listed[0].isStored && listed[0].awaited == nil)
        var bytes: [UInt8] = []
        try store.readAttachment(sha256: try #require(listed[0].sha256)) { bytes.append(contentsOf: $0) }
        #expect(bytes == photo)
        #expect(throws: (any Error).self) { try store.database.execute("UPDATE attachment SET awaited = 'short'") }
        let fresh = try Store.open(path: ":memory:")
        #expect(
            try DatabaseCheck.schema(of: fresh.database).mapValues(DatabaseCheck.normalized)
                == DatabaseCheck.schema(of: store.database).mapValues(DatabaseCheck.normalized))
    }

    @Test("a message record carries its files; an unreadable one (a hash that is not hex, no name, a negative size) is left out and the others kept; a record from before files says nothing of them")
    func records() throws {
        let hash = String(repeating: "ab", count: 32)
        let good = SyncAttachment(name: "plot.png", mime: "image/png", size: 245_000, width: 1024, height: 768, sha256: hash)
        let missing = SyncAttachment(name: "notes.pdf", reference: "file-service://file-1", absence: "the export did not hold it")
        var record = SyncRecord(kind: .message, conversation: "c", role: "user", content: "x")
        #expect(SyncRecord(decoding: record.encoded())?.attachments == nil)
        record.attachments = []
        #expect(SyncRecord(decoding: record.encoded())?.attachments == [])
        record.attachments = [good, missing]
        #expect(SyncRecord(decoding: record.encoded()) == record)
        // Hostile items beside a good one.
        var hostile = record
        hostile.attachments = [
            SyncAttachment(name: "x", sha256: String(repeating: "AB", count: 32)), SyncAttachment(name: "y", sha256: "../../etc/passwd"),
            SyncAttachment(name: "z", size: -1), good,
        ]
        #expect(SyncRecord(decoding: hostile.encoded())?.attachments == [good])
        var nameless: [UInt8] = []
        TLV.put(7, Array(hash.utf8), into: &nameless)
        var list: [UInt8] = []
        TLV.put(1, nameless, into: &list)
        TLV.put(1, good.encoded(), into: &list)
        var bytes = SyncRecord(kind: .message, conversation: "c", role: "user", content: "x").encoded()
        TLV.put(21, list, into: &bytes)
        #expect(SyncRecord(decoding: bytes)?.attachments == [good])
        // A length past the end refuses the record, as for any field.
        var cut = SyncRecord(kind: .message, conversation: "c", role: "user", content: "x").encoded()
        cut += [21, 0, 0, 1, 0, 1]
        #expect(SyncRecord(decoding: cut) == nil)
    }
}

extension AttachmentSyncStorageTests {
    struct Refused: Error {}

    @Test("an import that fails after storing some of a conversation's files keeps none of them (no savepoint: the files it stored are removed), nor the conversation; check clean")
    func failureKeepsNoFiles() throws {
        let store = try Store.open(path: ":memory:")
        let first = TestFiles.bytes(AttachmentTables.chunkSize + 10, seed: 81)
        var conversation = AttachmentStorageTests.conversation(
            "c1", attachments: [ImportedAttachment(name: "a.png", reference: "file-service://file-A"), ImportedAttachment(name: "b.png", reference: "file-service://file-B")])
        conversation.messages[1].attachments = [ImportedAttachment(name: "c.png", data: [1, 2, 3])]
        // Inside a transaction that goes on (as an import's batch does): only this
        // conversation's work is undone.
        _ = try store.transaction {
            #expect(throws: Refused.self) {
                _ = try store.upsert(conversation) { attachment in
                    guard attachment.reference == "file-service://file-A" else { throw Refused() }
                    return InMemoryAttachmentSource(first)
                }
            }
        }
        #expect(try store.attachmentTotals() == AttachmentTotals(attachments: 0, missing: 0, files: 0, bytes: 0))
        #expect(try store.database.scalarInt("SELECT count(*) FROM attachment_chunk") == 0)
        #expect(try store.database.scalarInt("SELECT count(*) FROM conversation") == 0)
        #expect(try store.check().problems.isEmpty)
        // Done again without the failure: all of it.
        _ = try store.upsert(conversation) { _ in InMemoryAttachmentSource(first) }
        #expect(try store.attachmentTotals().files == 2)
        #expect(try store.check().problems.isEmpty)
    }
}
