import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// What a hostile tester did to the command line's output: full disks, odd targets,
/// escape sequences in data and arguments, a terminal on the other end.
@Suite("Hostile output")
struct HostileOutputTests {
    /// A database with hostile titles, bodies and models.
    static func hostileDatabase(_ runner: BinaryRunner) throws -> String {
        let store = try Store.open(path: runner.databasePath)
        let conversation = try store.addConversation(
            title: "T" + HostileText.sample, createdAt: 1_700_000_000_000, messages: ["Q" + HostileText.sample, "```\n" + HostileText.sample + "\n```"])
        // A model's name reaches the overview's chart (`stats --chart`).
        try store.database.run("UPDATE conversation SET model = ? WHERE id = ?", [.text("M" + HostileText.sample), .integer(conversation.id)])
        // A database filled before ids from files were checked may hold any 36 characters.
        let older = try store.addConversation(title: "older evil", createdAt: 1_600_000_000_000, messages: ["evil"])
        try store.database.run(
            "UPDATE conversation SET public_id = ? WHERE id = ?",
            [.text("\u{1B}[2J\u{1B}]0;X\u{07}" + String(repeating: "a", count: 26)), .integer(older.id)])
        return conversation.publicID
    }

    @Test("to a terminal (a pty), no command's output carries a control byte from the data; JSON stays exact")
    func terminalOutputIsSanitized() throws {
        let runner = try BinaryRunner()
        let id = try Self.hostileDatabase(runner)
        let database = HostileText.quoted(runner.databasePath)
        let commands = [
            "list", "list --json", "show \(id)", "show \(id) --json", "search evil", "search evil --json", "export",
            "export --format json", "export --format jsonl", "stats", "stats --json", "check", "list --title evil",
            "search evil --title evil", "list --title \\\"$(printf 'z\\033]0;X\\007')\\\"", "stats --chart --since 2020",
            "stats --chart --json --since 2020",
        ]
        for command in commands {
            let result = try BinaryRunner.shell("script -q -e -c \"\\\"$0\\\" --db \(database) \(command)\" /dev/null")
            #expect(result.status == 0, "\(command): \(result.error)")
            #expect(result.output.count > 20, "\(command)")
            // Search marks matches in bold on a terminal: those two sequences are its own.
            let own = String(decoding: result.output, as: UTF8.self)
                .replacingOccurrences(of: "\u{1B}[1m", with: "").replacingOccurrences(of: "\u{1B}[22m", with: "")
                // The chart's bars are blue and magenta on a terminal.
                .replacingOccurrences(of: "\u{1B}[34m", with: "").replacingOccurrences(of: "\u{1B}[35m", with: "")
                .replacingOccurrences(of: "\u{1B}[39m", with: "")
            #expect(HostileText.dangerousBytes(in: Data(own.utf8)) == [], "\(command)")
        }
        // Search marks matches in bold only where the terminal can show it.
        for terminal in ["dumb", ""] {
            let plain = try BinaryRunner.shell("TERM=\(terminal) script -q -e -c \"\\\"$0\\\" --db \(database) search evil\" /dev/null")
            #expect(!plain.output.contains(0x1B), "TERM=\(terminal)")
        }
        // JSON to a terminal is escaped, not altered: a parser reads the exact title back.
        let json = try BinaryRunner.shell("script -q -e -c \"\\\"$0\\\" --db \(database) show \(id) --json\" /dev/null")
        let text = String(decoding: json.output, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        #expect((object?["conversation"] as? [String: Any])?["title"] as? String == "T" + HostileText.sample)
    }

    @Test("hidden messages with hostile text: show, export and search with --hidden on a pty carry no control byte")
    func hiddenOnTerminal() throws {
        let runner = try BinaryRunner()
        let store = try Store.open(path: runner.databasePath)
        let nodes = [
            TreeNode("q", nil, .user, "evil question", minute: 0),
            TreeNode("r", "q", .assistant, "evil reasoning " + HostileText.sample, minute: 1, kind: .reasoning),
            TreeNode("c", "r", .assistant, "→ browser\nevil call " + HostileText.sample, minute: 2, kind: .internal),
            TreeNode("u", "c", .tool, "{\"evil\":\"" + HostileText.sample.unicodeScalars.map { "\\u" + String(format: "%04x", $0.value & 0xFFFF) }.joined() + "\"}", minute: 3, kind: .unknown),
            TreeNode("a", "u", .assistant, "evil answer", minute: 4),
        ]
        let conversation = try store.addTree(title: "Hidden " + HostileText.sample, start: 1_700_000_000_000, nodes: nodes, current: "a")
        let id = String(conversation.publicID.prefix(8))
        let database = HostileText.quoted(runner.databasePath)
        for command in ["show \(id) --hidden", "show \(id) --hidden --all-branches", "show \(id) --hidden --json", "export --hidden",
                        "search evil --hidden", "search evil --hidden --json", "stats"] {
            let result = try BinaryRunner.shell("script -q -e -c \"\\\"$0\\\" --db \(database) \(command)\" /dev/null")
            #expect(result.status == 0, "\(command): \(result.error)")
            let own = String(decoding: result.output, as: UTF8.self)
                .replacingOccurrences(of: "\u{1B}[1m", with: "").replacingOccurrences(of: "\u{1B}[22m", with: "")
            #expect(HostileText.dangerousBytes(in: Data(own.utf8)) == [], "\(command)")
            #expect(command == "stats" ? own.contains("3 hidden") : own.contains("evil"), "\(command)")
        }
        // Without --hidden, nothing of them shows or is found.
        let seen = try runner.run(["show", id])
        #expect(!seen.output.contains("reasoning") && seen.output.contains("2 messages · 3 hidden (--hidden shows them)"))
        let found = try runner.json(["search", "reasoning"])
        #expect((found["hits"] as? [Any])?.isEmpty ?? true)
    }

    @Test("to a pipe or a file, exports and JSON are exact")
    func pipedOutputIsExact() throws {
        let runner = try BinaryRunner()
        _ = try Self.hostileDatabase(runner)
        let markdown = try runner.run(["export"])
        // Exact but for its line breaks (CR, NEL, U+2028), spaces there: Markdown's heading
        // is one line, and a break in a title would start a line of the document's own.
        let oneLine = String(String.UnicodeScalarView(HostileText.sample.unicodeScalars.map { "\r\n\u{85}\u{2028}\u{2029}".unicodeScalars.contains($0) ? " " : $0 }))
        #expect(markdown.output.contains("# T" + oneLine + "\n"))
        let json = try runner.json(["list"])
        #expect((json["conversations"] as? [[String: Any]])?.first?["title"] as? String == "T" + HostileText.sample)
    }

    @Test("error messages show arguments with placeholders, never raw escapes")
    func errorsAreSanitized() throws {
        let runner = try BinaryRunner()
        _ = try runner.run(["demo", "--count", "3"])
        for arguments in [
            ["show", "\u{1B}]0;PWN\u{07}"], ["list", "--sort", "\u{1B}[2J"], ["frob\u{9B}"], ["export", "--format", "\u{202E}x"],
            ["rename", "\u{1B}[31mid", "x"], ["--db", "/nonexistent/\u{1B}[2J/x.sqlite", "list"],
        ] {
            let result = try runner.run(arguments)
            #expect(result.status != 0)
            #expect(HostileText.dangerousBytes(in: Data(result.error.utf8)) == [], "\(arguments): \(result.error)")
            #expect(result.error.contains("␛") || result.error.contains("\u{FFFD}") || result.error.contains("⍰"), "\(arguments)")
        }
    }

    @Test("a full disk: /dev/full and a full file system fail with one line and exit 1, never a silent cut")
    func fullDisk() throws {
        let runner = try BinaryRunner()
        _ = try runner.run(["demo", "--count", "300"])
        let database = HostileText.quoted(runner.databasePath)
        for command in ["export --format jsonl", "export", "list --json", "show --help", "stats", "stats --chart", "stats --chart --json"] {
            let result = try BinaryRunner.shell("\"$0\" --db \(database) \(command) > /dev/full")
            #expect(result.status == 1, "\(command)")
            #expect(result.error.contains("cannot write to standard output (no space left on device)"), "\(command): \(result.error)")
            #expect(result.error.filter { $0 == "\n" }.count == 1)
        }
        // Standard error full: nothing can be said, but the exit status says it failed.
        let quiet = try BinaryRunner.shell("\"$0\" --db \(database) list --limit 5 2>/dev/full")
        #expect(quiet.status == 1)
        #expect(try BinaryRunner.shell("\"$0\" --db \(database) list --limit 5000 2>/dev/full").status == 0)
        // A small file system that fills up midway (root may mount one; CI and this machine run as root).
        let mountPoint = try TemporaryDirectory()
        guard geteuid() == 0, ChildProcess.status("/bin/mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", mountPoint.path]) == 0 else { return }
        defer { _ = ChildProcess.status("/bin/umount", [mountPoint.path]) }
        let full = try BinaryRunner.shell("\"$0\" --db \(database) export --format jsonl > \(mountPoint.path)/backup.jsonl")
        #expect(full.status == 1)
        #expect(full.error.contains("cannot write to standard output (no space left on device); the output is incomplete"))
        let out = try BinaryRunner.shell("\"$0\" --db \(database) export --format jsonl --out \(mountPoint.path)/out.jsonl")
        #expect(out.status == 1)
        #expect(out.error.contains("no space left on device"))
        // Nothing half-written is left at --out, nor a temporary file.
        #expect(try FileManager.default.contentsOfDirectory(atPath: mountPoint.path) == ["backup.jsonl"])
        // One file each: the disk fills midway; what was written is said, and is whole.
        try FileManager.default.removeItem(atPath: mountPoint.path + "/backup.jsonl")
        let each = try BinaryRunner.shell("\"$0\" --db \(database) export --format jsonl --out-dir \(mountPoint.path)/each")
        #expect(each.status == 1)
        let written = try FileManager.default.contentsOfDirectory(atPath: mountPoint.path + "/each").filter { !$0.hasPrefix(".") }
        #expect(!written.isEmpty && each.error.contains("\(written.count) conversation"), "\(written.count): \(each.error)")
        #expect(each.error.contains("before this one failed, each file whole; they stay") && each.error.contains("no space left on device"), "\(each.error)")
        for name in written {
            let text = try String(contentsOfFile: mountPoint.path + "/each/" + name, encoding: .utf8)
            #expect(text.hasSuffix("}\n") && (try? JSONSerialization.jsonObject(with: Data(text.utf8))) != nil, "\(name)")
        }
    }

