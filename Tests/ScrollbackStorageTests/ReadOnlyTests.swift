import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

@Suite("Read-only")
struct ReadOnlyTests {
    static func prepare(_ folder: TemporaryDirectory) throws -> (path: String, id: Int64) {
        let path = folder.file("h.sqlite")
        let store = try Store.open(path: path)
        let conversation = try store.addConversation(title: "precious", createdAt: 1, messages: ["keep", "this"])
        try store.settings.set(.title, for: .listSort)
        return (path, conversation.id)
    }

    @Test("every write path throws the read-only error and changes nothing")
    func everyWriteRefused() throws {
        let folder = try TemporaryDirectory()
        let (path, id) = try Self.prepare(folder)
        let before = try sha256(ofFile: path)
        let names = try folder.listing()
        do {
            let store = try Store.open(path: path, readOnly: true)
            #expect(store.isReadOnly)
            let writes: [(String, () throws -> Void)] = [
                ("create", { _ = try store.conversations.create(NewConversation(title: "new")) }),
                ("rename", { _ = try store.conversations.rename(id: id, to: "changed") }),
                ("pin", { _ = try store.conversations.setPinned(id: id, true) }),
                ("delete", { _ = try store.conversations.delete(id: id) }),
                ("delete many", { _ = try store.conversations.delete(ids: [id]) }),
                ("append", { _ = try store.messages.append([NewMessage(role: .user, content: "x")], to: id) }),
                ("set setting", { try store.settings.set(.created, for: .listSort) }),
                ("reset setting", { try store.settings.reset(.listSort) }),
                ("repair", { try store.repair() }),
                ("raw write", { try store.database.run("DELETE FROM message") }),
            ]
            for (name, write) in writes {
                #expect(throws: StorageError.readOnly, "\(name)") { try write() }
            }
            // Reading everything still works.
            #expect(try store.conversations.page(sort: .updated, at: .first, limit: 10).items.map(\.title) == ["precious"])
            #expect(try store.messages.page(conversationID: id, at: .first, limit: 10).items.count == 2)
            #expect(try store.search.search("keep", after: nil, limit: 5).items.count == 1)
            #expect(try store.settings.value(.listSort) == .title)
            #expect(try store.stats().conversations == 1)
            let report = try store.check()
            #expect(report.isHealthy)
            #expect(!report.skipped.isEmpty)
        }
        #expect(try sha256(ofFile: path) == before)
        // A reader of a WAL database may leave SQLite's `-shm` (and an empty `-wal`), never
        // anything else.
        #expect(try folder.listing().filter { !$0.hasSuffix("-shm") && !$0.hasSuffix("-wal") } == names)
        #expect((try? Data(contentsOf: URL(fileURLWithPath: path + "-wal")))?.count ?? 0 == 0)
    }

    @Test("a read-only view of an idle WAL database is live (mode=ro), never an immutable snapshot")
    func idleIsLive() throws {
        let folder = try TemporaryDirectory()
        let (path, _) = try Self.prepare(folder)
        #expect(try folder.listing() == ["h.sqlite"])
        let reader = try Store.open(path: path, readOnly: true)
        #expect(!reader.database.isSnapshot)
        #expect(try reader.conversations.count() == 1)
        // Another process writes while the reader is open: it sees the commit, and never a
        // torn page (an immutable connection reported "malformed" here).
        let writer = try Store.open(path: path)
        for index in 0..<50 {
            try writer.addConversation(title: "added \(index)", createdAt: Int64(10 + index), messages: ["m \(index)"])
            #expect(try reader.conversations.count() == 2 + index)
            #expect(try reader.search.search("m \(index)", after: nil, limit: 5).items.count >= 1)
        }
        #expect(try reader.check().isHealthy)
    }

    @Test("in a folder nobody can write, an idle WAL database is read as a labelled snapshot")
    func unwritableFolderSnapshot() throws {
        let folder = try TemporaryDirectory()
        let (path, _) = try Self.prepare(folder)
        guard geteuid() == 0 else { return }  // chattr needs root; CI and this machine run as root
        let locked = ReadOnlyMatrixTests.chattr("+i", folder.path)
        defer { _ = ReadOnlyMatrixTests.chattr("-i", folder.path) }
        #expect(locked == 0)
        let before = try sha256(ofFile: path)
        let store = try Store.open(path: path, readOnly: true)
        #expect(store.database.isSnapshot)
        #expect(try store.conversations.count() == 1)
        #expect(try folder.listing() == ["h.sqlite"])
        #expect(try sha256(ofFile: path) == before)
    }

    @Test("while a writer is open, a read-only view is live and sees its commits")
    func live() throws {
        let folder = try TemporaryDirectory()
        let (path, _) = try Self.prepare(folder)
        let writer = try Store.open(path: path)
        let reader = try Store.open(path: path, readOnly: true)
        #expect(!reader.database.isSnapshot)
        let version = try reader.database.dataVersion()
        try writer.addConversation(title: "added meanwhile", createdAt: 9)
        #expect(try reader.conversations.count() == 2)
        #expect(try reader.database.dataVersion() != version)
    }

    @Test("a write while another process holds the lock is a clear 'busy' error, and reads go on")
    func busy() throws {
        let folder = try TemporaryDirectory()
        let (path, id) = try Self.prepare(folder)
        let importer = try Store.open(path: path)
        let browser = try Store.open(path: path)
        browser.database.setBusyTimeout(milliseconds: 50)
        try importer.database.execute("BEGIN IMMEDIATE")
        #expect(throws: StorageError.busy) { try browser.conversations.rename(id: id, to: "meanwhile") }
        #expect(StorageError.busy.description.contains("try again in a moment"))
        #expect(!StorageError.busy.description.contains("locked"))
        #expect(try browser.conversations.count() == 1)
        try importer.database.execute("COMMIT")
        #expect(try browser.conversations.rename(id: id, to: "afterwards").title == "afterwards")
    }
}

