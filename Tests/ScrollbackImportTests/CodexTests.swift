import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackImport
@testable import ScrollbackStorage
import TestSupport

/// Codex CLI sessions: one chain per rollout file, what was seen, the context and
/// reasoning hidden, the screen's copies not stored twice, the token counts kept.
@Suite("Import: Codex sessions")
struct CodexTests {
    static let id = "5973b6c0-94b8-487b-a530-2aeb6098ae0e"

    static func line(_ type: String, _ payload: [String: Any], second: Int) -> String {
        let object: [String: Any] = ["timestamp": String(format: "2026-11-30T11:00:%02d.000Z", second), "type": type, "payload": payload]
        return String(decoding: (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data(), as: UTF8.self)
    }

    static func message(_ role: String, _ text: String) -> [String: Any] {
        ["type": "message", "role": role, "content": [["type": role == "assistant" ? "output_text" : "input_text", "text": text]]]
    }

    static var lines: [String] {
        [
            line("session_meta", ["id": id, "cwd": "/home/me/src/api", "cli_version": "0.46.0", "git": ["branch": "main", "commit_hash": "abc"]], second: 0),
            line("response_item", message("user", "<environment_context>\n  <cwd>/home/me/src/api</cwd>\n</environment_context>"), second: 1),
            line("turn_context", ["cwd": "/home/me/src/api", "model": "gpt-5-codex", "approval_policy": "on-request"], second: 2),
            line("response_item", message("user", "Why is the \u{1B}[2J test flaky?"), second: 3),
            line("event_msg", ["type": "user_message", "message": "Why is the test flaky?"], second: 3),
            line("response_item", ["type": "reasoning", "summary": [["type": "summary_text", "text": "**Looking at the test**"]], "content": NSNull(), "encrypted_content": "gAAAAB"], second: 4),
            line("response_item", ["type": "function_call", "name": "shell", "arguments": "{\"command\":[\"bash\",\"-lc\",\"go test ./...\"],\"timeout_ms\":120000}", "call_id": "call_1"], second: 5),
            line("response_item", ["type": "function_call_output", "call_id": "call_1", "output": "{\"output\":\"FAIL api 0.2s\\nok db\",\"metadata\":{\"exit_code\":1,\"duration_seconds\":0.3}}"], second: 6),
            line("response_item", ["type": "custom_tool_call", "name": "apply_patch", "call_id": "call_2", "input": "*** Begin Patch\n*** Update File: api_test.go\n@@\n-sleep\n+wait\n*** End Patch"], second: 7),
            line("response_item", ["type": "custom_tool_call_output", "call_id": "call_2", "output": "Success. Updated api_test.go"], second: 8),
            line("response_item", message("assistant", "It slept instead of waiting; fixed."), second: 9),
            line("event_msg", ["type": "agent_message", "message": "It slept instead of waiting; fixed."], second: 9),
            line("event_msg", ["type": "token_count", "info": ["last_token_usage": ["input_tokens": 1200, "cached_input_tokens": 800, "output_tokens": 90]]], second: 9),
            line("response_item", ["type": "ghost_snapshot", "commit": "def"], second: 10),
            line("telemetry", ["x": 1], second: 11),
        ]
    }

    @Test("an exit code that is no whole number (1e308, 2.5) is said as a failure, not as Exit 1")
    func oddExitCodes() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("rollout-2026-11-30T11-00-00-\(Self.id).jsonl")
        func output(_ code: String, second: Int) -> String {
            Self.line("response_item", ["type": "function_call_output", "call_id": "c\(second)", "output": "{\"output\":\"out \(second)\",\"metadata\":{\"exit_code\":\(code)}}"], second: second)
        }
        let lines = [Self.lines[0], Self.line("response_item", Self.message("user", "Run it"), second: 1), output("1e308", second: 2), output("2.5", second: 3), output("-2", second: 4), output("0", second: 5)]
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: false, encoding: .utf8)
        let store = try Store.open(path: ":memory:")
        #expect(Importer(store: store).run(paths: [path], format: nil).failed.isEmpty)
        let conversation = try #require(try ImportTests.conversation(store, source: "codex", id: Self.id))
        let shown = try store.messages.all(conversationID: conversation.id).filter { $0.role == .tool }.map(\.content)
        #expect(shown == ["Failed: out 2", "Failed: out 3", "Exit -2: out 4", "out 5"], "\(shown)")
    }

    @Test("lines without a time before the first one with a time are at that time: the session does not start in 1970")
    func undatedLines() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("rollout-2026-11-30T11-00-00-\(Self.id).jsonl")
        let undated = String(
            decoding: try JSONSerialization.data(withJSONObject: ["type": "response_item", "payload": Self.message("user", "First, undated")], options: [.sortedKeys]),
            as: UTF8.self)
        let lines = [undated, Self.lines[0], Self.line("response_item", Self.message("assistant", "Hello"), second: 6)]
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: false, encoding: .utf8)
        let store = try Store.open(path: ":memory:")
        #expect(Importer(store: store).run(paths: [path], format: nil).failed.isEmpty)
        let conversation = try #require(try ImportTests.conversation(store, source: "codex", id: Self.id))
        let meta = try #require(ImportTime.iso8601("2026-11-30T11:00:00.000Z"))
        #expect(conversation.createdAt == meta, "\(conversation.createdAt.iso8601)")
        let messages = try store.messages.all(conversationID: conversation.id, showingHidden: true)
        #expect(messages.first { $0.content == "First, undated" }?.createdAt == meta)
    }

    @Test("a rollout file: the chain, what was seen, the rest hidden, the folder, branch, model and tokens")
    func rollout() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("rollout-2026-11-30T11-00-00-\(Self.id).jsonl")
        try (Self.lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: false, encoding: .utf8)
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [path], format: nil)
        #expect(summary.inserted == 1 && summary.failed.isEmpty && summary.unknownParts == 2, "\(summary)")
        let conversation = try #require(try ImportTests.conversation(store, source: "codex", id: Self.id))
        #expect(conversation.title == "Why is the \u{1B}[2J test flaky?")
        #expect(conversation.project == "/home/me/src/api" && conversation.gitBranch == "main" && conversation.model == "gpt-5-codex")
        let seen = try store.messages.page(try store.messages.branch(of: conversation, leaf: nil), at: .first, limit: 50).items
        #expect(seen.map { "\($0.role.rawValue) \($0.kind.rawValue)" } == ["user text", "assistant tool", "tool tool", "assistant tool", "tool tool", "assistant text"])
        #expect(seen[1].content.hasPrefix("shell(go test ./...)\n"))
        #expect(seen[2].content == "Exit 1: FAIL api 0.2s\nok db")
        #expect(seen[3].content.hasPrefix("apply_patch(Update api_test.go)\n*** Begin Patch"))
        #expect(seen[5].usage.inputTokens == 1200 && seen[5].usage.outputTokens == 90 && seen[5].model == "gpt-5-codex")
        let all = try store.messages.all(conversationID: conversation.id, showingHidden: true)
        #expect(all.map(\.kind) == [.internal, .text, .reasoning, .tool, .tool, .tool, .tool, .text, .unknown, .unknown])
        #expect(conversation.hiddenCount == 4)
        // Nothing twice: the screen's copies are not stored.
        #expect(all.filter { $0.content.contains("slept") }.count == 1)

        // Appended: follows the last stored message.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data((Self.line("response_item", Self.message("user", "Thanks!"), second: 20) + "\n").utf8))
        try handle.close()
        let grown = Importer(store: store).run(paths: [path], format: nil)
        #expect(grown.filesAppended == 1 && grown.updated == 1, "\(grown)")
        let after = try #require(try ImportTests.conversation(store, source: "codex", id: Self.id))
        #expect(after.title == conversation.title && after.messageCount == conversation.messageCount + 1)
        let branch = try store.messages.page(try store.messages.branch(of: after, leaf: nil, showingHidden: true), at: .first, limit: 50).items
        #expect(branch.count == after.messageCount && branch.last?.content == "Thanks!")
        // Read whole again (touched, same bytes, new inode): nothing doubled.
        try (try String(contentsOfFile: path, encoding: .utf8)).write(toFile: path + ".copy", atomically: false, encoding: .utf8)
        #expect(rename(path + ".copy", path) == 0)
        let whole = Importer(store: store).run(paths: [path], format: nil)
        #expect(whole.filesAppended == 0 && whole.unchanged == 1, "\(whole)")
        #expect(try store.check().problems.isEmpty)
    }
}
