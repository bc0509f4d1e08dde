import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackImport
@testable import ScrollbackStorage
import TestSupport

/// Gemini CLI sessions, the whole-object `.json` and the record-by-record `.jsonl`.
@Suite("Import: Gemini CLI sessions")
struct GeminiTests {
    static func json(_ object: Any) -> String {
        String(decoding: (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data(), as: UTF8.self)
    }

    static var messages: [[String: Any]] { [
        ["id": "m1", "timestamp": "2026-11-30T12:00:00.000Z", "type": "user", "content": "Summarize \u{1B}[31mREADME"],
        ["id": "m2", "timestamp": "2026-11-30T12:00:05.000Z", "type": "gemini", "content": "It is a terminal app.", "model": "gemini-2.5-pro",
         "thoughts": [["subject": "Reading", "description": "Open the file first", "timestamp": "2026-11-30T12:00:02.000Z"]],
         "toolCalls": [["id": "c1", "name": "read_file", "displayName": "ReadFile", "args": ["absolute_path": "/home/me/app/README.md"],
                        "status": "success", "timestamp": "2026-11-30T12:00:03.000Z", "resultDisplay": "# app\nA terminal app"]],
         "tokens": ["input": 900, "output": 40, "cached": 0, "total": 940]],
        ["id": "m3", "timestamp": "2026-11-30T12:00:06.000Z", "type": "info", "content": "Request cancelled."],
        ["id": "m4", "timestamp": "2026-11-30T12:00:07.000Z", "type": "hologram", "content": "?"],
    ] }

    @Test("a .json session: prompts, answers and tool calls seen; thoughts and the CLI's own lines hidden; read whole when rewritten")
    func object() throws {
        let folder = try TemporaryDirectory()
        let chats = folder.file("tmp/abc123/chats")
        try FileManager.default.createDirectory(atPath: chats, withIntermediateDirectories: true)
        let path = chats + "/session-2026-11-30T12-00-abc.json"
        var session: [String: Any] = [
            "sessionId": "g-1", "projectHash": "abc123", "startTime": "2026-11-30T12:00:00.000Z", "lastUpdated": "2026-11-30T12:00:07.000Z",
            "messages": Self.messages,
        ]
        try Self.json(session).write(toFile: path, atomically: false, encoding: .utf8)
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [folder.file("tmp")], format: nil)
        #expect(summary.inserted == 1 && summary.failed.isEmpty && summary.unknownParts == 1, "\(summary)")
        let conversation = try #require(try ImportTests.conversation(store, source: "gemini", id: "g-1"))
        #expect(conversation.title == "Summarize \u{1B}[31mREADME" && conversation.model == "gemini-2.5-pro")
        let seen = try store.messages.page(try store.messages.branch(of: conversation, leaf: nil), at: .first, limit: 20).items
        #expect(seen.map { "\($0.role.rawValue) \($0.kind.rawValue)" } == ["user text", "assistant text", "tool tool"])
        #expect(seen[2].content == "ReadFile(/home/me/app/README.md)\n# app\nA terminal app")
        #expect(seen[2].usage.inputTokens == 900 && seen[2].usage.outputTokens == 40)
        let all = try store.messages.all(conversationID: conversation.id, showingHidden: true)
        #expect(all.map(\.kind) == [.text, .reasoning, .text, .tool, .internal, .unknown])
        // Rewritten whole with one more message: read whole, nothing doubled.
        session["messages"] = Self.messages + [["id": "m5", "timestamp": "2026-11-30T12:01:00.000Z", "type": "user", "content": "Thanks"]]
        try Self.json(session).write(toFile: path + ".new", atomically: false, encoding: .utf8)
        #expect(rename(path + ".new", path) == 0)
        let again = Importer(store: store).run(paths: [path], format: nil)
        #expect(again.updated == 1 && again.filesAppended == 0, "\(again)")
        let after = try #require(try ImportTests.conversation(store, source: "gemini", id: "g-1"))
        #expect(after.messageCount == conversation.messageCount + 1)
        #expect(try store.check().problems.isEmpty)
    }

