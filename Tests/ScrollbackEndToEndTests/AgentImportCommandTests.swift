import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// `import` with no path: the places scrollback knows, listed with their sizes, imported
/// after a yes; a session that grew read from where it stopped; where it ran shown.
@Suite("Import: the places scrollback knows")
struct AgentImportCommandTests {
    static func session(_ id: String, prompt: String, cwd: String = "/home/me/src/app", branch: String = "main") -> String {
        let lines: [[String: Any]] = [
            ["type": "user", "uuid": "\(id)-u", "parentUuid": NSNull(), "sessionId": id, "cwd": cwd, "gitBranch": branch,
             "timestamp": "2026-11-30T09:00:00.000Z", "message": ["role": "user", "content": prompt]],
            ["type": "assistant", "uuid": "\(id)-a", "parentUuid": "\(id)-u", "sessionId": id, "cwd": cwd, "gitBranch": branch,
             "timestamp": "2026-11-30T09:00:05.000Z",
             "message": ["id": "msg-\(id)", "role": "assistant", "model": "claude-opus-4", "content": [["type": "text", "text": "Done."]]] as [String: Any]],
        ]
        return lines.map { String(decoding: (try? JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys])) ?? Data(), as: UTF8.self) }
            .joined(separator: "\n") + "\n"
    }

    @Test("with no path: the Claude Code sessions found, imported after --yes; without a terminal or --yes, nothing; again, nothing read")
    func discovery() throws {
        let runner = try BinaryRunner()
        let projects = runner.folder.path + "/.claude/projects/-home-me-src-app"
        try FileManager.default.createDirectory(atPath: projects, withIntermediateDirectories: true)
        try Self.session("s-1", prompt: "Add a \u{1B}[31mlogin page").write(toFile: projects + "/s-1.jsonl", atomically: false, encoding: .utf8)
        try Self.session("s-2", prompt: "Fix the tests", branch: "fix/\u{1B}]0;x\u{7}tests")
            .write(toFile: projects + "/s-2.jsonl", atomically: false, encoding: .utf8)

        let refused = try runner.run(["import"])
        #expect(refused.status == 2 && refused.error.contains("import these with --yes"), "\(refused.error)")
        #expect(refused.output.contains("Claude Code sessions: \(runner.folder.path)/.claude/projects (") && refused.output.contains(", 2 files)"))
        #expect(try runner.json(["list"])["conversations"] as? [Any] == nil || (try runner.json(["list"])["conversations"] as? [Any])?.isEmpty == true)

        let imported = try runner.run(["import", "--yes"])
        #expect(imported.status == 0, "\(imported.error)")
        #expect(imported.output.contains("Imported 2 new, 0 updated, 0 unchanged"), "\(imported.output)")
        let again = try runner.run(["import", "--yes"])
        #expect(again.output.contains("Imported 0 new, 0 updated, 0 unchanged; 2 unchanged since, not read"), "\(again.output)")

        // Where it ran: in show, in --json, in the filter.
        let list = try runner.json(["list", "--project", "src/app"])
        let rows = list["conversations"] as? [[String: Any]] ?? []
        #expect(rows.count == 2)
        #expect(rows.contains { $0["gitBranch"] as? String == "fix/\u{1B}]0;x\u{7}tests" && $0["project"] as? String == "/home/me/src/app" })
        let id = try #require(rows.first { $0["title"] as? String == "Fix the tests" }?["id"] as? String)
        let shown = try runner.run(["show", id])
        #expect(shown.output.contains("source claude-code · project /home/me/src/app · branch fix/"), "\(shown.output)")
        #expect(!shown.output.contains("\u{1B}]0;"))
        #expect((try runner.json(["list", "--project", "elsewhere"])["conversations"] as? [Any])?.isEmpty == true)

        // A session that grew: only its new lines.
        let handle = try #require(FileHandle(forWritingAtPath: projects + "/s-1.jsonl"))
        try handle.seekToEnd()
        let more: [String: Any] = [
            "type": "user", "uuid": "s-1-u2", "parentUuid": "s-1-a", "sessionId": "s-1", "cwd": "/home/me/src/app",
            "timestamp": "2026-11-30T09:10:00.000Z", "message": ["role": "user", "content": "And a logout button"],
        ]
        try handle.write(contentsOf: (try JSONSerialization.data(withJSONObject: more)) + Data("\n".utf8))
        try handle.close()
        let grown = try runner.run(["import", "--yes"])
        #expect(grown.output.contains("Imported 0 new, 1 updated, 0 unchanged; 1 session file read from where the last import stopped, 1 unchanged since, not read"), "\(grown.output)")
        let shownAgain = try runner.run(["show", try #require(rows.first { $0["title"] as? String != "Fix the tests" }?["id"] as? String)])
        #expect(shownAgain.output.hasSuffix("And a logout button\n"), "\(shownAgain.output)")
    }

    @Test("with no path and nothing found: every place looked in, what to do, exit 2, and no database made")
    func nothingFound() throws {
        let runner = try BinaryRunner()
        let result = try runner.run(["import", "--yes"])
        #expect(result.status == 2)
        #expect(result.error.contains("no history found where scrollback looks (Claude Code: "), "\(result.error)")
        for name in ["Codex: ", "/.codex/sessions", "Gemini CLI: ", "/.gemini/tmp", "llm: ", "logs.db"] {
            #expect(result.error.contains(name), "\(name): \(result.error)")
        }
        #expect(!FileManager.default.fileExists(atPath: runner.databasePath))
    }
}

/// The browser follows the sessions imported before: what an agent appends shows in the
/// list and the open reader within a couple of seconds; read-only, it says so instead.
@Suite("Browser: following sessions", .serialized)
struct FollowingBrowserTests {
    static func append(_ path: String, uuid: String, parent: String, text: String) throws {
        let line: [String: Any] = [
            "type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": "s-1", "cwd": "/home/me/src/app",
            "timestamp": "2026-11-30T09:20:00.000Z", "message": ["role": "user", "content": text],
        ]
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: (try JSONSerialization.data(withJSONObject: line)) + Data("\n".utf8))
        try handle.close()
    }

    @Test("a prompt appended to a running session appears in the open reader; --readonly says a source has news")
    func follows() throws {
        let runner = try BinaryRunner()
        let projects = runner.folder.path + "/.claude/projects/-home-me-src-app"
        try FileManager.default.createDirectory(atPath: projects, withIntermediateDirectories: true)
        let file = projects + "/s-1.jsonl"
        try AgentImportCommandTests.session("s-1", prompt: "Add a login page").write(toFile: file, atomically: false, encoding: .utf8)
        #expect(try runner.run(["import", file]).status == 0)

        let tmux = try TmuxSession(
            width: 90, height: 20, arguments: ["--db", runner.databasePath], environment: ["HOME": runner.folder.path])
        _ = try tmux.waitFor(text: "Add a login page")
        try tmux.send("Enter")
        _ = try tmux.waitFor(text: "message 1 of 2")
        try Self.append(file, uuid: "s-1-u2", parent: "s-1-a", text: "Now a \u{1B}[31mlogout button")
        let screen = try tmux.waitFor(text: "logout button", timeout: 10)
        #expect(!screen.joined().contains("\u{1B}"))
        #expect(screen[0].contains("Add a login page · app (main)"))
        // A line the agent wrote that is not JSON: left out, and said, not dropped quietly.
        let handle = try #require(FileHandle(forWritingAtPath: file))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("{not json \u{1B}[2J\n".utf8))
        try handle.close()
        try Self.append(file, uuid: "s-1-u2b", parent: "s-1-u2", text: "And tests")
        let noted = try tmux.waitFor(text: "following: in s-1.jsonl, the line at byte", timeout: 10)
        #expect(noted.joined().contains("is not a JSON object") && !noted.joined().contains("\u{1B}"), "\(noted)")
        try tmux.send("q", "q")
        _ = try tmux.waitForExit()

        let readOnly = try TmuxSession(
            width: 120, height: 20, arguments: ["--db", runner.databasePath, "--readonly"], environment: ["HOME": runner.folder.path])
        _ = try readOnly.waitFor(text: "Add a login page")
        try Self.append(file, uuid: "s-1-u3", parent: "s-1-u2b", text: "And a footer")
        _ = try readOnly.waitFor(text: "1 session file grew (read-only: scrollback import reads them)", timeout: 10)
        try readOnly.send("q")
        _ = try readOnly.waitForExit()
        // Read-only imported nothing: the first appends are there, the last is not.
        let rows = try runner.json(["list"])["conversations"] as? [[String: Any]] ?? []
        #expect(rows.first?["messageCount"] as? Int == 4)
    }

    @Test("the disk fills while a folder of sessions is imported: exit 1 with the reason, nothing of the load kept (not a part of it in autocommit), check clean; with room, all of it")
    func diskFull() throws {
        guard geteuid() == 0 else { return }
        let runner = try BinaryRunner()
        let mountPoint = try TemporaryDirectory()
        guard ChildProcess.status("/bin/mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", mountPoint.path]) == 0 else { return }
        defer { _ = ChildProcess.status("/bin/umount", [mountPoint.path]) }
        let database = mountPoint.file("h.sqlite")
        func listed(_ extra: [String] = []) throws -> [[String: Any]] {
            let result = try runner.run(["--db", database, "list", "--json"] + extra, withDatabase: false)
            let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
            return object?["conversations"] as? [[String: Any]] ?? []
        }
        let first = try runner.run(["--db", database, "import", "--quiet", TreeCommandTests.chatgpt], withDatabase: false)
        #expect(first.status == 0, "\(first.error)")
        let before = try listed()
        let projects = runner.folder.path + "/sessions/-work-app"
        try FileManager.default.createDirectory(atPath: projects, withIntermediateDirectories: true)
        for index in 0..<80 {
            let prompt = (0..<5_000).map { "w\($0 * 7 + index)" }.joined(separator: " ")
            try AgentImportCommandTests.session("s-\(index)", prompt: prompt).write(toFile: projects + "/s-\(index).jsonl", atomically: false, encoding: .utf8)
        }
        let full = try runner.run(["--db", database, "import", runner.folder.path + "/sessions"], withDatabase: false)
        #expect(full.status == 1, "\(full.output) \(full.error)")
        #expect(full.error.contains("full"), "\(full.error)")
        #expect(!full.error.contains("already exists") && !full.error.contains("SQLite error 1:"), "\(full.error)")
        let after = try listed()
        #expect(after.count == before.count, "\(after.count) stored, \(before.count) before")
        let check = try runner.run(["--db", database, "check"], withDatabase: false)
        #expect(check.status == 0, "\(check.output) \(check.error)")
        do {
            let store = try Store.open(path: database, readOnly: true)
            #expect(try store.sourceFiles().isEmpty)
        }
        // With room, the same import keeps every session.
        #expect(ChildProcess.status("/bin/mount", ["-o", "remount,size=64m", mountPoint.path]) == 0)
        let again = try runner.run(["--db", database, "import", "--quiet", runner.folder.path + "/sessions"], withDatabase: false)
        #expect(again.status == 0, "\(again.error)")
        let all = try listed(["--limit", "500"])
        #expect(all.count == before.count + 80)
        #expect(try runner.run(["--db", database, "check"], withDatabase: false).status == 0)
    }
}
