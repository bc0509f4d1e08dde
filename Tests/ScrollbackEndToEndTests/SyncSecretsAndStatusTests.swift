import Foundation
import ScrollbackModel
import ScrollbackSync
import Testing
import TestSupport

/// What a hostile tester found off the tested paths of sync's secrets and status: a
/// secret_command that hangs or fails, a status that guessed at a server it never asked,
/// a failure nobody but `sync` itself said, arguments echoed back with their passwords.
@Suite("sync's secret_command, status lines and arguments", .serialized)
struct SyncSecretsAndStatusTests {
    static func config(_ runner: BinaryRunner, _ text: String) throws {
        let folder = runner.folder.file(".config/scrollback")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try text.write(toFile: folder + "/config.toml", atomically: false, encoding: .utf8)
    }

    /// A machine with sync on, its secrets in the file.
    static func syncing(_ server: PostgresServer) throws -> BinaryRunner {
        let runner = try BinaryRunner()
        #expect(try runner.run(["import", runner.recordExport(titles: ["Alpha", "Beta"])]).status == 0)
        let started = try runner.run(["sync", "init"], input: try server.newDatabase() + "\n")
        #expect(started.status == 0, "\(started.error)")
        return runner
    }

    /// Whether the process `pid` is gone (or a zombie nobody waits for: it runs no more).
    static func gone(_ pid: pid_t) -> Bool {
        guard kill(pid, 0) == 0 else { return true }
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
    }

    @Test("a secret_command that never finishes is stopped at its time limit with everything it started, named, and said once; the secrets file is used instead, or the command fails with that line")
    func hangingCommand() throws {
        let server = try PostgresServer()
        let runner = try Self.syncing(server)
        let pids = runner.folder.file("pids")
        // It starts a child that outlives a plain SIGTERM to the shell, as a pinentry would.
        try Self.config(
            runner,
            """
            [sync]
            secret_command = ": %s; sleep 300 & echo $! >> \(pids); wait"
            secret_timeout = 1
            """)
        for arguments in [["sync", "status"], ["sync"], ["sync", "status", "--json"]] {
            let result = try runner.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.error)")
            let said = arguments == ["sync"] ? result.error : result.output
            let notes = said.components(separatedBy: "did not finish in 1 s").count - 1
            #expect(notes == 1, "\(arguments): \(said)")
            #expect(said.contains("read from") && said.contains("secrets"), "\(said)")
        }
        let started = try String(contentsOfFile: pids, encoding: .utf8).split(separator: "\n").compactMap { pid_t($0) }
        // Once per run: the command that timed out for the url is not waited for again for the key.
        #expect(started.count == 3, "\(started)")
        for pid in started { #expect(Self.gone(pid), "the command's child \(pid) still runs") }
        // A command that answers and leaves something running in a session of its own
        // (setsid): its answer counts; it is not waited for until the time limit.
        try Self.config(
            runner,
            """
            [sync]
            secret_command = ": %s; setsid sleep 300 > /dev/null 2>&1 < /dev/null & echo $! >> \(pids); cat \(runner.folder.file(".config/scrollback/secrets")) | sed -n 's/^%s=//p'"
            secret_timeout = 1
            """)
        let detached = try runner.run(["sync"])
        #expect(detached.status == 0 && !detached.error.contains("did not finish"), "\(detached.error)")
        for pid in try String(contentsOfFile: pids, encoding: .utf8).split(separator: "\n").compactMap({ pid_t($0) }).dropFirst(2) {
            kill(pid, SIGKILL)
        }
        // Without the file, the timeout is the answer: one line, exit 1.
        try Self.config(
            runner,
            """
            [sync]
            secret_command = ": %s; sleep 300 & echo $! >> \(pids); wait"
            secret_timeout = 1
            """)
        try FileManager.default.removeItem(atPath: runner.folder.file(".config/scrollback/secrets"))
        let failed = try runner.run(["sync"])
        #expect(failed.status == 1 && failed.error.contains("did not finish in 1 s") && failed.error.contains("secret_timeout"), "\(failed.error)")
        #expect(failed.error.split(separator: "\n").count == 1, "\(failed.error)")
    }

