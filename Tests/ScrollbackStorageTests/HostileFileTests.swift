import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// Files a hostile tester put where the database should be: each must be a clear error that
/// leaves every byte as it was.
@Suite("Hostile files")
struct HostileFileTests {
    static func makeDatabase(_ folder: TemporaryDirectory, conversations: Int = 3) throws -> String {
        let path = folder.file("h.sqlite")
        let store = try Store.open(path: path)
        for index in 0..<conversations {
            try store.addConversation(title: "kept \(index)", createdAt: Int64(index + 1), messages: ["body \(index)"])
        }
        return path
    }

    @Test("a schema version that is not ours (negative, or absurd) is a clear error, read-write and read-only")
    func foreignVersions() throws {
        for version in [-1, -2_147_483_648, 2_147_483_647] {
            let folder = try TemporaryDirectory()
            let path = try Self.makeDatabase(folder)
            let database = try Database.open(path: path, access: .readWrite)
            try database.execute("PRAGMA user_version = \(version)")
            let before = try sha256(ofFile: path)
            for readOnly in [false, true] {
                do {
                    _ = try Store.open(path: path, readOnly: readOnly)
                    Issue.record("schema \(version) opened")
                } catch let error as StorageError {
                    switch error {
                    case .notAScrollbackDatabase, .newerSchema: #expect(!error.description.contains("SQLite"))
                    default: Issue.record("unexpected \(error)")
                    }
                }
            }
            #expect(try sha256(ofFile: path) == before)
        }
    }

    @Test("a foreign -wal beside a good database: refused, the file and the -wal unchanged, data intact once it is moved")
    func foreignWALLeavesEveryByte() throws {
        let folder = try TemporaryDirectory()
        let path = try Self.makeDatabase(folder, conversations: 40)
        let wal = try foreignWAL(scratch: folder.file("other.db"))
        try wal.write(to: URL(fileURLWithPath: path + "-wal"))
        let before = try sha256(ofFile: path)
        for readOnly in [false, true, false] {
            do {
                _ = try Store.open(path: path, readOnly: readOnly)
                Issue.record("opened with a foreign -wal")
            } catch let error as StorageError {
                guard case .notAScrollbackDatabase(_, let reason) = error else {
                    Issue.record("unexpected \(error)")
                    continue
                }
                #expect(reason.contains("-wal"))
                #expect(reason.contains("nothing was changed"))
            }
            #expect(try sha256(ofFile: path) == before)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path + "-wal")) == wal)
        }
        try FileManager.default.removeItem(atPath: path + "-wal")
        try? FileManager.default.removeItem(atPath: path + "-shm")
        let store = try Store.open(path: path)
        #expect(try store.conversations.count() == 40)
        #expect(try store.check().isHealthy)
    }

