import Foundation
@testable import ScrollbackExport
import Testing

@testable import ScrollbackImport
import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// Ids, broken records and files that are not files: each bad record is skipped with its
/// reason and the rest of the file imports; what is not a file is refused without opening it.
@Suite("Import: hostile records and files")
struct HostileRecordTests {
    static func jsonLine(id: String, title: String, messageID: String = "m1", source: String = "local") -> String {
        let record: [String: Any] = [
            "format": "scrollback", "version": 1, "id": id, "title": title, "source": source,
            "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z", "pinned": false,
            "messages": [["id": messageID, "role": "user", "content": "hi", "createdAt": "2026-01-01T00:00:00.000Z"]],
        ]
        let data = (try? JSONSerialization.data(withJSONObject: record, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    static func isLowerCaseUUID(_ text: String) -> Bool {
        text.range(of: "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", options: .regularExpression) != nil
    }

    @Test("JSON Lines ids that are not UUIDs are replaced (the same on every import); UUIDs are lower-cased")
    func jsonLinesIDs() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("backup.jsonl")
        let escape = "\u{1B}[2J\u{1B}[31m" + String(repeating: "A", count: 27)
        let lines = [
            Self.jsonLine(id: escape, title: "escape", messageID: "\u{1B}[2Jmessage"),
            Self.jsonLine(id: "/../../a" + String(repeating: "a", count: 28), title: "slash"),
            Self.jsonLine(id: "3F2A9C1E-5B7D-4E0A-9C1B-2D3E4F5A6B7C", title: "upper", messageID: "3F2A9C1E-5B7D-4E0A-9C1B-2D3E4F5A6B7D"),
        ]
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [path], format: nil)
        #expect(summary.inserted == 3 && summary.skipped.isEmpty && summary.failed.isEmpty, "\(summary)")
        let ids = try store.database.query("SELECT public_id, title FROM conversation ORDER BY title") { ($0.text(0), $0.text(1)) }
        #expect(ids.allSatisfy { Self.isLowerCaseUUID($0.0) }, "\(ids)")
        #expect(ids.first { $0.1 == "upper" }?.0 == "3f2a9c1e-5b7d-4e0a-9c1b-2d3e4f5a6b7c")
        let messageIDs = try store.database.query("SELECT public_id FROM message") { $0.text(0) }
        #expect(messageIDs.allSatisfy(Self.isLowerCaseUUID) && messageIDs.contains("3f2a9c1e-5b7d-4e0a-9c1b-2d3e4f5a6b7d"))
        let again = Importer(store: store).run(paths: [path], format: nil)
        #expect(again.unchanged == 3 && again.inserted == 0)
    }

    @Test("a JSON Lines record whose ids belong to another conversation is skipped, not the file")
    func collidingIDs() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("backup.jsonl")
        let lines = [
            Self.jsonLine(id: "11111111-1111-4111-8111-111111111111", title: "first", messageID: "22222222-2222-4222-8222-222222222222"),
            Self.jsonLine(id: "33333333-3333-4333-8333-333333333333", title: "same message id", messageID: "22222222-2222-4222-8222-222222222222"),
            Self.jsonLine(id: "44444444-4444-4444-8444-444444444444", title: "fine"),
        ]
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: path))
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [path], format: nil)
        #expect(summary.failed.isEmpty, "\(summary.failed)")
        #expect(summary.inserted == 2)
        #expect(summary.skipped.map(\.record) == ["line 2"])
        #expect(summary.skipped.map(\.reason) == ["its id or a message id belongs to another conversation already stored"])
        #expect(try store.conversations.count() == 2)
        #expect(try store.database.scalarInt("SELECT count(*) FROM message") == 2)
        // A message id twice in one record is said to be that.
        var twice = try #require(try JSONSerialization.jsonObject(with: Data(Self.jsonLine(id: "55555555-5555-4555-8555-555555555555", title: "twice", messageID: "66666666-6666-4666-8666-666666666666").utf8)) as? [String: Any])
        let message = try #require((twice["messages"] as? [[String: Any]])?.first)
        twice["messages"] = [message, message]
        try JSONSerialization.data(withJSONObject: twice).write(to: URL(fileURLWithPath: path))
        let again = Importer(store: store).run(paths: [path], format: nil)
        #expect(again.skipped.map(\.reason) == ["two of its messages have the same id"])
    }

    /// Found by a hostile run: importing an older export after a newer one put the older
    /// copy back, and the messages added since were gone without a word.
    @Test("an older copy of a stored conversation (fewer messages, the same first ones) leaves it as it is")
    func olderCopyKeepsNewer() throws {
        let folder = try TemporaryDirectory()
        func line(title: String, messages: Int, updated: String) -> String {
            let record: [String: Any] = [
                "format": "scrollback", "version": 1, "id": "11111111-1111-4111-8111-111111111111", "title": title, "source": "local",
                "createdAt": "2024-01-01T00:00:00.000Z", "updatedAt": updated, "pinned": false,
                "messages": (0..<messages).map { index in
                    [
                        "id": "22222222-2222-4222-8222-\(String(format: "%012d", index))", "role": index % 2 == 0 ? "user" : "assistant",
                        "content": "message \(index)", "createdAt": "2024-01-01T00:0\(index):00.000Z",
                    ] as [String: Any]
                },
            ]
            let data = (try? JSONSerialization.data(withJSONObject: record, options: [.sortedKeys])) ?? Data()
            return String(decoding: data, as: UTF8.self)
        }
        let newer = folder.file("newer.jsonl")
        let older = folder.file("older.jsonl")
        try line(title: "NEW", messages: 5, updated: "2024-06-01T00:00:00.000Z").write(toFile: newer, atomically: false, encoding: .utf8)
        try line(title: "OLD", messages: 2, updated: "2024-01-02T00:00:00.000Z").write(toFile: older, atomically: false, encoding: .utf8)
        let store = try Store.open(path: ":memory:")
        #expect(Importer(store: store).run(paths: [newer], format: nil).inserted == 1)
        let again = Importer(store: store).run(paths: [older], format: nil)
        #expect(again.unchanged == 1 && again.updated == 0)
        let stored = try #require(try store.conversations.page(sort: .created, at: .first, limit: 1).items.first)
        #expect(stored.title == "NEW" && stored.messageCount == 5)
        // The other way round, the newer copy replaces the older one as before.
        let other = try Store.open(path: ":memory:")
        _ = Importer(store: other).run(paths: [older], format: nil)
        #expect(Importer(store: other).run(paths: [newer], format: nil).updated == 1)
        #expect(try other.conversations.page(sort: .created, at: .first, limit: 1).items.first?.messageCount == 5)
    }

    @Test("export file names never hold /, .., or control characters, whatever the database holds")
    func exportFileNames() throws {
        // As a database written before ids were checked could hold them.
        let stored = ConversationDTO(
            id: 1, publicID: "/../../\u{1B}[2Jb" + String(repeating: "c", count: 24), title: "../../\u{1B}[2J etc/passwd\u{202E}.. \u{0}x",
            model: nil, source: "local", sourceID: nil, createdAt: Timestamp(milliseconds: 1_767_225_600_000),
            updatedAt: Timestamp(milliseconds: 1_767_225_600_000), messageCount: 0, pinned: false)
        let name = Exporter.fileName(for: stored, format: .md)
        #expect(name == "2026-01-01-2bcccccc-2j-etc-passwd-x.md", "\(name)")
        #expect(!name.contains("/") && !name.contains("..") && !name.unicodeScalars.contains { $0.properties.generalCategory == .control })
    }

    @Test("a lone surrogate or invalid UTF-8 in one record skips that record; the others import")
    func badRecordsInArray() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("conversations.json")
        let good = HostileTimeTests.chatgptRecord("good")
        let surrogate = HostileTimeTests.chatgptRecord("s") { $0.replacingOccurrences(of: "\"hello\"", with: "\"bad \\ud800 here\"") }
        var data = Data("[".utf8) + Data(surrogate.utf8) + Data(",".utf8)
        data += Data(HostileTimeTests.chatgptRecord("l") { $0.replacingOccurrences(of: "hello", with: "h\u{1}llo") }.utf8)
            .map { $0 == 1 ? 0xFF : $0 }
        data += Data(",".utf8) + Data(good.utf8) + Data("]".utf8)
        try data.write(to: URL(fileURLWithPath: path))
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [path], format: nil)
        #expect(summary.failed.isEmpty, "\(summary.failed)")
        #expect(summary.inserted == 1)
        #expect(summary.skipped.map(\.record) == ["record 1", "record 2"])
        #expect(summary.skipped.first?.reason.hasPrefix("malformed JSON") == true)
        #expect(summary.skipped.last?.reason.hasPrefix("not UTF-8 text") == true)
    }

    @Test("JSON Lines: a bad first line, a line of invalid UTF-8 or of another shape is skipped; the rest imports")
    func badLines() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("backup.jsonl")
        var data = Data("not json at all {\n".utf8)
        data += Data((Self.jsonLine(id: "11111111-1111-4111-8111-111111111111", title: "one") + "\n").utf8)
        data += Data([0x7B, 0xFF, 0x7D, 0x0A])
        data += Data("{\"format\": \"scrollback\"}\n".utf8)
        data += Data((Self.jsonLine(id: "22222222-2222-4222-8222-222222222222", title: "two") + "\n").utf8)
        try data.write(to: URL(fileURLWithPath: path))
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [path], format: nil)
        #expect(summary.failed.isEmpty, "\(summary.failed)")
        #expect(summary.inserted == 2)
        #expect(summary.skipped.map { "\($0.record): \($0.reason)" } == [
            "line 1: not a scrollback record", "line 3: not UTF-8 text", "line 4: not a scrollback record: version is missing",
        ])
    }

    @Test("a FIFO is refused without being opened (no hang); so is one named conversations.json in a folder")
    func fifo() throws {
        let folder = try TemporaryDirectory()
        let pipe = folder.file("pipe.json")
        #expect(mkfifo(pipe, 0o600) == 0)
        let export = try TemporaryDirectory()
        #expect(mkfifo(export.file("conversations.json"), 0o600) == 0)
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [pipe, export.path, ImportTests.claude], format: nil)
        #expect(summary.failed.map(\.description) == [
            "\(pipe): a FIFO (named pipe), not a file; save the export to a file and import that",
            "\(export.file("conversations.json")): a FIFO (named pipe), not a file; save the export to a file and import that",
        ])
        #expect(summary.inserted == 2)
        let device = Importer(store: store).run(paths: ["/dev/null"], format: nil)
        #expect(device.failed.map(\.problem) == ["a device, not a file; import an export file or folder"])
    }
}
