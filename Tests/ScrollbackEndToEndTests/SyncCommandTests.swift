import Foundation
import ScrollbackModel
import ScrollbackStorage
import ScrollbackSync
import Testing
import TestSupport

/// `scrollback sync …` as a user runs it: the real binary, its secrets file, its output.
@Suite("sync commands, secrets and what they print", .serialized)
struct SyncCommandTests {
    static let chatgpt = "/work/shared/fixtures/chatgpt/conversations.json"

    var secretsPath: (BinaryRunner) -> String { { $0.folder.file(".config/scrollback/secrets") } }

    @Test("init keeps the secrets in a 0600 file in a 0700 folder whatever the umask, says so on a terminal only, and never prints them")
    func initAndSecrets() throws {
        let server = try PostgresServer()
        let url = try server.newDatabase() + " password=Hunter2-distinctive"
        let a = try BinaryRunner()
        #expect(try a.run(["import", a.recordExport(titles: ["First", "Second"])]).status == 0)
        // Through a shell with umask 000: the file and its folder are private all the same.
        let shell = try a.run(
            ["-c", "umask 000; exec \"$0\" --db \"$1\" sync init", BinaryRunner.binary.path, a.databasePath], input: url + "\n",
            withDatabase: false, program: "/bin/sh")
        #expect(shell.status == 0, "\(shell.error)")
        #expect(shell.output.contains("Sync is on") && shell.output.contains("Synced: sent"))
        // Standard input is a pipe: no notice about where secrets go (it is for a person).
        #expect(!shell.error.contains("keeping the sync secrets"))
        var status = stat()
        #expect(stat(secretsPath(a), &status) == 0 && status.st_mode & 0o777 == 0o600)
        #expect(stat(a.folder.file(".config/scrollback"), &status) == 0 && status.st_mode & 0o777 == 0o700)
        // The secrets never appear in any output.
        var outputs = [shell.output, shell.error]
        for arguments in [["sync"], ["sync", "status"], ["sync", "status", "--json"], ["stats"], ["sync", "key", "show"]] {
            let result = try a.run(arguments)
            outputs += [result.output, result.error]
        }
        let key = try #require(
            try String(contentsOfFile: secretsPath(a), encoding: .utf8).split(separator: "\n").first { $0.hasPrefix("key=") }?.dropFirst(4))
        for output in outputs {
            #expect(!output.contains("Hunter2"), "\(output)")
            #expect(!output.contains(key), "\(output)")
        }
        // key show refuses a pipe; --force writes it.
        let refused = try a.run(["sync", "key", "show"])
        #expect(refused.status == 1 && refused.error.contains("--force"))
        let shown = try a.run(["sync", "key", "show", "--force"])
        #expect(shown.status == 0 && shown.output == key + "\n")
        // status --json says where the secrets come from, and nothing of them.
        let json = try a.json(["sync", "status"])
        #expect(json["on"] as? Bool == true)
        #expect((json["secrets"] as? [String: Any])?["key"] as? String == secretsPath(a))
        #expect((json["server"] as? [String: Any])?["reachable"] as? Bool == true)
        // A second machine: init without a key is told to import one.
        let b = try BinaryRunner()
        let noKey = try b.run(["sync", "init"], input: url + "\n")
        #expect(noKey.status == 1 && noKey.error.contains("sync key import"), "\(noKey.error)")
        #expect(!noKey.error.contains("Hunter2"))
        // A wrong key is refused when imported, and nothing is kept.
        // A wrong key (no server known yet to check it against) is kept, and init refuses it
        // before anything is written anywhere.
        #expect(try b.run(["sync", "key", "import"], input: try SyncKey.generate().text + "\n").status == 0)
        let opsBefore = try server.psql(url.replacingOccurrences(of: " password=Hunter2-distinctive", with: ""), "SELECT count(*) FROM scrollback.op")
        let wrong = try b.run(["sync", "init"], input: url + "\n")
        #expect(wrong.status == 1 && wrong.error.contains("does not open the history"), "\(wrong.error)")
        #expect(try b.run(["sync", "status"]).output.contains("Sync is off"))
        #expect(try server.psql(url.replacingOccurrences(of: " password=Hunter2-distinctive", with: ""), "SELECT count(*) FROM scrollback.op") == opsBefore)
        let garbage = try b.run(["sync", "key", "import"], input: "not a key\n")
        #expect(garbage.status == 1 && garbage.error.contains("44 characters"))
        let zeros = try b.run(["sync", "key", "import"], input: Data(count: 32).base64EncodedString() + "\n")
        #expect(zeros.status == 1 && zeros.error.contains("32 equal bytes"), "\(zeros.error)")
        #expect(try b.run(["sync", "key", "import"], input: key + "\n").status == 0)
        let joined = try b.run(["sync", "init"], input: url + "\n")
        #expect(joined.status == 0, "\(joined.error)")
        #expect(joined.output.contains("received 6") || joined.output.contains("received"), "\(joined.output)")
        let list = try b.run(["list"])
        #expect(list.output.contains("First") && list.output.contains("Second"))
        // init again on a machine that syncs: a new connection string for the same history.
        let replaced = try b.run(["sync", "init"], input: url.replacingOccurrences(of: "Hunter2-distinctive", with: "Other-pass") + "\n")
        #expect(replaced.status == 0 && replaced.output.contains("new connection string is kept"), "\(replaced.error)")
        #expect(!replaced.output.contains("Other-pass") && !replaced.error.contains("Other-pass"))
        // A key that cannot be checked (the server is down) does not replace one that works.
        try server.stop()
        let unchecked = try b.run(["sync", "key", "import"], input: try SyncKey.generate().text + "\n")
        #expect(unchecked.status == 1 && unchecked.error.contains("the stored key is kept"), "\(unchecked.error)")
        try server.restart()
        #expect(try b.run(["sync"]).status == 0)
        // --readonly refuses what writes, before anything.
        let readOnly = try b.run(["--readonly", "sync", "key", "import"], input: key + "\n")
        #expect(readOnly.status == 1 && readOnly.error.contains("--readonly"))
        // Off keeps the machine: the changes made meanwhile are noted, and init sends them
        // as this machine's, newer than what the server had.
        let first = try #require(try b.run(["list", "--json"]).output.split(separator: "\"").drop { $0 != "id" }.dropFirst(2).first)
        #expect(try b.run(["rename", String(first), "waiting"]).status == 0)
        let paused = try b.run(["sync", "off"])
        #expect(paused.status == 0 && paused.output.contains("local data is kept") && paused.output.contains("(1 so far)"), "\(paused.output)")
        #expect(try b.run(["rename", String(first), "renamed while off"]).status == 0)
        let offSync = try b.run(["sync"])
        #expect(offSync.status == 1 && offSync.error.contains("sync init"))
        #expect(try b.run(["sync", "status"]).output.contains("2 so far"))
        #expect(try b.json(["sync", "status"])["on"] as? Bool == false)
        // Resuming against a server without the history (a mistyped database): refused,
        // nothing kept, and the right one still works.
        let empty = try server.newDatabase()
        let elsewhere = try b.run(["sync", "init"], input: empty + "\n")
        #expect(elsewhere.status == 1 && elsewhere.error.contains("this machine"), "\(elsewhere.error)")
        #expect(try !String(contentsOfFile: secretsPath(b), encoding: .utf8).contains(empty))
        let resumed = try b.run(["sync", "init"], input: url + "\n")
        #expect(resumed.status == 0 && resumed.output.contains("Sync is on again") && resumed.output.contains("Synced: sent 2"), "\(resumed.output) \(resumed.error)")
        #expect(try b.run(["list"]).output.contains("renamed while off"))
        #expect(try a.run(["sync"]).status == 0)
        #expect(try a.run(["list"]).output.contains("renamed while off"))
        // Off --force forgets the machine; the data stays, and sync then says it is off.
        #expect(try b.run(["rename", String(first), "never sent"]).status == 0)
        let off = try b.run(["sync", "off", "--force"])
        #expect(off.status == 0 && off.output.contains("local data is kept") && off.output.contains("1 change was not sent"), "\(off.output)")
        #expect(try b.run(["list"]).output.contains("First"))
        let afterOff = try b.run(["sync"])
        #expect(afterOff.status == 1 && afterOff.error.contains("sync init"))
    }

    @Test("the secrets file is replaced whole, and refused as a symlink, readable by others, or not a file")
    func secretsFileRefusals() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("config/scrollback/secrets")
        let file = FileSecrets(path: path)
        try file.write("first", for: .url)
        var before = stat()
        #expect(stat(path, &before) == 0)
        try file.write("Zm9v", for: .key)
        var after = stat()
        #expect(stat(path, &after) == 0)
        // Atomic replacement: a new file (another inode) took the old one's place, whole.
        #expect(before.st_ino != after.st_ino)
        #expect(try file.read(.url) == "first" && file.read(.key) == "Zm9v")
        // No temporary file is left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.file("config/scrollback")) == ["secrets"])
        // Readable by the group: refused, with what to do.
        chmod(path, 0o640)
        #expect { try file.read(.url) } throws: { "\($0)".contains("chmod 600") }
        chmod(path, 0o600)
        // A symlink in its place: refused, never followed.
        try FileManager.default.moveItem(atPath: path, toPath: folder.file("elsewhere"))
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: folder.file("elsewhere"))
        #expect { try file.read(.url) } throws: { "\($0)".contains("symlink") }
        // Writing replaces the link with a file; the link's target is untouched.
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        #expect { try file.read(.url) } throws: { "\($0)".contains("not a regular file") }
        // A line break in a secret is refused.
        let other = FileSecrets(path: folder.file("other/secrets"))
        #expect { try other.write("two\nlines", for: .url) } throws: { "\($0)".contains("one line") }
    }

    @Test("sslmode=require over TCP with TLS and a password; a wrong password and a plain connection are refused with one clear line")
    func tls() throws {
        let server = try PostgresServer(tls: true)
        _ = try server.psql(server.socket + " dbname=postgres", "CREATE DATABASE tls")
        let good = "host=127.0.0.1 port=\(server.port) user=postgres dbname=tls sslmode=require password=\(PostgresServer.password)"
        let runner = try BinaryRunner()
        #expect(try runner.run(["import", runner.recordExport(titles: ["Over TLS"])]).status == 0)
        let wrongPassword = try runner.run(["sync", "init"], input: good.replacingOccurrences(of: PostgresServer.password, with: "nope") + "\n")
        #expect(wrongPassword.status == 1)
        #expect(wrongPassword.error.contains("refused") && !wrongPassword.error.contains("nope"), "\(wrongPassword.error)")
        #expect(wrongPassword.error.split(separator: "\n").count == 1)
        // Without TLS the server (hostssl only) says no: so the working one below is TLS.
        let plain = try runner.run(["sync", "init"], input: good.replacingOccurrences(of: "sslmode=require", with: "sslmode=disable") + "\n")
        #expect(plain.status == 1 && plain.error.contains("refused"), "\(plain.error)")
        let result = try runner.run(["sync", "init"], input: good + "\n")
        #expect(result.status == 0, "\(result.error)")
        #expect(try server.psql(server.socket + " dbname=tls", "SELECT count(*) FROM scrollback.op").hasPrefix("4"))
    }

    @Test("after init, the role or the database gone from the server: sync and sync status say it refuses, never that it cannot be reached")
    func roleOrDatabaseGone() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["import", runner.recordExport(titles: ["Kept"])]).status == 0)
        let server = try PostgresServer()
        _ = try server.psql(server.socket + " dbname=postgres", "CREATE ROLE syncer LOGIN")
        _ = try server.psql(server.socket + " dbname=postgres", "CREATE DATABASE gone OWNER syncer")
        let url = "host=\(server.folder) user=syncer dbname=gone" + (server.port == 0 ? "" : " port=\(server.port)")
        #expect(try runner.run(["sync", "init"], input: url + "\n").status == 0)
        for (sql, what) in [("ALTER ROLE syncer RENAME TO someone", "role \"syncer\" does not exist"),
            ("ALTER ROLE someone RENAME TO syncer; ALTER DATABASE gone RENAME TO elsewhere", "database \"gone\" does not exist")]
        {
            for statement in sql.split(separator: ";") { _ = try server.psql(server.socket + " dbname=postgres", String(statement)) }
            let sync = try runner.run(["sync"])
            #expect(sync.status == 1 && sync.error.contains("refused the connection") && sync.error.contains(what), "\(sync.error)")
            #expect(!sync.error.contains("cannot reach") && sync.error.split(separator: "\n").count == 1, "\(sync.error)")
            let status = try runner.run(["sync", "status"])
            #expect(status.output.contains("server:     answers, but refuses"), "\(status.output)")
            #expect(!status.output.contains("cannot reach"), "\(status.output)")
        }
        #expect(try runner.run(["list"]).output.contains("Kept"))
    }

    @Test("bad connection strings and a server that is down: one line, what to do, nothing kept, nothing changed")
    func failures() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["import", runner.recordExport(titles: ["Kept"])]).status == 0)
        let garbage = try runner.run(["sync", "init"], input: "host=\u{1B}[31mred port=notanumber\n")
        #expect(garbage.status == 1 && !garbage.error.contains("\u{1B}"), "\(garbage.error)")
        #expect(garbage.error.split(separator: "\n").count == 1)
        let down = try runner.run(["sync", "init"], input: "host=/nonexistent-folder user=postgres dbname=x\n")
        #expect(down.status == 1 && down.error.contains("cannot reach") && down.error.contains("run `scrollback sync init` again"), "\(down.error)")
        #expect(!FileManager.default.fileExists(atPath: secretsPath(runner)))
        // A server that answers, without the database named: not a network problem.
        let server = try PostgresServer()
        let missing = try runner.run(["sync", "init"], input: server.socket + " dbname=no_such_database\n")
        #expect(missing.status == 1 && missing.error.contains("refused the connection") && missing.error.contains("database name"), "\(missing.error)")
        let noRole = try runner.run(["sync", "init"], input: server.socket + " user=no_such_role dbname=postgres\n")
        #expect(noRole.status == 1 && noRole.error.contains("refused the connection") && noRole.error.contains("role \"no_such_role\""), "\(noRole.error)")
        #expect(!noRole.error.contains("cannot reach") && !noRole.error.contains("FATAL"), "\(noRole.error)")
        // Other ways a server that answers keeps a user out: refused, never "cannot reach"
        // (from the fifth hostile round).
        let admin = server.socket + " dbname=postgres"
        _ = try server.psql(admin, "CREATE ROLE nologin_r NOLOGIN")
        _ = try server.psql(admin, "CREATE ROLE conlim LOGIN CONNECTION LIMIT 0")
        _ = try server.psql(admin, "CREATE ROLE plain_r LOGIN")
        _ = try server.psql(admin, "CREATE DATABASE closed")
        _ = try server.psql(admin, "REVOKE CONNECT ON DATABASE closed FROM PUBLIC")
        _ = try server.psql(admin, "CREATE DATABASE nocreate")
        _ = try server.psql(admin, "REVOKE CREATE ON DATABASE nocreate FROM PUBLIC")
        let refusals = [
            (" user=nologin_r dbname=postgres", "not permitted to log in"), (" user=plain_r dbname=closed", "permission denied for database"),
            (" dbname=template0", "not currently accepting connections"), (" user=conlim dbname=postgres", "too many connections"),
            (" dbname=postgres options='-c statement_timeout=abc'", "invalid value for parameter"),
        ]
        for (words, said) in refusals {
            let result = try runner.run(["sync", "init"], input: server.socket + words + "\n")
            #expect(result.status == 1 && result.error.contains("refused the connection") && result.error.contains(said), "\(words): \(result.error)")
            #expect(!result.error.contains("cannot reach") && !result.error.contains("not one libpq reads"), "\(words): \(result.error)")
        }
        // A user who may not create the schema on a first init: told so, not that its rights "were changed".
        let noCreate = try runner.run(["sync", "init"], input: server.socket + " user=plain_r dbname=nocreate\n")
        #expect(noCreate.status == 1 && noCreate.error.contains("may not create the schema `scrollback`"), "\(noCreate.error)")
        #expect(!noCreate.error.contains("were changed"), "\(noCreate.error)")
        #expect(try runner.run(["sync", "status"]).output.contains("Sync is off"))
        let status = try runner.run(["sync", "status"])
        #expect(status.status == 0 && status.output.contains("Sync is off"))
        // Passwords in malformed strings are never repeated; the string is called malformed.
        for url in ["postgresql://syncer:Leak%zzPw@127.0.0.1:5/db", "postgresql://syncer:WrongPw99@[::1:5/db", "host=x password='Sec ret' port=abc"] {
            let result = try runner.run(["sync", "init"], input: url + "\n")
            #expect(result.status == 1 && result.error.contains("not one libpq reads"), "\(result.error)")
            for secret in ["Leak", "zzPw", "WrongPw99", "Sec ret"] { #expect(!result.error.contains(secret), "\(result.error)") }
        }
        // A password typed without its `password=`, or in the wrong place: libpq quotes the
        // word it cannot read; the word goes, the option it was given to stays named.
        let misplaced = [
            ("host=h SECRETPW", "SECRETPW"), ("SECRETPW=x", "SECRETPW"), ("host=h port=SECRETPW", "SECRETPW"),
            ("postgresql://u@h/db?sslmode=SECRETPW", "SECRETPW"), ("postgresql://u@h:99999999/db", "99999999"),
        ]
        for (words, secret) in misplaced {
            let result = try runner.run(["sync", "init"], input: words + "\n")
            #expect(result.status == 1 && result.error.contains("not one libpq reads"), "\(words): \(result.error)")
            #expect(!result.error.contains(secret) && !result.error.contains("cannot reach"), "\(words): \(result.error)")
        }
        let port = try runner.run(["sync", "init"], input: "host=h port=SECRETPW\n")
        #expect(port.error.contains("\"port\""), "\(port.error)")
        // A secret command that fails says so, with its status.
        try FileManager.default.createDirectory(atPath: runner.folder.file(".config/scrollback"), withIntermediateDirectories: true)
        try "[sync]\nsecret_command = \"exit 3 # %s\"\n".write(toFile: runner.folder.file(".config/scrollback/config.toml"), atomically: false, encoding: .utf8)
        let failing = try runner.run(["sync", "status"])
        #expect(failing.output.contains("secret_command failed for 'url' (exit status 3)"), "\(failing.output)")
        #expect(try runner.run(["list"]).output.contains("Kept"))
        // A secret command without %s is not used, and "no server" says why.
        try "[sync]\nsecret_command = \"pass show scrollback\"\n".write(
            toFile: runner.folder.file(".config/scrollback/config.toml"), atomically: false, encoding: .utf8)
        let noPlaceholder = try runner.run(["sync", "key", "show", "--force"])
        #expect(noPlaceholder.status == 1 && noPlaceholder.error.contains("secret_command is not used"), "\(noPlaceholder.error)")
        // Flags where they mean nothing are refused, not ignored.
        for arguments in [["sync", "key", "show", "--json", "--force"], ["sync", "init", "--force"], ["sync", "off", "--json"]] {
            let result = try runner.run(arguments)
            #expect(result.status == 2 && result.error.contains("goes with"), "\(arguments): \(result.error)")
        }
        // sync --readonly is refused before anything.
        let readOnly = try runner.run(["--readonly", "sync"])
        #expect(readOnly.status != 0)
    }

    @Test("kill -9 of scrollback sync at 50 random moments, on both sides: afterwards both converge and check is clean")
    func killNine() throws {
        let server = try PostgresServer()
        let url = try server.newDatabase()
        let a = try BinaryRunner()
        let b = try BinaryRunner()
        #expect(try a.run(["demo", "--count", "600", "--seed", "4"]).status == 0)
        #expect(try a.run(["sync", "init"], input: url + "\n").status == 0)
        let key = try a.run(["sync", "key", "show", "--force"]).output
        #expect(try b.run(["sync", "key", "import"], input: key).status == 0)
        #expect(try b.run(["demo", "--count", "300", "--seed", "9"]).status == 0)
        #expect(try b.run(["sync", "init"], input: url + "\n").status == 0)
        var random = SeededRandom(seed: 12)
        for round in 0..<50 {
            // Changes on both sides between the kills.
            let side = round % 2 == 0 ? a : b
            let ids = try side.run(["list", "--limit", "3", "--json"])
            if let object = try JSONSerialization.jsonObject(with: Data(ids.output.utf8)) as? [String: Any],
                let rows = object["conversations"] as? [[String: Any]], let id = rows.last?["id"] as? String
            {
                _ = try side.run(round % 3 == 0 ? ["delete", id, "--yes"] : ["rename", id, "round \(round)"])
            }
            _ = try side.run(["demo", "--count", "\(600 + round * 5)", "--seed", "4"])
            try side.kill(["sync"], afterMicroseconds: UInt32(random.next() % 120_000))
        }
        for _ in 0..<2 {
            #expect(try a.run(["sync"]).status == 0)
            #expect(try b.run(["sync"]).status == 0)
        }
        let exportA = try a.run(["export", "--format", "jsonl"]).output
        let exportB = try b.run(["export", "--format", "jsonl"]).output
        #expect(exportA == exportB)
        if exportA != exportB {
            try exportA.write(toFile: "/tmp/kill-a.jsonl", atomically: false, encoding: .utf8)
            try exportB.write(toFile: "/tmp/kill-b.jsonl", atomically: false, encoding: .utf8)
        }
        #expect(!exportA.isEmpty)
        #expect(try a.run(["check"]).status == 0 && b.run(["check"]).status == 0)
    }
}

