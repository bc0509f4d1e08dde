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
        #expect(try folder.listing() == names, "read-only opening left files behind")
    }

    @Test("a read-only view of an idle WAL database is a snapshot and creates no files")
    func snapshot() throws {
        let folder = try TemporaryDirectory()
        let (path, _) = try Self.prepare(folder)
        #expect(try folder.listing() == ["h.sqlite"])
        let store = try Store.open(path: path, readOnly: true)
        #expect(store.database.isSnapshot)
        _ = try store.stats()
        #expect(try folder.listing() == ["h.sqlite"])
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