    @Test("export --out writes regular files only: no symlink followed, no device replaced, no overwrite without --force")
    func exportTargets() throws {
        let runner = try BinaryRunner()
        _ = try runner.run(["demo", "--count", "5"])
        let victim = runner.folder.file("victim.txt")
        try "precious".write(toFile: victim, atomically: false, encoding: .utf8)
        let link = runner.folder.file("link.jsonl")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: victim)

        let symlink = try runner.run(["export", "--out", link])
        #expect(symlink.status == 1)
        #expect(symlink.error.contains("is a symbolic link, which export does not follow"))
        let forcedLink = try runner.run(["export", "--out", link, "--force"])
        #expect(forcedLink.status == 1)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == victim)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")

        let device = try runner.run(["export", "--out", "/dev/null", "--force"])
        #expect(device.status == 1)
        #expect(device.error.contains("is not a regular file"))
        var status = stat()
        #expect(lstat("/dev/null", &status) == 0 && (status.st_mode & S_IFMT) == S_IFCHR)

        let existing = try runner.run(["export", "--out", victim])
        #expect(existing.status == 1)
        #expect(existing.error.contains("exists; add --force to replace it"))
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        #expect(try runner.run(["export", "--out", victim, "--force"]).status == 0)
        #expect(try String(contentsOfFile: victim, encoding: .utf8).hasPrefix("# "))

