import Foundation
import ScrollbackModel
import Testing
import TestSupport

@testable import ScrollbackStorage

@Suite("backup: a consistent, checked copy while others write")
struct BackupTests {
    static func fill(_ store: Store, count: Int, from start: Int = 0) throws {
        for index in start..<(start + count) {
            let time = Timestamp(milliseconds: 1_767_225_600_000 + Int64(index) * 60_000)
            _ = try store.upsert(
                ImportedConversation(
                    source: "chatgpt", sourceID: "c\(index)", title: "Conversation \(index)", model: "gpt-4o", createdAt: time, updatedAt: time,
                    messages: [
                        ImportedMessage(role: .user, content: String(repeating: "words of message \(index) ", count: 40), createdAt: time, nodeID: "u"),
                        ImportedMessage(role: .assistant, content: "an answer \(index)", createdAt: time, nodeID: "a", parent: .node("u")),
                    ]))
        }
    }

    @Test("a writer beside it (another connection, between every step) never restarts it: the copy is the database as it was when the backup began, one file, checked")
    func writerBeside() throws {
        let folder = try TemporaryDirectory()
        let store = try Store.open(path: folder.file("h.sqlite"))
        try Self.fill(store, count: 600)
        let writer = try Store.open(path: folder.file("h.sqlite"))
        var seen: [Int] = []
        var written = 0
        let report = try store.backup(to: folder.file("copy.sqlite"), force: false, progress: { done, _ in
            seen.append(done)
            // Another connection commits between steps.
            try? Self.fill(writer, count: 20, from: 10_000 + written)
            written += 20
        }, pagesPerStep: 16)
        #expect(report.byFiles, "the files were not copied by the kernel")
        #expect(written > 0 && seen.count > 1, "\(seen)")
        #expect(seen == seen.sorted(), "the copy went back: it restarted \(seen)")
        #expect(report.conversations == 600)
        #expect(try writer.conversations.count(filter: .none) == 600 + written)
        let copy = try Store.open(path: folder.file("copy.sqlite"), readOnly: true)
        #expect(try copy.conversations.count(filter: .none) == 600)
        #expect(try copy.check().problems.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: folder.file("copy.sqlite-wal")))
        #expect(try folder.listing().filter { $0.contains("partial") }.isEmpty)
        var status = stat()
        #expect(stat(folder.file("copy.sqlite"), &status) == 0 && status.st_mode & 0o077 == 0, "a history is private")
    }

    @Test("never over a file without force, never onto the database or its -wal; interrupted or failing, nothing is left behind")
    func refusals() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        let store = try Store.open(path: path)
        try Self.fill(store, count: 50)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: folder.file("taken.sqlite")))
        #expect(throws: BackupError.exists(folder.file("taken.sqlite"))) { try store.backup(to: folder.file("taken.sqlite"), force: false) }
        #expect(FileManager.default.contents(atPath: folder.file("taken.sqlite")) == Data("mine".utf8))
        #expect(throws: BackupError.sameFile(path)) { try store.backup(to: path, force: true) }
        #expect(throws: BackupError.sameFile(path + "-wal")) { try store.backup(to: path + "-wal", force: true) }
        // Through a symlink to it too.
        try FileManager.default.createSymbolicLink(atPath: folder.file("link.sqlite"), withDestinationPath: path)
        #expect(throws: BackupError.sameFile(folder.file("link.sqlite"))) { try store.backup(to: folder.file("link.sqlite"), force: true) }
        #expect(throws: BackupError.interrupted) { try store.backup(to: folder.file("cut.sqlite"), force: false, shouldStop: { true }) }
        #expect(!FileManager.default.fileExists(atPath: folder.file("cut.sqlite")))
        #expect(try folder.listing().filter { $0.contains("partial") }.isEmpty)
        // With force, the file is replaced by a whole copy.
        let report = try store.backup(to: folder.file("taken.sqlite"), force: true)
        #expect(report.conversations == 50)
        #expect(try Store.open(path: folder.file("taken.sqlite"), readOnly: true).check().problems.isEmpty)
        // A folder that is not there.
        #expect(throws: BackupError.self) { try store.backup(to: folder.file("no/such/folder/x.sqlite"), force: false) }
    }

    @Test("a damaged database is not backed up as if it were sound: the check of the copy refuses it, and nothing is written")
    func damagedSource() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        do {
            let store = try Store.open(path: path)
            try Self.fill(store, count: 300)
        }
        // A page in the middle of the file overwritten (as a bad disk would).
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: (size / 4096 / 2) * 4096)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 4096))
        try handle.close()
        let store = try Store.open(path: path, readOnly: true)
        do {
            _ = try store.backup(to: folder.file("copy.sqlite"), force: false)
            Issue.record("a damaged database was backed up")
        } catch let error as BackupError {
            guard case .failedCheck = error else {
                Issue.record("\(error)")
                return
            }
            #expect(error.description.contains("nothing was written to"))
        } catch let error as StorageError {
            // SQLite itself may stop on the damaged page while copying it.
            guard case .damaged = error else {
                Issue.record("\(error)")
                return
            }
        }
        #expect(!FileManager.default.fileExists(atPath: folder.file("copy.sqlite")))
        #expect(try folder.listing().filter { $0.contains("partial") }.isEmpty)
    }
}