extension BinaryRunner {
    /// Runs `scrollback --db <temp> ARGS` and kills it with SIGKILL after `delay`.
    func kill(_ arguments: [String], afterMicroseconds delay: UInt32) throws {
        let process = try ChildProcess(
            Self.binary.path, ["--db", databasePath] + arguments, environment: TestEnvironment.variables(home: folder.path),
            output: "/dev/null", error: "/dev/null")
        usleep(delay)
        Glibc.kill(process.pid, SIGKILL)
        _ = process.wait()
    }
}

@Suite("The browser syncs in the background", .serialized)
struct BrowserSyncTests {
    @Test("the footer says synced, then what waits when the server is down; a rename in the browser reaches the other machine; keys never wait")
    func footer() throws {
        let server = try PostgresServer()
        let url = try server.newDatabase()
        let a = try BinaryRunner()
        let b = try BinaryRunner()
        #expect(try a.run(["import", a.recordExport(titles: ["Alpha", "Beta \u{1B}[31mred"])]).status == 0)
        #expect(try a.run(["sync", "init"], input: url + "\n").status == 0)
        #expect(try b.run(["sync", "key", "import"], input: a.run(["sync", "key", "show", "--force"]).output).status == 0)
        #expect(try b.run(["sync", "init"], input: url + "\n").status == 0)
        let tmux = try TmuxSession(
            width: 80, height: 12, arguments: ["--db", a.databasePath], environment: ["HOME": a.folder.path])
        try tmux.waitFor(text: "synced just now")
        // Hostile text from the other machine arrives sanitized.
        let raw = try tmux.tmux(["capture-pane", "-p", "-e", "-t", "main"])
        #expect(!raw.contains("\u{1B}[31mred"))
        // A rename in the browser goes up by itself a moment later.
        try tmux.send("g")
        try tmux.send("r")
        try tmux.send("C-u")
        try tmux.type("Renamed in the browser")
        try tmux.send("Enter")
        try tmux.waitFor(text: "Renamed in the browser")
        // The next key clears "Renamed — u undoes" from the footer.
        try tmux.send("k")
        try tmux.waitFor(text: "1 to send")
        try tmux.waitFor("the rename sent", timeout: 20) { screen in
            (screen.last ?? "").contains("synced") && !(screen.last ?? "").contains("to send")
        }
        #expect(try b.run(["sync"]).status == 0)
        #expect(try b.run(["list"]).output.contains("Renamed in the browser"))
        // The server goes away: the next change waits, and the footer says so.
        try server.stop()
        try tmux.send("p")
        try tmux.waitFor(text: "Pinned")
        // Keys still act at once, whatever sync is doing.
        try tmux.send("j")
        try tmux.waitFor(text: "2 of 2")
        try tmux.waitFor(text: "offline, 1 to send", timeout: 20)
        try server.restart()
        // Sync turned off meanwhile (once the browser's own sync lets go of the database):
        // the next change is noted, and the footer says sync is off.
        var off = try a.run(["sync", "off"])
        for _ in 0..<20 where off.status != 0 {
            usleep(500_000)
            off = try a.run(["sync", "off"])
        }
        #expect(off.status == 0, "\(off.error)")
        try tmux.send("p")
        try tmux.waitFor(text: "Pinned")
        try tmux.send("k")  // clears "Pinned — u undoes" from the footer
        try tmux.waitFor(text: "sync is off", timeout: 20)
        try tmux.send("q")
        #expect(try tmux.waitForExit() == 0)
        // What waited goes when sync is on again.
        let resumed = try a.run(["sync", "init"], input: url + "\n")
        #expect(resumed.output.contains("sent 2"), "\(resumed.output) \(resumed.error)")
    }
}