        // Never over the database itself, whatever --force says or the path looks like.
        let before = try sha256(ofFile: runner.databasePath)
        for target in [runner.databasePath, runner.dataFolder + "/../data/history.sqlite"] {
            let onItself = try runner.run(["export", "--out", target, "--force"])
            #expect(onItself.status == 1)
            #expect(onItself.error.contains("is the database being exported"), "\(onItself.error)")
        }
        #expect(try sha256(ofFile: runner.databasePath) == before)

        let folder = try runner.run(["export", "--out", runner.folder.path])
        #expect(folder.error.contains("is a folder; use --out-dir"))
        #expect(try runner.run(["export", "--out", ""]).status == 2)
        #expect(try runner.run(["export", "--out-dir", victim]).status == 1)

        let outDir = runner.folder.file("many/inner")
        let first = try runner.run(["export", "--out-dir", outDir])
        #expect(first.status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: outDir).count == 5)
        let again = try runner.run(["export", "--out-dir", outDir])
        #expect(again.status == 1)
        #expect(again.error.contains("already holds 5 of these files"))
        #expect(try runner.run(["export", "--out-dir", outDir, "--force"]).status == 0)
        // No temporary files are left anywhere.
        #expect(try FileManager.default.contentsOfDirectory(atPath: outDir).allSatisfy { !$0.hasSuffix(".partial") })
        #expect(try FileManager.default.contentsOfDirectory(atPath: runner.folder.path).allSatisfy { !$0.hasSuffix(".partial") })
    }

    @Test("bad places for the database: FIFO, device, missing folder, non-UTF-8 name, foreign -wal, damage")
    func badDatabasePlaces() throws {
        let runner = try BinaryRunner()
        let fifo = runner.folder.file("fifo.sqlite")
        #expect(mkfifo(fifo, 0o600) == 0)
        let fromFIFO = try runner.run(["--db", fifo, "list"], withDatabase: false)
        #expect(fromFIFO.status == 1)
        #expect(fromFIFO.error.contains("is not a scrollback database (it is a FIFO, not a file)"))
        let fromNull = try runner.run(["--db", "/dev/null", "stats"], withDatabase: false)
        #expect(fromNull.error.contains("it is a device, not a file"))

        let typo = runner.folder.file("dta/history.sqlite")
        let missing = try runner.run(["--db", typo, "list"], withDatabase: false)
        #expect(missing.status == 1)
        #expect(missing.error.contains("there is no folder"))
        #expect(!FileManager.default.fileExists(atPath: runner.folder.file("dta")))

        let nonUTF8 = try BinaryRunner.shell("cd \(HostileText.quoted(runner.folder.path)) && \"$0\" --db \"$(printf 'x\\377.db')\" list")
        #expect(nonUTF8.status == 2)
        #expect(nonUTF8.error.contains("argument 2 is not valid UTF-8"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: runner.folder.path).allSatisfy { !$0.hasSuffix(".db") })

        _ = try runner.run(["demo", "--count", "30"])
        let before = try sha256(ofFile: runner.databasePath)
        try foreignWAL(scratch: runner.folder.file("other.db")).write(to: URL(fileURLWithPath: runner.databasePath + "-wal"))
        for arguments in [["list"], ["--readonly", "list"], ["stats"], ["delete", "x", "--yes"], []] {
            let result = try runner.run(arguments)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.error.contains("-wal file beside it"), "\(arguments): \(result.error)")
        }
        #expect(try sha256(ofFile: runner.databasePath) == before)
        try FileManager.default.removeItem(atPath: runner.databasePath + "-wal")
        #expect(try runner.run(["list"]).status == 0)
    }

    @Test("a damaged database: one line naming the file, no SQL (unless --verbose); check reports and exits 1")
    func damaged() throws {
        let runner = try BinaryRunner()
        _ = try runner.run(["demo", "--count", "400"])
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: runner.databasePath))
        try handle.seek(toOffset: 4096 * 3)
        try handle.write(contentsOf: Data(repeating: 0x5A, count: 4096 * 20))
        try handle.close()
        let before = try sha256(ofFile: runner.databasePath)
        var sawDamage = false
        for arguments in [["list", "--limit", "1000"], ["search", "the"], ["export"], ["stats"]] {
            let result = try runner.run(arguments)
            if result.status == 0 { continue }
            #expect(result.status == 1)
            #expect(!result.error.contains("SELECT") && !result.error.contains("while executing"), "\(arguments): \(result.error)")
            #expect(result.error.filter { $0 == "\n" }.count == 1, "\(arguments): \(result.error)")
            if result.error.contains("is damaged") {
                sawDamage = true
                #expect(result.error.contains("run `scrollback check`"))
            }
            let verbose = try runner.run(arguments + ["--verbose"])
            #expect(verbose.error.contains("SQLite error"), "\(arguments)")
        }
        #expect(sawDamage)
        let check = try runner.run(["check"])
        #expect(check.status == 1)
        #expect(check.output.contains("problem: integrity:"))
        #expect(try sha256(ofFile: runner.databasePath) == before)
    }

    @Test("times no import would store (Int64.min, Int64.max, text) print, draw and export without a trap; check names them")
    func extremeTimes() throws {
        for (created, updated) in ["-9223372036854775808", "9223372036854775807", "-9223372036854775000", "'abc'"].map({ ($0, $0) }) {
            let runner = try BinaryRunner()
            _ = try runner.run(["demo", "--count", "2"])
            let store = try Store.open(path: runner.databasePath)
            try store.database.execute("PRAGMA trusted_schema = ON")
            try store.database.execute(
                "UPDATE conversation SET created_at = \(created), updated_at = \(updated); UPDATE message SET created_at = \(created)")
            for arguments in [
                ["list"], ["list", "--json"], ["list", "--sort", "created"], ["stats"], ["stats", "--json"], ["export"],
                ["export", "--format", "json"], ["export", "--format", "jsonl"], ["search", "the"],
            ] {
                let result = try runner.run(arguments)
                #expect(result.status == 0 || result.status == 1, "\(created) \(arguments): \(result.status) \(result.error)")
            }
            let database = HostileText.quoted(runner.databasePath)
            let frame = try BinaryRunner.shell("script -q -e -c \"\\\"$0\\\" --db \(database) --exit-after-first-frame\" /dev/null")
            #expect(frame.status == 0, "\(created): \(frame.error)")
            let check = try runner.run(["check"])
            #expect(check.status == 1)
            #expect(check.output.contains("problem: value: conversation "), "\(check.output)")
        }
    }
}