    @Test("the folder a session ran in: from .project_root beside its chats, or, for a folder named by the path's SHA-256, from projects.json; else none; project: finds it")
    func projectFolder() throws {
        let folder = try TemporaryDirectory()
        func session(_ dir: String, id: String, hash: String) throws {
            let chats = folder.file("gemini/tmp/\(dir)/chats")
            try FileManager.default.createDirectory(atPath: chats, withIntermediateDirectories: true)
            let object: [String: Any] = [
                "sessionId": id, "projectHash": hash, "startTime": "2026-11-30T12:00:00.000Z", "messages": Array(Self.messages.prefix(2)),
            ]
            try Self.json(object).write(toFile: chats + "/session-\(id).json", atomically: false, encoding: .utf8)
        }
        // The folder before short names: the SHA-256 of the path (FIPS 180-2's "abc" vector
        // checks the digest).
        #expect(GeminiSession.sha256(hex: "abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let computed = try #require(GeminiSession.sha256(hex: "/home/me/src/old"))
        try session("app", id: "g-new", hash: "ignored")
        try "/home/me/src/app\n".write(toFile: folder.file("gemini/tmp/app/.project_root"), atomically: false, encoding: .utf8)
        try session(computed, id: "g-old", hash: computed)
        try session(String(repeating: "0", count: 64), id: "g-unknown", hash: String(repeating: "0", count: 64))
        try Self.json(["projects": ["/home/me/src/app": "app", "/home/me/src/old": "old", "relative/path": "x"]])
            .write(toFile: folder.file("gemini/projects.json"), atomically: false, encoding: .utf8)
        // A marker that is not a path: none.
        try session("odd", id: "g-odd", hash: "x")
        try "not a path".write(toFile: folder.file("gemini/tmp/odd/.project_root"), atomically: false, encoding: .utf8)
        let store = try Store.open(path: ":memory:")
        #expect(Importer(store: store).run(paths: [folder.file("gemini/tmp")], format: nil).failed.isEmpty)
        func project(_ id: String) throws -> String? { try ImportTests.conversation(store, source: "gemini", id: id)?.project }
        #expect(try project("g-new") == "/home/me/src/app")
        #expect(try project("g-old") == "/home/me/src/old")
        #expect(try project("g-unknown") == nil && project("g-odd") == nil)
        #expect(try store.conversations.page(sort: .updated, filter: ConversationFilter(project: "/home/me/src/old"), at: .first, limit: 5).items.count == 1)
    }