    @Test("a failing secret_command is said once, its standard error made safe; the secrets file is used instead; a missing program is named as such")
    func failingCommand() throws {
        let server = try PostgresServer()
        let runner = try Self.syncing(server)
        try Self.config(
            runner,
            """
            [sync]
            secret_command = "printf 'no entry for %s \\\\033[31m\\\\033]0;title\\\\007 in the store\\\\nmore\\\\n' >&2; exit 3"
            """)
        for arguments in [["sync", "status"], ["sync"], ["sync", "status", "--json"]] {
            let result = try runner.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.error)")
            // Said once: by status among its lines, by the others on standard error.
            let said = arguments == ["sync"] ? result.error : result.output
            #expect(said.components(separatedBy: "failed for").count == 2, "\(arguments): \(said)")
            #expect(said.contains("exit status 3: no entry for url"), "\(said)")
            #expect(!said.contains("\u{1B}") && !said.contains("\u{07}"), "\(said)")
            #expect(!said.contains("more"), "only its first line: \(said)")
        }
        try Self.config(runner, "[sync]\nsecret_command = \"no-such-password-manager %s\"\n")
        let missing = try runner.run(["sync", "status"])
        #expect(missing.output.contains("its program was not found"), "\(missing.output)")
        // One the config cannot use (no %s) is said by every sync command, not only by config --check.
        try Self.config(runner, "[sync]\nsecret_command = \"pass show scrollback\"\n")
        let unused = try runner.run(["sync"])
        #expect(unused.status == 0 && unused.error.contains("the config's secret_command is not used"), "\(unused.error)")
        let status = try runner.run(["sync", "status"])
        #expect(status.output.contains("secrets:    the config's secret_command is not used"), "\(status.output)")
        // Another key's problem is not the secret_command's; a fetch_attachments it cannot use is said as its own.
        try Self.config(runner, "[sync]\nintervall = 5\nfetch_attachments = \"sometimes\"\n")
        let other = try runner.run(["sync"])
        #expect(other.status == 0 && !other.error.contains("secret_command is not used"), "\(other.error)")
        #expect(other.error.contains("the config's fetch_attachments is not used") && other.error.contains("\"always\""), "\(other.error)")
    }

    @Test("status never guesses at a server it did not ask: secrets it cannot read (mode 644, a symlink, a FIFO) say so once, and the server line says it was not contacted")
    func statusWithoutSecrets() throws {
        let server = try PostgresServer()
        let runner = try Self.syncing(server)
        let file = runner.folder.file(".config/scrollback/secrets")
        try server.stop()
        let saved = try String(contentsOfFile: file, encoding: .utf8)
        func damage(_ how: String) throws {
            try? FileManager.default.removeItem(atPath: file)
            switch how {
            case "readable":
                try saved.write(toFile: file, atomically: false, encoding: .utf8)
                chmod(file, 0o644)
            case "symlink":
                let target = runner.folder.file("elsewhere")
                try saved.write(toFile: target, atomically: false, encoding: .utf8)
                chmod(target, 0o600)
                try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: target)
            default:
                #expect(mkfifo(file, 0o600) == 0)
            }
        }
        for how in ["readable", "symlink", "fifo"] {
            try damage(how)
            let status = try runner.run(["sync", "status"])
            #expect(status.status == 0, "\(how): \(status.error)")
            let lines = status.output.split(separator: "\n").map(String.init)
            #expect(lines.contains { $0.hasPrefix("server:     not contacted: the secrets cannot be read") }, "\(how): \(status.output)")
            #expect(!status.output.contains("answers, but") && !status.output.contains("reachable"), "\(how): \(status.output)")
            #expect(lines.filter { $0.hasPrefix("secrets:") }.count == 1, "\(how): \(status.output)")
            let json = try runner.run(["sync", "status", "--json"])
            #expect(json.output.hasSuffix("}\n"), "\(how): the JSON ends with a line break")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
            let serverJSON = try #require(object["server"] as? [String: Any])
            #expect(serverJSON["contacted"] as? Bool == false && serverJSON["reachable"] as? Bool == false)
            #expect(((object["secrets"] as? [String: Any])?["problems"] as? [String])?.count == 1)
        }
    }

    @Test("a sync that fails is said by status and the browser's footer, with what it said and since when, until one completes: a server that rejects every insert, one that is down")
    func failureStands() throws {
        let server = try PostgresServer()
        let url = try server.newDatabase()
        let runner = try BinaryRunner()
        #expect(try runner.run(["import", runner.recordExport(titles: ["Alpha", "Beta"])]).status == 0)
        #expect(try runner.run(["sync", "init"], input: url + "\n").status == 0)
        #expect(try runner.json(["sync", "status"])["failure"] == nil)
        // The server rejects every insert from now on.
        _ = try server.psql(
            url,
            """
            CREATE FUNCTION public.refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'inserts are closed for maintenance'; END $$;
            CREATE TRIGGER refuse BEFORE INSERT ON scrollback.op FOR EACH ROW EXECUTE FUNCTION public.refuse();
            """)
        let id = try #require(try runner.run(["list", "--json"]).output.split(separator: "\"").drop { $0 != "id" }.dropFirst(2).first)
        #expect(try runner.run(["rename", String(id), "Waiting to go"]).status == 0)
        let refused = try runner.run(["sync"])
        #expect(refused.status == 1 && refused.error.contains("inserts are closed for maintenance"), "\(refused.error)")
        let status = try runner.run(["sync", "status"])
        let failing = try #require(status.output.split(separator: "\n").first { $0.hasPrefix("failing:") }, "\(status.output)")
        #expect(failing.contains("since") && failing.contains("inserts are closed for maintenance"), "\(failing)")
        let json = try runner.json(["sync", "status"])
        let failure = try #require(json["failure"] as? [String: Any])
        #expect((failure["message"] as? String)?.contains("inserts are closed") == true)
        let since = try #require(failure["since"] as? String)
        // A second failure keeps when they began.
        #expect(try runner.run(["sync"]).status == 1)
        #expect((try runner.json(["sync", "status"])["failure"] as? [String: Any])?["since"] as? String == since)
        // The browser says it from its first frame: what went wrong, and what waits.
        let tmux = try TmuxSession(width: 200, height: 10, arguments: ["--db", runner.databasePath], environment: ["HOME": runner.folder.path])
        try tmux.waitFor(text: "sync failed")
        try tmux.waitFor(text: "inserts are closed for maintenance")
        try tmux.waitFor(text: "1 to send")
        try tmux.send("q")
        #expect(try tmux.waitForExit() == 0)
        // Fixed on the server: the next sync completes, and nothing is said to be failing.
        _ = try server.psql(url, "DROP TRIGGER refuse ON scrollback.op;")
        #expect(try runner.run(["sync"]).status == 0)
        #expect(try runner.json(["sync", "status"])["failure"] == nil)
        #expect(try !runner.run(["sync", "status"]).output.contains("failing:"))
        // A server that is down is said the same way, once.
        try server.stop()
        #expect(try runner.run(["sync"]).status == 1)
        let down = try runner.run(["sync", "status"]).output
        #expect(down.contains("failing:    since") && down.contains("server:     offline, as the last sync found"), "\(down)")
        #expect(down.components(separatedBy: "cannot reach the sync server").count == 2, "\(down)")
        // A sync that cannot start for want of its secrets failed too.
        try server.restart()
        #expect(try runner.run(["sync"]).status == 0)
        try FileManager.default.removeItem(atPath: runner.folder.file(".config/scrollback/secrets"))
        #expect(try runner.run(["sync"]).status == 1)
        let missing = try runner.run(["sync", "status"]).output
        #expect(missing.contains("failing:") && missing.contains("no sync server here"), "\(missing)")
    }

    @Test("arguments of sync commands are never echoed: a connection string with its password, a key; a typo gets the command meant")
    func argumentsNeverEchoed() throws {
        let runner = try BinaryRunner()
        let key = try SyncKey.generate().text
        let cases: [([String], String)] = [
            (["sync", "init", "postgresql://me:hunter2@db.example/history"], "`sync init` takes no argument"),
            (["sync", "key", "import", key], "`sync key import` takes no argument"),
            (["sync", "postgresql://me:hunter2@db.example/history"], "unknown sync command (1 word, not shown)"),
            (["sync", "key", "show", "hunter2"], "`sync key show` takes no argument"),
        ]
        for (arguments, expected) in cases {
            let result = try runner.run(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.error.contains(expected), "\(arguments): \(result.error)")
            #expect(!result.error.contains("hunter2") && !result.error.contains(key), "\(arguments): \(result.error)")
            #expect(result.error.contains("never taken as arguments"), "\(arguments): \(result.error)")
        }
        // As options, and as a command: never shown either.
        for arguments in [["sync", "--postgresql://me:hunter2@db.example/history"], ["sync", "-hunter2"], ["postgresql://me:hunter2@db.example/h"]] {
            let result = try runner.run(arguments)
            #expect(result.status == 2 && !result.error.contains("hunter2"), "\(arguments): \(result.error)")
            #expect(result.error.contains("not shown"), "\(arguments): \(result.error)")
        }
        let upper = try runner.run(["sync", "Init"])
        #expect(upper.error.contains("'Init' (the commands are lower-case); did you mean `sync init`?"), "\(upper.error)")
        let typo = try runner.run(["sync", "stauts"])
        #expect(typo.status == 2 && typo.error.contains("did you mean `sync status`?"), "\(typo.error)")
        let key2 = try runner.run(["sync", "key", "shwo"])
        #expect(key2.status == 2 && key2.error.contains("did you mean `sync key show`?"), "\(key2.error)")
        let bare = try runner.run(["sync", "key"])
        #expect(bare.status == 2 && bare.error.contains("`sync key show`") && bare.error.contains("`sync key import`"), "\(bare.error)")
    }
}