/// Hostile text in every field a coding agent's session brings, through every output.
@Suite("Hostile output: agent sessions")
struct HostileAgentOutputTests {
    @Test("a Claude Code session with escapes in its folder, branch, model, tool names and texts: nothing raw on a pty")
    func agentFields() throws {
        let runner = try BinaryRunner()
        let evil = HostileText.sample
        let line: [String: Any] = [
            "type": "assistant", "uuid": "a", "parentUuid": "u", "sessionId": "s" + evil, "cwd": "/home/" + evil, "gitBranch": "b" + evil,
            "timestamp": "2026-11-30T09:00:05.000Z",
            "message": ["id": "m", "role": "assistant", "model": "model" + evil,
                        "content": [["type": "tool_use", "id": "t", "name": "Tool" + evil, "input": ["command": "rm " + evil]]]] as [String: Any],
        ]
        let first: [String: Any] = [
            "type": "user", "uuid": "u", "parentUuid": NSNull(), "sessionId": "s" + evil, "cwd": "/home/" + evil, "gitBranch": "b" + evil,
            "timestamp": "2026-11-30T09:00:00.000Z", "message": ["role": "user", "content": "evil " + evil],
        ]
        let path = runner.folder.file("s.jsonl")
        let text = try [first, line].map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }.joined(separator: "\n") + "\n"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        #expect(try runner.run(["import", path]).status == 0)
        let id = try #require((try runner.json(["list"])["conversations"] as? [[String: Any]])?.first?["id"] as? String)
        let database = HostileText.quoted(runner.databasePath)
        for command in ["list", "list --json", "show \(id)", "show \(id) --json", "show \(id) --all-branches", "search evil",
                        "export", "stats", "list --project home"] {
            let result = try BinaryRunner.shell("script -q -e -c \"\\\"$0\\\" --db \(database) \(command)\" /dev/null")
            #expect(result.status == 0, "\(command): \(result.error)")
            let own = String(decoding: result.output, as: UTF8.self)
                .replacingOccurrences(of: "\u{1B}[1m", with: "").replacingOccurrences(of: "\u{1B}[22m", with: "")
            #expect(HostileText.dangerousBytes(in: Data(own.utf8)) == [], "\(command)")
        }
        // The browser's reader: the header's folder and branch, the tool line.
        let tmux = try TmuxSession(width: 100, height: 20, arguments: ["--db", runner.databasePath])
        _ = try tmux.waitFor(text: "evil")
        try tmux.send("Enter")
        let screen = try tmux.waitFor(text: "message 1 of")
        #expect(!screen.joined().unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x202E })
        let styled = try tmux.styledScreen()
        #expect(!styled.contains("]0;PWN") || styled.contains("␛]0;PWN"))
        try tmux.send("q", "q")
        _ = try tmux.waitForExit()
    }
}