extension BackupTests {
    @Test("a partial copy a killed backup left is removed by the next backup to that name; one a running backup holds is not, nor one made a moment ago")
    func abandonedCopies() throws {
        let folder = try TemporaryDirectory()
        let store = try Store.open(path: folder.file("h.sqlite"))
        try Self.fill(store, count: 20)
        let abandoned = folder.file(".copy.sqlite.partial-AAAAAA")
        let running = folder.file(".copy.sqlite.partial-BBBBBB")
        let other = folder.file(".other.sqlite.partial-CCCCCC")
        let young = folder.file(".copy.sqlite.partial-DDDDDD")
        for path in [abandoned, running, other, abandoned + "-journal", young] { try Data("x".utf8).write(to: URL(fileURLWithPath: path)) }
        // Left by killed backups two minutes ago; one made a moment ago may be another's,
        // not locked yet, and stays.
        for path in [abandoned, running, other] {
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-120)], ofItemAtPath: path)
        }
        // Made a moment ago by a clock a minute ahead: still young however slowly this runs
        // (CI once took more than five seconds between the two backups).
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(60)], ofItemAtPath: young)
        // Not inherited by the programs other tests start meanwhile (it would hold the lock).
        let held = open(running, O_RDONLY | O_CLOEXEC)
        #expect(held >= 0 && flock(held, LOCK_EX) == 0)
        _ = try store.backup(to: folder.file("copy.sqlite"), force: false)
        let left = try folder.listing().filter { $0.contains(".partial-") }.sorted()
        #expect(left == [".copy.sqlite.partial-BBBBBB", ".copy.sqlite.partial-DDDDDD", ".other.sqlite.partial-CCCCCC"], "\(left)")
        close(held)
        _ = try store.backup(to: folder.file("copy.sqlite"), force: true)
        let after = try folder.listing().filter { $0.contains(".partial-") }.sorted()
        #expect(after == [".copy.sqlite.partial-DDDDDD", ".other.sqlite.partial-CCCCCC"], "\(after)")
    }
}

extension BackupTests {
    @Test("copied by the kernel beside a writer that keeps changes in the -wal and a checkpointer that moves them into the file meanwhile: the copy is the database as it was when the backup began; a database in rollback-journal mode is copied whole")
    func filesBesideCheckpoints() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        let store = try Store.open(path: path)
        try Self.fill(store, count: 300)
        // Changes only the -wal holds when the backup begins.
        let writer = try Store.open(path: path)
        try writer.database.execute("PRAGMA wal_autocheckpoint = 0")
        try Self.fill(writer, count: 50, from: 5_000)
        #expect(Store.hasWALContent(path))
        let reader = try Store.open(path: path, readOnly: true)
        var written = 0
        let report = try reader.backup(to: folder.file("copy.sqlite"), force: false, progress: { _, _ in
            // Between pieces: more commits, and checkpoints of everything they may move.
            try? Self.fill(writer, count: 10, from: 20_000 + written)
            written += 10
            _ = try? writer.database.query("PRAGMA wal_checkpoint(PASSIVE)") { $0.int(0) }
        }, pagesPerStep: 8)
        #expect(report.byFiles)
        #expect(written > 10)
        let copy = try Store.open(path: folder.file("copy.sqlite"), readOnly: true)
        #expect(try copy.conversations.count(filter: .none) == 350)
        #expect(try copy.check().problems.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: folder.file("copy.sqlite-wal")))
        // Rollback-journal mode: copied under the read transaction's shared lock.
        let plain = folder.file("plain.sqlite")
        _ = try store.backup(to: plain, force: false)
        let single = try Store.open(path: plain, readOnly: true)
        let again = try single.backup(to: folder.file("plain-copy.sqlite"), force: false)
        #expect(again.byFiles && again.conversations == 300 + 50 + written)
    }
}