    @Test("chats saved with /chat save (checkpoint-TAG.json, a list or {history}): one conversation per tag, the context Gemini CLI sends first and thoughts hidden, calls and responses collapsed, at the file's time")
    func savedChats() throws {
        let folder = try TemporaryDirectory()
        let project = folder.file("tmp/app")
        try FileManager.default.createDirectory(atPath: project + "/chats", withIntermediateDirectories: true)
        try "/home/me/src/app".write(toFile: project + "/.project_root", atomically: false, encoding: .utf8)
        let history: [[String: Any]] = [
            ["role": "user", "parts": [["text": "This is the Gemini CLI. We are setting up the context for our chat.\nToday's date is Monday."]]],
            ["role": "model", "parts": [["text": "Got it. Thanks for the context!"]]],
            ["role": "user", "parts": [["text": "Fix the \u{1B}[31mbug"]]],
            ["role": "model", "parts": [
                ["thought": true, "text": "Look at main.go"], ["text": "Let me look."],
                ["functionCall": ["name": "read_file", "args": ["absolute_path": "/home/me/src/app/main.go"]]],
            ]],
            ["role": "user", "parts": [["functionResponse": ["name": "read_file", "response": ["output": "package main"]]]]],
            ["role": "model", "parts": [["text": "Done."], ["inlineData": ["mimeType": "image/png", "data": "iVBORw"]]]],
        ]
        try Self.json(history).write(toFile: project + "/checkpoint-my%20feature.json", atomically: false, encoding: .utf8)
        try Self.json(["history": Array(history.prefix(4)), "authType": "oauth"]).write(toFile: project + "/checkpoint-later.json", atomically: false, encoding: .utf8)
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [folder.file("tmp")], format: nil)
        #expect(summary.inserted == 2 && summary.failed.isEmpty && summary.unknownParts == 0, "\(summary)")
        let saved = try #require(try ImportTests.conversation(store, source: "gemini", id: "checkpoint/app/my%20feature"))
        #expect(saved.title == "Saved chat: my feature" && saved.project == "/home/me/src/app")
        let seen = try store.messages.page(try store.messages.branch(of: saved, leaf: nil), at: .first, limit: 20).items
        #expect(
            seen.map { "\($0.role.rawValue) \($0.kind.rawValue)" } == ["user text", "assistant text", "assistant tool", "tool tool", "assistant text", "assistant text"],
            "\(seen.map(\.content))")
        // Its inline image is an attachment of a message of its own (the bytes kept exactly).
        #expect(seen[5].content == "" && seen[5].attachments.map(\.name) == ["image-1.png"] && seen[5].attachments.first?.size == 4, "unpadded base64 read too")
        #expect(seen[2].content.hasPrefix("read_file(/home/me/src/app/main.go)\n") && seen[3].content == "read_file → package main")
        let all = try store.messages.all(conversationID: saved.id, showingHidden: true)
        #expect(all.filter { !$0.kind.isSeen }.map(\.kind) == [.internal, .internal, .reasoning])
        let modified = try #require(try FileManager.default.attributesOfItem(atPath: project + "/checkpoint-my%20feature.json")[.modificationDate] as? Date)
        #expect(abs(Double(saved.createdAt.milliseconds) / 1_000 - modified.timeIntervalSince1970) < 1)
        let later = try #require(try ImportTests.conversation(store, source: "gemini", id: "checkpoint/app/later"))
        #expect(later.title == "Saved chat: later" && later.seenCount == 3)
        // Saved again over the same tag (the file written whole): the same conversation, nothing doubled.
        try Self.json(history).write(toFile: project + "/checkpoint-later.json", atomically: false, encoding: .utf8)
        let again = Importer(store: store).run(paths: [project + "/checkpoint-later.json"], format: nil)
        #expect(again.updated == 1 && again.inserted == 0, "\(again)")
        #expect(try store.check().problems.isEmpty)
    }

    @Test("a .jsonl session: records by id (a later one replaces), $set, $rewindTo as a branch, appended lines read alone")
    func records() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("session-g2.jsonl")
        var lines = [Self.json(["sessionId": "g-2", "projectHash": "def", "startTime": "2026-11-30T12:00:00.000Z"])]
        lines += Self.messages.prefix(2).map(Self.json)
        // m2 again, streamed further: it replaces the first.
        var m2 = Self.messages[1]
        m2["content"] = "It is a terminal app for chat histories."
        lines.append(Self.json(m2))
        lines.append(Self.json(["$set": ["summary": "README"]]))
        lines.append(Self.json(["$rewindTo": "m1"]))
        lines.append(Self.json(["id": "m6", "timestamp": "2026-11-30T12:02:00.000Z", "type": "gemini", "content": "Another answer."]))
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: false, encoding: .utf8)
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [path], format: nil)
        #expect(summary.inserted == 1 && summary.failed.isEmpty, "\(summary)")
        let conversation = try #require(try ImportTests.conversation(store, source: "gemini", id: "g-2"))
        let tree = try store.messages.tree(conversationID: conversation.id)
        #expect(tree.branches.count == 2)
        let all = try store.messages.all(conversationID: conversation.id, showingHidden: true)
        #expect(all.contains { $0.content == "It is a terminal app for chat histories." } && !all.contains { $0.content == "It is a terminal app." })
        // Appended: a reply to m6, read alone.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data((Self.json(["id": "m7", "timestamp": "2026-11-30T12:03:00.000Z", "type": "user", "content": "Why?"]) + "\n").utf8))
        try handle.close()
        let grown = Importer(store: store).run(paths: [path], format: nil)
        #expect(grown.filesAppended == 1 && grown.updated == 1, "\(grown)")
        let after = try #require(try ImportTests.conversation(store, source: "gemini", id: "g-2"))
        let seen = try store.messages.page(try store.messages.branch(of: after, leaf: nil), at: .first, limit: 20).items
        #expect(seen.map(\.content).suffix(2) == ["Another answer.", "Why?"])
        #expect(try store.check().problems.isEmpty)
    }
}