/// `--readonly` against every state a file can be in: idle or with a `-wal`, in a writable
/// or an immutable folder, with a writer live or not. Never a false error, never a changed byte.
@Suite("Read-only matrix", .serialized)
struct ReadOnlyMatrixTests {
    static func chattr(_ flag: String, _ path: String) -> Int32 {
        ChildProcess.status("/usr/bin/chattr", [flag, path])
    }

    @Test("idle / -wal left by a crash / live writer × writable / immutable folder", arguments: [false, true])
    func matrix(immutable: Bool) throws {
        if immutable && geteuid() != 0 { return }  // chattr needs root; CI and this machine run as root
        // 1. Idle: no -wal.
        do {
            let folder = try TemporaryDirectory()
            let (path, _) = try ReadOnlyTests.prepare(folder)
            let before = try sha256(ofFile: path)
            if immutable { #expect(Self.chattr("+i", folder.path) == 0) }
            defer { if immutable { _ = Self.chattr("-i", folder.path) } }
            let store = try Store.open(path: path, readOnly: true)
            #expect(try store.conversations.count() == 1)
            #expect(store.database.isSnapshot == immutable)
            #expect(try sha256(ofFile: path) == before)
        }
        // 2. A -wal with committed changes left behind (a crash), no -shm.
        do {
            let folder = try TemporaryDirectory()
            let (path, _) = try ReadOnlyTests.prepare(folder)
            let writer = try Store.open(path: path)
            try writer.database.execute("PRAGMA wal_autocheckpoint = 0")
            try writer.addConversation(title: "only in the -wal", createdAt: 5)
            let crashed = try TemporaryDirectory()
            let copy = crashed.file("h.sqlite")
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
            let before = (try sha256(ofFile: copy), try sha256(ofFile: copy + "-wal"))
            if immutable { #expect(Self.chattr("+i", crashed.path) == 0) }
            defer { if immutable { _ = Self.chattr("-i", crashed.path) } }
            do {
                let store = try Store.open(path: copy, readOnly: true)
                #expect(!immutable, "read a -wal without a -shm in an immutable folder")
                #expect(try store.conversations.count() == 2, "the -wal's commit is seen")
            } catch let error as StorageError {
                #expect(immutable, "\(error)")
                guard case .cannotOpen(_, let reason) = error else {
                    Issue.record("unexpected \(error)")
                    return
                }
                #expect(reason.contains("it has a -wal file"))
            }
            #expect(try sha256(ofFile: copy) == before.0)
            #expect(try sha256(ofFile: copy + "-wal") == before.1)
        }
        // 3. A live writer, committing while the reader reads.
        do {
            let folder = try TemporaryDirectory()
            let (path, _) = try ReadOnlyTests.prepare(folder)
            let writer = try Store.open(path: path)
            try writer.addConversation(title: "before the reader", createdAt: 6)
            if immutable { #expect(Self.chattr("+i", folder.path) == 0) }
            defer { if immutable { _ = Self.chattr("-i", folder.path) } }
            let reader = try Store.open(path: path, readOnly: true)
            #expect(!reader.database.isSnapshot)
            for index in 0..<30 {
                try writer.addConversation(title: "live \(index)", createdAt: Int64(100 + index), messages: ["text \(index)"])
                #expect(try reader.conversations.count() == 3 + index)
                _ = try reader.conversations.page(sort: .updated, at: .first, limit: 50)
            }
            #expect(try reader.check().isHealthy)
        }
    }

    @Test("in a folder nobody can write: writes say the folder is read-only; check still reports")
    func writesInReadOnlyFolder() throws {
        guard geteuid() == 0 else { return }
        let folder = try TemporaryDirectory()
        let (path, _) = try ReadOnlyTests.prepare(folder)
        #expect(Self.chattr("+i", folder.path) == 0)
        defer { _ = Self.chattr("-i", folder.path) }
        do {
            _ = try Store.open(path: path)
            Issue.record("opened read-write in an immutable folder")
        } catch let error as StorageError {
            #expect(error.description.contains("is read-only, and SQLite writes a -wal file beside the database"), "\(error)")
        }
        let report = Store.check(path: path)
        #expect(report.isHealthy, "\(report)")
    }

    @Test("a -shm or -wal that is a symlink or a folder is refused by name, and nothing is written through it")
    func companionsNotFiles() throws {
        for suffix in ["-shm", "-wal"] {
            let folder = try TemporaryDirectory()
            let (path, _) = try ReadOnlyTests.prepare(folder)
            try "victim".write(toFile: folder.file("victim"), atomically: false, encoding: .utf8)
            try FileManager.default.createSymbolicLink(atPath: path + suffix, withDestinationPath: folder.file("victim"))
            for readOnly in [true, false] {
                do {
                    _ = try Store.open(path: path, readOnly: readOnly)
                    Issue.record("opened with a symlinked \(suffix)")
                } catch let error as StorageError {
                    #expect(error.description.contains("h.sqlite\(suffix) beside it is not a regular file"), "\(error)")
                }
            }
            #expect(try String(contentsOfFile: folder.file("victim"), encoding: .utf8) == "victim")
        }
    }
}