    @Test("a FIFO, a device or a folder as the database: a clear error at once, nothing opened or created")
    func notRegularFiles() throws {
        let folder = try TemporaryDirectory()
        let fifo = folder.file("pipe.sqlite")
        #expect(mkfifo(fifo, 0o600) == 0)
        for (path, reason) in [(fifo, "it is a FIFO, not a file"), ("/dev/null", "it is a device, not a file"), (folder.path, "it is a folder")] {
            for readOnly in [false, true] {
                #expect(throws: StorageError.notAScrollbackDatabase(path: path, reason: reason)) {
                    try Store.open(path: path, readOnly: readOnly)
                }
            }
        }
        #expect(try folder.listing() == ["pipe.sqlite"])
    }

    @Test("a missing folder is made only when asked (the default location); otherwise a clear error")
    func missingFolder() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("typo/history.sqlite")
        do {
            _ = try Store.open(path: path, createFolder: false)
            Issue.record("opened under a missing folder")
        } catch let error as StorageError {
            #expect(error.description.contains("there is no folder \(folder.file("typo"))"))
        }
        #expect(try folder.listing() == [])
        _ = try Store.open(path: path, createFolder: true)
        #expect(try folder.listing() == ["typo"])
    }

    @Test("a damaged page is one line naming the file and what to do; the SQL only in the verbose form")
    func damagedIsOneLine() throws {
        let folder = try TemporaryDirectory()
        let path = try Self.makeDatabase(folder, conversations: 300)
        // Overwrite page 3 onwards (the tables' pages) with garbage, keeping the header.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: 4096 * 2)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 4096 * 6))
        try handle.close()
        do {
            let store = try Store.open(path: path, readOnly: true)
            _ = try store.conversations.page(sort: .updated, at: .first, limit: 500)
            _ = try store.search.search("body", after: nil, limit: 500)
            Issue.record("read a damaged database without an error")
        } catch let error as StorageError {
            guard case .damaged = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(error.description.hasPrefix("\(path) is damaged"))
            #expect(error.description.contains("scrollback check"))
            #expect(!error.description.contains("SELECT"))
            #expect(!error.description.contains("\n"))
            #expect(error.verboseDescription.contains("SQLite error"))
        }
        let report = Store.check(path: path)
        #expect(!report.isHealthy)
        #expect(report.problems.contains { $0.hasPrefix("integrity:") })
    }

    @Test("check compares the schema object by object: a missing trigger and a foreign one are problems")
    func checkComparesSchema() throws {
        let folder = try TemporaryDirectory()
        let path = try Self.makeDatabase(folder)
        let store = try Store.open(path: path)
        #expect(try store.check().isHealthy)
        try store.database.execute("PRAGMA trusted_schema = ON; DROP TRIGGER message_counted")
        try store.database.execute("CREATE TRIGGER spy AFTER INSERT ON conversation BEGIN SELECT 1; END")
        let report = try store.check()
        #expect(report.problems.contains("schema: message_counted is missing"))
        #expect(report.problems.contains("schema: spy is not part of scrollback's schema (added by another program?)"))
        // While the trigger is missing, a new message goes uncounted; repair puts it back and
        // recounts; the foreign trigger stays for the user to judge.
        let conversation = try store.conversations.page(sort: .created, at: .first, limit: 1).items[0]
        _ = try store.messages.append([NewMessage(role: .user, content: "uncounted")], to: conversation.id)
        try store.repair()
        let after = try store.check()
        #expect(after.problems == ["schema: spy is not part of scrollback's schema (added by another program?)"], "\(after)")
        _ = try store.messages.append([NewMessage(role: .user, content: "counted")], to: conversation.id)
        #expect(try store.check().problems.count == 1)
    }

    @Test("a foreign trigger that aborts a write is a plain message, not a raw SQLite code; an undo that meets a re-import too")
    func foreignTriggerAndUndoConflict() throws {
        let folder = try TemporaryDirectory()
        let path = try Self.makeDatabase(folder)
        let store = try Store.open(path: path)
        let conversation = try store.conversations.page(sort: .created, at: .first, limit: 1).items[0]
        try store.database.execute("CREATE TRIGGER evil BEFORE UPDATE ON conversation BEGIN SELECT raise(abort, 'nope'); END")
        do {
            _ = try store.conversations.rename(id: conversation.id, to: "x")
            Issue.record("renamed through an aborting trigger")
        } catch let error as StorageError {
            #expect(error.description.hasPrefix("a trigger that is not scrollback's refused the change (nope)"), "\(error)")
        }
        try store.database.execute("DROP TRIGGER evil")
        let snapshots = try store.conversations.deleteKeepingSnapshots(ids: [conversation.id])
        // Another process imports the same conversation again before the undo.
        try store.addConversation(title: "again", createdAt: 5, source: conversation.source, sourceID: "same")
        try store.database.run("UPDATE conversation SET public_id = ? WHERE title = 'again'", [.text(conversation.publicID)])
        do {
            try store.conversations.restore(snapshots)
            Issue.record("restored over a re-import")
        } catch let error as StorageError {
            #expect(error.description.hasPrefix("cannot undo: “\(conversation.title)” is back already"), "\(error)")
        }
        #expect(try store.conversations.count() == 3)
    }

    @Test("a delete right after another connection's bulk import (triggers set aside and back) succeeds")
    func writeAfterSchemaChange() throws {
        let folder = try TemporaryDirectory()
        let path = try Self.makeDatabase(folder, conversations: 5)
        let deleter = try Store.open(path: path)
        let victim = try deleter.conversations.page(sort: .created, at: .first, limit: 1).items[0]
        let importer = try Store.open(path: path)
        try importer.inserting(about: .max) {
            _ = try importer.addConversation(title: "bulk", createdAt: 99, messages: ["one", "two"])
        }
        #expect(try deleter.conversations.delete(ids: [victim.id]) == 1)
        #expect(try deleter.conversations.count() == 5)
        #expect(try deleter.check().isHealthy)
    }
}
