import Foundation
import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport
import Testing

@testable import ScrollbackImport

/// Sessions of coding agents carry images inline, as base64: kept as attachments, byte for
/// byte, in the message they were pasted into (or the tool result that made them).
@Suite("Attachments inline in agents' sessions")
struct InlineAttachmentTests {
    static func line(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    @Test("Claude Code: a pasted screenshot alone, one beside words, a tool's screenshot; damaged base64 and a URL are kept as missing, saying why")
    func claudeCode() throws {
        let folder = try TemporaryDirectory()
        let png = try TestFiles.image("png", width: 64, height: 40, in: folder)
        let jpeg = try TestFiles.image("jpg", width: 30, height: 20, in: folder)
        func user(_ id: String, parent: String?, _ content: [[String: Any]], second: Int) -> [String: Any] {
            ["type": "user", "uuid": id, "parentUuid": parent as Any, "sessionId": "s-inline", "cwd": "/tmp/p", "timestamp": "2026-01-01T10:00:0\(second).000Z",
             "message": ["role": "user", "content": content]]
        }
        let lines = [
            user("u1", parent: nil, [["type": "image", "source": ["type": "base64", "media_type": "image/png", "data": Data(png).base64EncodedString()]]], second: 1),
            user("u2", parent: "u1", [
                ["type": "text", "text": "and this one"], ["type": "image", "source": ["type": "base64", "media_type": "image/jpeg", "data": Data(jpeg).base64EncodedString()]],
                ["type": "image", "source": ["type": "base64", "media_type": "image/png", "data": "@@@ not base64 @@@"]],
                ["type": "image", "source": ["type": "url", "url": "https://example.com/x.png"]],
            ], second: 2),
            user("u3", parent: "u2", [["type": "tool_result", "tool_use_id": "t1", "content": [
                ["type": "text", "text": "took a screenshot"], ["type": "image", "source": ["type": "base64", "media_type": "image/png", "data": Data(png).base64EncodedString()]],
            ]]], second: 3),
        ]
        let path = folder.file("s-inline.jsonl")
        try (try lines.map(Self.line).joined(separator: "\n") + "\n").write(toFile: path, atomically: false, encoding: .utf8)
        let store = try Store.open(path: folder.file("s.sqlite"))
        let summary = Importer(store: store).run(paths: [path], format: .claudeCode)
        #expect(summary.failed.isEmpty && summary.inserted == 1, "\(summary)")
        let conversation = try #require(try store.conversations.page(sort: .created, filter: .none, at: .first, limit: 1).items.first)
        let files = try store.attachments(conversation: conversation.id)
        #expect(files.map(\.name) == ["image-1.png", "image-1.jpg", "image-2.png", "image-3", "image-1.png"])
        #expect(files.map(\.isStored) == [true, true, false, false, true])
        #expect(files[0].width == 64 && files[0].height == 40 && files[1].mime == "image/jpeg" && files[1].width == 30)
        #expect(files[2].absence == "its base64 in the session file is damaged" && files[3].reference == "https://example.com/x.png")
        // The same screenshot twice is stored once.
        #expect(try store.attachmentTotals().files == 2)
        var read: [UInt8] = []
        try store.readAttachment(sha256: try #require(files[0].sha256)) { read += $0 }
        #expect(read == png)
        let messages = try store.messages.all(conversationID: conversation.id, showingHidden: true)
        #expect(messages.first?.content == "" && messages.first?.attachments.count == 1, "a message of an image alone")
        #expect(!messages.contains { $0.content.contains("[image]") })
        #expect(try store.check().problems.isEmpty)
        // Followed again (the same file): nothing new, nothing stored twice.
        let again = Importer(store: store).run(paths: [path], format: .claudeCode)
        let filesAgain = try store.attachmentTotals().files
        #expect(again.inserted == 0 && filesAgain == 2)
    }

    @Test("Codex: an input_image data URL is an attachment of its message; a plain URL a reference")
    func codex() throws {
        let folder = try TemporaryDirectory()
        let png = try TestFiles.image("png", width: 16, height: 16, in: folder)
        let lines: [[String: Any]] = [
            ["timestamp": "2026-01-01T10:00:00.000Z", "type": "session_meta", "payload": ["id": "0199a2b3-c4d5-7e6f-8a9b-0c1d2e3f4a5b", "cwd": "/tmp/p", "timestamp": "2026-01-01T10:00:00.000Z"]],
            ["timestamp": "2026-01-01T10:00:01.000Z", "type": "response_item", "payload": ["type": "message", "role": "user", "content": [
                ["type": "input_text", "text": "what is this?"], ["type": "input_image", "image_url": "data:image/png;base64," + Data(png).base64EncodedString()],
            ]]],
            ["timestamp": "2026-01-01T10:00:02.000Z", "type": "response_item", "payload": ["type": "message", "role": "user", "content": [
                ["type": "input_image", "image_url": "https://example.com/y.png"],
            ]]],
        ]
        let path = folder.file("rollout-2026-01-01T10-00-00-0199a2b3-c4d5-7e6f-8a9b-0c1d2e3f4a5b.jsonl")
        try (try lines.map(Self.line).joined(separator: "\n") + "\n").write(toFile: path, atomically: false, encoding: .utf8)
        let store = try Store.open(path: folder.file("s.sqlite"))
        let summary = Importer(store: store).run(paths: [path], format: .codex)
        #expect(summary.failed.isEmpty && summary.inserted == 1, "\(summary)")
        let conversation = try #require(try store.conversations.page(sort: .created, filter: .none, at: .first, limit: 1).items.first)
        let files = try store.attachments(conversation: conversation.id)
        #expect(files.map(\.name) == ["image-1.png", "image-1"] && files.map(\.isStored) == [true, false], "\(files)")
        let messages = try store.messages.all(conversationID: conversation.id, showingHidden: true)
        #expect(messages.contains { $0.content == "what is this?" && $0.attachments.count == 1 })
        #expect(try store.check().problems.isEmpty)
    }

    @Test("llm: an attachment's bytes in its log are kept (read when stored), a path or URL is a reference; the log is never written")
    func llm() throws {
        let folder = try TemporaryDirectory()
        let png = try TestFiles.image("png", width: 24, height: 24, in: folder)
        let image = folder.file("p.png")
        try Data(png).write(to: URL(fileURLWithPath: image))
        let log = folder.file("logs.db")
        try FileManager.default.copyItem(atPath: ImportTests.fixtures + "/llm/llm-0.31.1.db", toPath: log)
        let sql = """
            INSERT INTO attachments VALUES ('att1', 'image/png', NULL, NULL, readfile('\(image)'));
            INSERT INTO attachments VALUES ('att2', 'image/jpeg', '/home/me/pic.jpg', NULL, NULL);
            INSERT INTO prompt_attachments VALUES ('01m8nx166sz932jhjxds08dr5f', 'att1', 0), ('01m8nx166sz932jhjxds08dr5f', 'att2', 1);
            """
        #expect(try ChildProcess.run("/usr/bin/sqlite3", [log, sql]).ending.status == 0)
        let before = FileManager.default.contents(atPath: log)
        let store = try Store.open(path: folder.file("s.sqlite"))
        let summary = Importer(store: store).run(paths: [log], format: .llm)
        #expect(summary.failed.isEmpty && summary.unreadable.isEmpty, "\(summary)")
        let all = try store.database.query(
            "SELECT a.name, a.mime, a.content_id IS NOT NULL, coalesce(a.absence, ''), coalesce(a.reference, '') FROM attachment a ORDER BY a.id"
        ) { "\($0.text(0)) \($0.optionalText(1) ?? "-") \($0.int(2)) \($0.text(3)) \($0.text(4))" }
        #expect(all == ["attachment-1 image/png 1  llm-attachment:att1", "pic.jpg image/jpeg 0 llm keeps only its path, not the file /home/me/pic.jpg"], "\(all)")
        let hash = try #require(try store.database.query("SELECT sha256 FROM attachment_content") { $0.text(0) }.first)
        var read: [UInt8] = []
        try store.readAttachment(sha256: hash) { read += $0 }
        #expect(read == png)
        #expect(FileManager.default.contents(atPath: log) == before, "the log is not written")
        #expect(try store.check().problems.isEmpty)
    }
}
