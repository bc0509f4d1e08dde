import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

@Suite("Opening databases")
struct DatabaseTests {
    @Test("read-write opening creates the folder and the file, in WAL mode")
    func createsFolderAndFile() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("nested/deeper/history.sqlite")
        let store = try Store.open(path: path)
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(try store.database.queryFirst("PRAGMA journal_mode") { $0.text(0) } == "wal")
        #expect(try store.database.scalarInt("PRAGMA foreign_keys") == 1)
        #expect(try store.database.scalarInt("PRAGMA user_version") == Int64(Migrator.scrollback.latestVersion))
        #expect(store.migration == MigrationOutcome(fromVersion: 0, toVersion: Migrator.scrollback.latestVersion, backupPath: nil))
    }

    @Test("read-only opening of a missing path fails and creates nothing")
    func readOnlyMissing() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("absent/history.sqlite")
        #expect(throws: StorageError.noDatabase(path: path)) { try Store.open(path: path, readOnly: true) }
        #expect(try folder.listing() == [])
        #expect(StorageError.noDatabase(path: path).description.hasPrefix("no database at \(path)"))
    }

    @Test("a file that is not a database is a clear error, and is left alone")
    func notADatabase() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("notes.sqlite")
        let text = String(repeating: "These are my notes, not a database.\n", count: 200)
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        let before = try sha256(ofFile: path)
        for readOnly in [false, true] {
            #expect(throws: StorageError.notAScrollbackDatabase(path: path, reason: "not a SQLite file")) {
                try Store.open(path: path, readOnly: readOnly)
            }
        }
        #expect(try sha256(ofFile: path) == before)
        #expect(try folder.listing() == ["notes.sqlite"])
    }

    @Test("another program's SQLite database is refused and left as it was")
    func foreignDatabase() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("logs.db")
        do {
            let other = try Database.open(path: path, access: .readWrite)
            try other.execute("CREATE TABLE responses (id TEXT PRIMARY KEY, prompt TEXT); INSERT INTO responses VALUES ('a', 'hi');")
        }
        let before = try sha256(ofFile: path)
        #expect(throws: StorageError.notAScrollbackDatabase(path: path, reason: "it holds other tables")) {
            try Store.open(path: path)
        }
        #expect(try sha256(ofFile: path) == before)
    }

    @Test("a folder that cannot be written is a clear error")
    func unwritableFolder() throws {
        let folder = try TemporaryDirectory()
        // A regular file where a folder should be: not writable as a folder even by root.
        try "x".write(toFile: folder.file("blocker"), atomically: false, encoding: .utf8)
        let path = folder.file("blocker/history.sqlite")
        do {
            _ = try Store.open(path: path)
            Issue.record("opening under a file should fail")
        } catch let error as StorageError {
            guard case .cannotOpen(let failedPath, let reason) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(failedPath == path)
            #expect(reason == "\(folder.file("blocker")) is a file, not a folder")
            #expect(!error.description.contains("--db"))
        }
        for readOnly in [false, true] {
            #expect(throws: StorageError.notAScrollbackDatabase(path: folder.path, reason: "it is a folder")) {
                try Store.open(path: folder.path, readOnly: readOnly)
            }
        }
        if geteuid() != 0 {
            // Permission bits only bind users other than root.
            let locked = folder.file("locked")
            try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: false)
            chmod(locked, 0o555)
            defer { chmod(locked, 0o755) }
            #expect(throws: StorageError.self) { try Store.open(path: locked + "/history.sqlite") }
        }
    }

    @Test("SQLite errors keep the extended code, the message and the SQL")
    func typedErrors() throws {
        let store = try Store.open(path: ":memory:")
        let sql = "INSERT INTO settings (key, value) VALUES (?, NULL)"
        do {
            try store.database.run(sql, ["k"])
            Issue.record("a NOT NULL violation should throw")
        } catch StorageError.sqlite(let error) {
            #expect(error.code == 19)  // SQLITE_CONSTRAINT
            #expect(error.extendedCode == 1299)  // SQLITE_CONSTRAINT_NOTNULL
            #expect(error.message.contains("NOT NULL constraint failed: settings.value"))
            #expect(error.sql == sql)
            #expect(error.description.contains("while executing `\(sql)`"))
        }
    }

    @Test("a write transaction is rolled back when its body throws, nested ones too")
    func rollback() throws {
        struct Stop: Error {}
        let store = try Store.open(path: ":memory:")
        let database = store.database
        #expect(throws: Stop.self) {
            try database.write {
                try database.run("INSERT INTO settings VALUES ('a', '1')")
                throw Stop()
            }
        }
        // The schema's own row (the database's id) is all there is.
        #expect(try database.scalarInt("SELECT count(*) FROM settings WHERE key <> 'database.id'") == 0)
        try database.write {
            try database.run("INSERT INTO settings VALUES ('outer', '1')")
            _ = try? database.write {
                try database.run("INSERT INTO settings VALUES ('inner', '1')")
                throw Stop()
            }
        }
        #expect(try database.query("SELECT key FROM settings WHERE key <> 'database.id'") { $0.text(0) } == ["outer"])
    }

    @Test("statements are prepared once and reused by SQL text")
    func statementCache() throws {
        let database = try Database.inMemory()
        let first = try database.statement("SELECT 1")
        let second = try database.statement("SELECT 1")
        #expect(first === second)
        #expect(try database.statement("SELECT 2") !== first)
    }

    @Test("text with embedded NULs and empty text round-trip exactly")
    func textRoundTrip() throws {
        let database = try Database.inMemory()
        for text in ["", "a\u{0}b", "日本語 👩‍💻 e\u{301}"] {
            #expect(try database.queryFirst("SELECT ?", [.text(text)]) { $0.text(0) } == text)
            #expect(try database.queryFirst("SELECT ? IS NULL", [.text(text)]) { $0.bool(0) } == false)
        }
    }
}
