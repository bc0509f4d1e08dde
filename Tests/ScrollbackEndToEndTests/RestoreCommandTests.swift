import Foundation
import ScrollbackModel
import ScrollbackStorage
import ScrollbackSync
import Testing
import TestSupport

/// `scrollback restore PATH` as a user runs it: what it refuses (leaving everything as it
/// was), what it keeps, while the browser is open and after, and what it does to sync.
@Suite("restore, through the binary", .serialized)
struct RestoreCommandTests {
    /// The database's conversations as `export --format jsonl` writes them.
    static func export(_ runner: BinaryRunner, db: String? = nil) throws -> String {
        let result = try runner.run(["--db", db ?? runner.databasePath, "export", "--format", "jsonl"], withDatabase: false)
        #expect(result.status == 0, "\(result.error)")
        return result.output
    }

    static func sqlite(_ path: String, _ sql: String) throws {
        let outcome = try ChildProcess.run("/usr/bin/sqlite3", [path, sql], environment: ["LANG": "C.UTF-8"])
        #expect(outcome.status == 0, "\(outcome.errorText)")
    }

    @Test("refused, with one line and nothing changed: no file, a folder, the database itself, another program's file, garbage, an empty database, a newer schema, a damaged backup, --readonly, no --yes on a pipe")
    func refusals() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["import", try runner.recordExport(titles: ["Kept one", "Kept two"])]).status == 0)
        let before = try Self.export(runner)
        let files = runner.dataFiles()
        let good = runner.folder.file("good.sqlite")
        #expect(try runner.run(["backup", good]).status == 0)

        let foreign = runner.folder.file("foreign.sqlite")
        try Self.sqlite(foreign, "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('x');")
        let garbage = runner.folder.file("garbage.sqlite")
        try Data(repeating: 0x41, count: 8_192).write(to: URL(fileURLWithPath: garbage))
        let empty = runner.folder.file("empty.sqlite")
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        let newer = runner.folder.file("newer.sqlite")
        try FileManager.default.copyItem(atPath: good, toPath: newer)
        try Self.sqlite(newer, "PRAGMA user_version = 99")
        // A backup with a page in its middle overwritten.
        let damaged = runner.folder.file("damaged.sqlite")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: good))
        let page = 4_096
        let middle = (bytes.count / page / 2) * page
        bytes.replaceSubrange(middle..<(middle + page), with: Data(repeating: 0x5A, count: page))
        try bytes.write(to: URL(fileURLWithPath: damaged))
        let cases: [(arguments: [String], status: Int32, says: String)] = [
            (["restore", runner.folder.file("nothing.sqlite"), "--yes"], 1, "no file at"),
            (["restore", runner.folder.path, "--yes"], 1, "is not a regular file"),
            (["restore", runner.databasePath, "--yes"], 1, "is the database itself"),
            (["restore", runner.databasePath + "-wal", "--yes"], 1, "is the database itself (or its -wal or -shm)"),
            (["restore", foreign, "--yes"], 1, "is not a scrollback database (it holds other tables)"),
            (["restore", garbage, "--yes"], 1, "is not a scrollback database"),
            (["restore", empty, "--yes"], 1, "is an empty database, not a backup"),
            (["restore", newer, "--yes"], 1, "was written by a newer scrollback (schema 99"),
            (["restore", damaged, "--yes"], 1, "is damaged"),
            (["--readonly", "restore", good, "--yes"], 2, "cannot run with --readonly"),
            (["restore", good], 2, "refusing to restore without --yes when standard input is not a terminal"),
        ]
        for (arguments, status, says) in cases {
            let result = try runner.run(arguments)
            #expect(result.status == status, "\(arguments): \(result.status) \(result.error)")
            #expect(result.error.contains(says), "\(arguments): \(result.error)")
            #expect(result.error.split(separator: "\n").count == 1, "\(arguments): \(result.error)")
            #expect(!result.error.contains("SQLITE") && !result.error.contains("SELECT"), "\(result.error)")
            #expect(result.output.isEmpty)
        }
        #expect(try Self.export(runner) == before)
        // Nothing was left beside the database but the lock file the commands share.
        #expect(Set(runner.dataFiles()).subtracting(files).subtracting(["history.sqlite.in-use"]).isEmpty, "\(runner.dataFiles())")
        // A hostile name reaches the terminal only as text.
        let hostile = runner.folder.file("evil\u{1B}]0;pwned\u{07}.sqlite")
        let shown = try runner.run(["restore", hostile, "--yes"])
        #expect(shown.status == 1 && !shown.error.contains("\u{1B}") && !shown.error.contains("\u{07}"), "\(shown.error)")
    }

    @Test("restore replaces the database, keeps the one it replaced (with what only its -wal held) under a dated name, leaves no -wal of the old one, and upgrades an older backup, which stays as it was")
    func replacesAndKeeps() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["import", try runner.recordExport(titles: ["Alpha", "Beta", "Gamma"])]).status == 0)
        let backup = runner.folder.file("monday.sqlite")
        #expect(try runner.run(["backup", backup]).status == 0)
        let atBackup = try Self.export(runner)
        #expect(try runner.run(["import", try runner.recordExport(titles: ["Alpha", "Beta", "Gamma", "Delta"])]).status == 0)
        // A change that only the -wal holds: a writer that dies without a checkpoint.
        let script = """
            import sqlite3, os
            c = sqlite3.connect('\(runner.databasePath)', isolation_level=None)
            c.execute('PRAGMA wal_autocheckpoint = 0')
            c.execute("UPDATE conversation SET pinned = 1 WHERE title = 'Delta'")
            os._exit(0)
            """
        let python = try ChildProcess.run("/usr/bin/env", ["python3", "-c", script], environment: ["PATH": "/usr/bin:/bin:/usr/local/bin"])
        #expect(python.status == 0, "\(python.errorText)")
        #expect(Store.hasWALContent(runner.databasePath))
        let beforeRestore = try Self.export(runner)
        #expect(beforeRestore.contains("\"pinned\":true"))

        let restored = try runner.json(["restore", backup, "--yes"])
        let kept = try #require(restored["kept"] as? String)
        #expect(kept.hasPrefix(runner.databasePath + ".before-restore-") && kept.hasSuffix(".backup"), "\(kept)")
        #expect(restored["conversations"] as? Int == 3)
        #expect(try Self.export(runner) == atBackup)
        #expect(!Store.hasWALContent(runner.databasePath))
        #expect(try runner.run(["check"]).status == 0)
        // The replaced one, as it was: its -wal kept beside it as it was, never merged here.
        #expect(Store.hasWALContent(kept))
        #expect(try Self.export(runner, db: kept) == beforeRestore)
        let keptStore = try Store.open(path: kept, readOnly: true)
        #expect(try keptStore.conversations.count() == 4)
        let listing = runner.dataFiles()
        #expect(!listing.contains { $0.contains(".restore-") }, "\(listing)")

        // An older backup: upgraded into place, the file itself untouched.
        let old = runner.folder.file("old.sqlite")
        try UpgradeCommandTests.makeVersion1(at: old)
        let oldBytes = try Data(contentsOf: URL(fileURLWithPath: old))
        let upgraded = try runner.run(["restore", old, "--yes"])
        #expect(upgraded.status == 0, "\(upgraded.error)")
        #expect(upgraded.output.contains("Restored 30 conversations") && upgraded.output.contains("(upgraded from schema 1)"), "\(upgraded.output)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: old)) == oldBytes)
        #expect(try !FileManager.default.contentsOfDirectory(atPath: runner.folder.path).contains { $0.hasPrefix("old.sqlite.schema-") })
        let search = try runner.json(["search", "鰻"])
        #expect((search["hits"] as? [Any])?.count == 30)
        #expect(try runner.run(["check"]).status == 0)
        // Two restores in a second: each keeps its own copy.
        #expect(try runner.run(["restore", backup, "--yes"]).status == 0)
        #expect(runner.dataFiles().filter { $0.contains(".before-restore-") && $0.hasSuffix(".backup") }.count == 3, "\(runner.dataFiles())")
    }

    @Test("on a terminal it says what it is about to do and asks; no answer restores nothing; yes restores")
    func asks() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["import", try runner.recordExport(titles: ["Alpha", "Beta"])]).status == 0)
        let backup = runner.folder.file("b.sqlite")
        #expect(try runner.run(["backup", backup]).status == 0)
        #expect(try runner.run(["import", try runner.recordExport(titles: ["Alpha", "Beta", "Gamma"])]).status == 0)
        let arguments = ["--db", runner.databasePath, "restore", backup]
        do {
            let tmux = try TmuxSession(width: 160, height: 30, arguments: arguments)
            let asked = try tmux.waitFor(text: "Restore? [y/N]").joined(separator: "\n")
            #expect(asked.contains("(2 conversations, newest"), "\(asked)")
            #expect(asked.contains("Replaces: \(runner.databasePath) (3 conversations"), "\(asked)")
            try tmux.send("Enter")
            #expect(try tmux.waitForExit() == 0)
            _ = try tmux.waitFor(text: "Nothing restored.")
        }
        #expect(try runner.run(["list", "--json"]).output.contains("Gamma"))
        let tmux = try TmuxSession(width: 160, height: 30, arguments: arguments)
        _ = try tmux.waitFor(text: "Restore? [y/N]")
        try tmux.type("y")
        try tmux.send("Enter")
        #expect(try tmux.waitForExit() == 0)
        let done = try tmux.waitFor(text: "Restored 2 conversations")
        #expect(done.joined().contains("kept at"))
        #expect(try !runner.run(["list", "--json"]).output.contains("Gamma"))
    }

    @Test("refused while the browser has the database open (saying so, with its pid), and a read-only browser too; accepted once they quit")
    func refusedWhileOpen() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["import", try runner.recordExport(titles: ["Alpha", "Beta"])]).status == 0)
        let backup = runner.folder.file("b.sqlite")
        #expect(try runner.run(["backup", backup]).status == 0)
        #expect(try runner.run(["import", try runner.recordExport(titles: ["Alpha", "Beta", "Gamma"])]).status == 0)
        let before = try Self.export(runner)
        do {
            let browser = try TmuxSession(width: 100, height: 24, arguments: ["--db", runner.databasePath])
            _ = try browser.waitFor(text: "Gamma")
            let refused = try runner.run(["restore", backup, "--yes"])
            #expect(refused.status == 1, "\(refused.error)")
            #expect(refused.error.contains("is open in the browser (pid "), "\(refused.error)")
            #expect(refused.error.contains("quit it and run restore again"))
            #expect(try Self.export(runner) == before)
            let readOnly = try TmuxSession(width: 100, height: 24, arguments: ["--db", runner.databasePath, "--readonly"])
            _ = try readOnly.waitFor(text: "Gamma")
            let both = try runner.run(["restore", backup, "--yes"])
            #expect(both.error.contains("the browser (pid ") && both.error.contains("a read-only browser (pid "), "\(both.error)")
            try browser.send("q")
            _ = try browser.waitForExit()
            let still = try runner.run(["restore", backup, "--yes"])
            #expect(still.status == 1 && still.error.contains("a read-only browser") && !still.error.contains("the browser"), "\(still.error)")
            try readOnly.send("q")
            _ = try readOnly.waitForExit()
        }
        let accepted = try runner.run(["restore", backup, "--yes"])
        #expect(accepted.status == 0, "\(accepted.error)")
        #expect(try !Self.export(runner).contains("Gamma"))
    }

    @Test("a syncing machine restored: it joins as a new machine, gets back what it and the others sent since the backup, sends again what the backup had not sent, loses (and counts) only what it never sent, and syncs on without a clash")
    func syncAfterRestore() throws {
        let server = try PostgresServer()
        let url = try server.newDatabase()
        let key = try SyncKey.generate()
        let secrets = ["SCROLLBACK_SYNC_URL": url, "SCROLLBACK_SYNC_KEY": key.text]
        let a = try BinaryRunner()
        #expect(try a.run(["import", try a.recordExport(titles: ["One", "Two", "Three", "Four", "Five"])]).status == 0)
        #expect(try a.run(["sync", "init"], environment: secrets).status == 0)
        let b = try BinaryRunner()
        #expect(try b.run(["sync", "init"], environment: secrets).status == 0)
        func id(_ title: String) throws -> String {
            let list = try a.json(["list", "--limit", "50"])["conversations"] as? [[String: Any]] ?? []
            return try #require(list.first { ($0["title"] as? String)?.hasPrefix(title) == true }?["id"] as? String)
        }
        let one = try id("One"), two = try id("Two"), three = try id("Three"), four = try id("Four")
        // Unsent when the backup is made, sent after it.
        #expect(try a.run(["rename", one, "One (before the backup, sent after)"]).status == 0)
        let backup = a.folder.file("a-backup.sqlite")
        #expect(try a.run(["backup", backup]).status == 0)
        #expect(try a.run(["sync"], environment: secrets).status == 0)
        // Sent after the backup.
        #expect(try a.run(["rename", two, "Two (after the backup, sent)"]).status == 0)
        #expect(try a.run(["sync"], environment: secrets).status == 0)
        // Never sent.
        #expect(try a.run(["rename", three, "Three (after the backup, never sent)"]).status == 0)
        // Another machine's.
        #expect(try b.run(["sync"], environment: secrets).status == 0)
        #expect(try b.run(["rename", four, "Four (on B)"]).status == 0)
        #expect(try b.run(["sync"], environment: secrets).status == 0)

        let restored = try a.run(["restore", backup, "--yes"])
        #expect(restored.status == 0, "\(restored.error)")
        #expect(restored.output.contains("syncs as a new machine"), "\(restored.output)")
        #expect(restored.output.contains("sends again the 1 change the backup had not sent"), "\(restored.output)")
        #expect(restored.output.contains("1 change made here since the backup was never sent"), "\(restored.output)")
        let json = try a.json(["sync", "status"])
        #expect(json["on"] as? Bool == true)

        let synced = try a.run(["sync"], environment: secrets)
        #expect(synced.status == 0, "\(synced.error)")
        let titles = try Self.export(a)
        #expect(titles.contains("One (before the backup, sent after)"))
        #expect(titles.contains("Two (after the backup, sent)"), "\(titles)")
        #expect(titles.contains("Four (on B)"))
        #expect(!titles.contains("never sent"))
        // New changes go through, to B, with no clash of numbers.
        #expect(try a.run(["rename", id("Five"), "Five (after the restore)"]).status == 0)
        let after = try a.run(["sync"], environment: secrets)
        #expect(after.status == 0, "\(after.error)")
        #expect(try b.run(["sync"], environment: secrets).status == 0)
        #expect(try a.run(["sync"], environment: secrets).status == 0)
        #expect(try Self.export(b).contains("Five (after the restore)"))
        #expect(try Self.export(a) == Self.export(b))
        // The kept copy still holds the change never sent.
        let kept = try #require(a.dataFiles().first { $0.contains(".before-restore-") && !$0.hasSuffix("-wal") })
        #expect(try Self.export(a, db: a.dataFolder + "/" + kept).contains("never sent"))
    }

    @Test("refused while a sync runs (one that waits on a server that does not answer); a command started while a restore holds the database waits for it, then reads it")
    func syncAndWaiting() throws {
        let server = try PostgresServer()
        let url = try server.newDatabase()
        let key = try SyncKey.generate()
        let runner = try BinaryRunner()
        #expect(try runner.run(["import", try runner.recordExport(titles: ["Alpha", "Beta"])]).status == 0)
        #expect(try runner.run(["sync", "init"], environment: ["SCROLLBACK_SYNC_URL": url, "SCROLLBACK_SYNC_KEY": key.text]).status == 0)
        let backup = runner.folder.file("b.sqlite")
        #expect(try runner.run(["backup", backup]).status == 0)
        // A server that takes the connection and never answers.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && listen(listener, 4) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        #expect(bound)
        let port = UInt16(bigEndian: address.sin_port)
        let hole = "host=127.0.0.1 port=\(port) dbname=scrollback user=nobody connect_timeout=30"
        let sync = try ChildProcess(
            BinaryRunner.binary.path, ["--db", runner.databasePath, "sync"],
            environment: TestEnvironment.variables(home: runner.folder.path, adding: ["SCROLLBACK_SYNC_URL": hole, "SCROLLBACK_SYNC_KEY": key.text]),
            output: "/dev/null", error: "/dev/null")
        defer {
            kill(sync.pid, SIGKILL)
            _ = sync.wait()
        }
        var refused = try runner.run(["restore", backup, "--yes"])
        for _ in 0..<50 where !refused.error.contains("a sync (pid") {
            usleep(100_000)
            refused = try runner.run(["restore", backup, "--yes"])
        }
        #expect(refused.status == 1 && refused.error.contains("is open in a sync (pid \(sync.pid))"), "\(refused.error)")
        kill(sync.pid, SIGKILL)
        _ = sync.wait()

        // While a restore holds the database, a command waits, then reads what is there.
        let held = try DatabaseUsers.takeExclusive(runner.databasePath)
        let waiting = try ChildProcess(
            BinaryRunner.binary.path, ["--db", runner.databasePath, "list"],
            environment: TestEnvironment.variables(home: runner.folder.path), output: runner.folder.file("list.txt"), error: "/dev/null")
        #expect(waiting.wait(timeout: 0.7) == nil, "a command opened the database while a restore held it")
        held.release()
        #expect(waiting.wait().status == 0)
        #expect(try String(contentsOfFile: runner.folder.file("list.txt"), encoding: .utf8).contains("Alpha"))
    }

    @Test("kill -9 of restore at 50 random moments: the database's name always holds a whole database (the one before or the backup), and the hidden copy a killed restore left is removed by the next")
    func killed() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["demo", "--count", "2000"]).status == 0)
        let small = runner.folder.file("small.sqlite")
        #expect(try runner.run(["backup", small]).status == 0)
        #expect(try runner.run(["demo", "--count", "1000", "--seed", "9"]).status == 0)
        let large = runner.folder.file("large.sqlite")
        #expect(try runner.run(["backup", large]).status == 0)
        var random = SeededRandom(seed: 25)
        var finished = 0
        for round in 0..<50 {
            let process = try ChildProcess(
                BinaryRunner.binary.path, ["--db", runner.databasePath, "restore", round % 2 == 0 ? small : large, "--yes"],
                environment: TestEnvironment.variables(home: runner.folder.path), output: "/dev/null", error: "/dev/null")
            usleep(UInt32(random.below(400_000)))
            kill(process.pid, SIGKILL)
            if process.wait().status == 0 { finished += 1 }
            let store = try Store.open(path: runner.databasePath, readOnly: true)
            let count = try store.conversations.count()
            #expect(count == 2000 || count == 3000, "round \(round): \(count)")
        }
        // Some were cut, some finished.
        #expect(finished > 0 && finished < 50, "\(finished) of 50 finished")
        let check = try runner.run(["check"])
        #expect(check.status == 0, "\(check.output) \(check.error)")
        for name in runner.dataFiles() where name.contains(".restore-") {
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-120)], ofItemAtPath: runner.dataFolder + "/" + name)
        }
        #expect(try runner.run(["restore", small, "--yes"]).status == 0)
        #expect(!runner.dataFiles().contains { $0.contains(".restore-") }, "\(runner.dataFiles())")
        #expect(try runner.run(["check"]).status == 0)
    }

    @Test("after a hostile pass: a symlinked database is restored in its own folder (the link stays, mode and owner kept); a browser opened through a link, one whose lock file was deleted, and another program's SQLite connection all refuse it; a foreign -wal is kept untouched; a FIFO as the lock, a folder as the database, a source named like a hidden copy; a report to a full disk says the restore was done")
    func hostile() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["import", try runner.recordExport(titles: ["Alpha", "Beta"])]).status == 0)
        let backup = runner.folder.file("b.sqlite")
        #expect(try runner.run(["backup", backup]).status == 0)
        #expect(try runner.run(["import", try runner.recordExport(titles: ["Alpha", "Beta", "Gamma"])]).status == 0)
        let real = runner.databasePath
        chmod(real, 0o640)
        #expect(chown(real, 65534, 65534) == 0)
        let alias = runner.folder.file("alias.sqlite")
        #expect(symlink(real, alias) == 0)

        // A browser through the link, and one whose lock file was then deleted: both refuse.
        do {
            let browser = try TmuxSession(width: 100, height: 24, arguments: ["--db", alias])
            _ = try browser.waitFor(text: "Gamma")
            let refused = try runner.run(["restore", backup, "--yes"])
            #expect(refused.status == 1 && refused.error.contains("is open in the browser (pid "), "\(refused.error)")
            unlink(real + ".in-use")
            let unlocked = try runner.run(["restore", backup, "--yes"])
            #expect(unlocked.status == 1 && unlocked.error.contains("is open in another program (pid "), "\(unlocked.error)")
            try browser.send("q")
            _ = try browser.waitForExit()
        }
        // Another program's connection (not scrollback's).
        let holder = try ChildProcess(
            "/usr/bin/env", ["python3", "-c", "import sqlite3, time; c = sqlite3.connect('\(real)'); c.execute('SELECT 1 FROM conversation').fetchall(); print('ready', flush=True); time.sleep(30)"],
            environment: ["PATH": "/usr/bin:/bin:/usr/local/bin"], output: runner.folder.file("python.out"), error: "/dev/null")
        for _ in 0..<100 where (try? String(contentsOfFile: runner.folder.file("python.out"), encoding: .utf8))?.contains("ready") != true { usleep(50_000) }
        let other = try runner.run(["restore", backup, "--yes"])
        #expect(other.status == 1 && other.error.contains("another program (pid \(holder.pid), python3)"), "\(other.error)")
        kill(holder.pid, SIGKILL)
        _ = holder.wait()

        // Through the link: the file it points at is replaced, in its own folder; the link stays.
        let restored = try runner.run(["--db", alias, "restore", backup, "--yes"], withDatabase: false)
        #expect(restored.status == 0, "\(restored.error)")
        var status = stat()
        #expect(lstat(alias, &status) == 0 && (status.st_mode & S_IFMT) == S_IFLNK)
        #expect(stat(real, &status) == 0 && status.st_mode & 0o777 == 0o640 && status.st_uid == 65534 && status.st_gid == 65534, "\(status.st_mode) \(status.st_uid)")
        #expect(try !Self.export(runner).contains("Gamma"))
        #expect(runner.dataFiles().contains { $0.hasPrefix("history.sqlite.before-restore-") })

        // A -wal of another database beside it: kept as it is with the replaced file, never merged.
        let other2 = try BinaryRunner()
        #expect(try other2.run(["import", try other2.recordExport(titles: ["Other"])]).status == 0)
        let script = "import sqlite3, os\nc = sqlite3.connect('\(other2.databasePath)', isolation_level=None)\nc.execute('PRAGMA wal_autocheckpoint = 0')\nc.execute('UPDATE conversation SET pinned = 1')\nos._exit(0)\n"
        #expect(try ChildProcess.run("/usr/bin/env", ["python3", "-c", script], environment: ["PATH": "/usr/bin:/bin:/usr/local/bin"]).status == 0)
        let foreignWAL = try Data(contentsOf: URL(fileURLWithPath: other2.databasePath + "-wal"))
        try foreignWAL.write(to: URL(fileURLWithPath: real + "-wal"))
        let mainBytes = try Data(contentsOf: URL(fileURLWithPath: real))
        let json = try runner.json(["restore", backup, "--yes"])
        let kept = try #require(json["kept"] as? String)
        #expect(try Data(contentsOf: URL(fileURLWithPath: kept)) == mainBytes)
        #expect(try Data(contentsOf: URL(fileURLWithPath: kept + "-wal")) == foreignWAL)
        #expect(!Store.hasWALContent(real))
        #expect(try runner.run(["check"]).status == 0)

        // A FIFO as the lock file: refused at once, naming it; a folder as the database.
        unlink(real + ".in-use")
        #expect(mkfifo(real + ".in-use", 0o600) == 0)
        let fifo = try runner.run(["restore", backup, "--yes"])
        #expect(fifo.status == 1 && fifo.error.contains("history.sqlite.in-use (the lock beside the database) is not a regular file"), "\(fifo.error)")
        unlink(real + ".in-use")
        let folderDB = runner.folder.file("folder.sqlite")
        try FileManager.default.createDirectory(atPath: folderDB, withIntermediateDirectories: false)
        let folder = try runner.run(["--db", folderDB, "restore", backup, "--yes"], withDatabase: false)
        #expect(folder.status == 1 && folder.error.contains("is not a regular file"), "\(folder.error)")

        // A source named like a hidden copy is read, not removed.
        let hidden = runner.dataFolder + "/.history.sqlite.restore-AAAAAA"
        try FileManager.default.copyItem(atPath: backup, toPath: hidden)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-600)], ofItemAtPath: hidden)
        #expect(try runner.run(["restore", hidden, "--yes"]).status == 0)
        #expect(FileManager.default.fileExists(atPath: hidden))

        // Its report to a full disk: the restore is done, and it says so.
        let full = try BinaryRunner.shell("\"$0\" --db \(real) restore \(backup) --yes --json", stdout: "/dev/full")
        #expect(full.status == 1 && full.error.contains("the database was restored (the one it replaced is kept at "), "\(full.error)")
    }
}