extension BackupTests {
    /// `sqlite3`'s answer to `PRAGMA wal_checkpoint(MODE)` on `path`, run as another
    /// process: "busy|log|checkpointed".
    static func checkpoint(_ path: String, _ mode: String) throws -> String {
        let outcome = try ChildProcess.run("/usr/bin/sqlite3", [path, "PRAGMA wal_checkpoint(\(mode))"])
        return outcome.outputText.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("copied by the kernel while another process checkpoints between pieces: the read transaction's lock holds its checkpoints back (reading the wal-index and the files never drops it), so the copy is the database as it began, never made again")
    func filesBesideAnotherProcess() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        let store = try Store.open(path: path)
        try Self.fill(store, count: 300)
        let writer = try Store.open(path: path)
        try writer.database.execute("PRAGMA wal_autocheckpoint = 0")
        try Self.fill(writer, count: 50, from: 5_000)
        #expect(Store.hasWALContent(path))
        var written = 0
        var answers: [String] = []
        let modes = ["PASSIVE", "RESTART", "TRUNCATE"]
        let report = try store.backup(to: folder.file("copy.sqlite"), force: false, progress: { _, _ in
            try? Self.fill(writer, count: 5, from: 20_000 + written)
            written += 5
            if let answer = try? Self.checkpoint(path, modes[answers.count % modes.count]) { answers.append(answer) }
        }, pagesPerStep: 8)
        #expect(report.byFiles && !report.redone, "\(report)")
        #expect(answers.count > 6, "\(answers)")
        // A RESTART or TRUNCATE checkpoint waits for the backup's reader: busy, every time.
        let restarts = answers.enumerated().filter { modes[$0.offset % modes.count] != "PASSIVE" }.map(\.element)
        #expect(!restarts.isEmpty && restarts.allSatisfy { $0.hasPrefix("1|") }, "\(answers)")
        let copy = try Store.open(path: folder.file("copy.sqlite"), readOnly: true)
        #expect(try copy.conversations.count(filter: .none) == 350)
        #expect(try copy.check().problems.isEmpty)
    }

    @Test("what reads the database's files outside SQLite (the wal-index, the -wal's header, the lock of another program, the copy before a repair) leaves this process's locks in place: another process's checkpoint still waits for a read transaction open here, and cannot take the database out of WAL mode")
    func readsKeepLocks() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        let store = try Store.open(path: path)
        try Self.fill(store, count: 20)
        let writer = try Store.open(path: path)
        try writer.database.execute("PRAGMA wal_autocheckpoint = 0")
        try Self.fill(writer, count: 5, from: 100)
        try store.database.read {
            _ = try store.database.scalarInt("SELECT count(*) FROM conversation")
            #expect(try Self.checkpoint(path, "TRUNCATE").hasPrefix("1|"))
            #expect(Store.walIndex(path) != nil)
            #expect(HeldOpen.read(path + "-wal", at: 16, count: 8)?.count == 8)
            #expect(DatabaseUsers.sqliteHolders(path).isEmpty)
            #expect(try Self.checkpoint(path, "TRUNCATE").hasPrefix("1|"), "a read here dropped the read transaction's lock")
            #expect(try store.database.scalarInt("SELECT count(*) FROM conversation") == 25)
        }
        #expect(try Self.checkpoint(path, "TRUNCATE") == "0|0|0")
        // The copy kept before a repair reads the file and its -wal under the write lock.
        try Self.fill(writer, count: 5, from: 200)
        let copies = try store.keepCopyBeforeRepair()
        #expect(copies.count == 2)
        // Leaving WAL mode needs every connection gone; this process's are still here.
        let outcome = try ChildProcess.run("/usr/bin/sqlite3", [path, "PRAGMA journal_mode = DELETE"])
        #expect(outcome.outputText.trimmingCharacters(in: .whitespacesAndNewlines) != "delete", "\(outcome.outputText) \(outcome.errorText)")
        #expect(try store.database.queryFirst("PRAGMA journal_mode") { $0.text(0) } == "wal")
    }
}
