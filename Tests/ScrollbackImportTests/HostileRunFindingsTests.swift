import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackImport
@testable import ScrollbackStorage
import TestSupport

/// Found by a hostile run after the import hardening: each record is skipped with its true
/// reason, never stored with a wrong date or skipped for a false one.
@Suite("Import: hostile-run findings")
struct HostileRunFindingsTests {
    @Test("a ChatGPT time given as text or true is skipped with its reason, not stored as 1970")
    func timesThatAreNotNumbers() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("conversations.json")
        func record(_ id: String, conversationTime: String, messageTime: String) -> String {
            """
            {"id":"\(id)","title":"\(id)","create_time":\(conversationTime),"update_time":null,"current_node":"a",
             "mapping":{"a":{"id":"a","parent":null,"children":[],"message":{"id":"a","author":{"role":"user"},
             "content":{"content_type":"text","parts":["t"]},"create_time":\(messageTime)}}}}
            """
        }
        let records = [
            record("text", conversationTime: "\"1700000000\"", messageTime: "1700000000"),
            record("bool", conversationTime: "true", messageTime: "1700000000"),
            record("bool-false", conversationTime: "false", messageTime: "1700000000"),
            record("message", conversationTime: "1700000000", messageTime: "\"soon\""),
            record("fine", conversationTime: "1700000000", messageTime: "null"),
            // 0 and 1 are numbers (on Linux they also cast to Bool; they were skipped as one).
            record("zero", conversationTime: "0", messageTime: "1"),
        ]
        try ("[" + records.joined(separator: ",") + "]").write(toFile: path, atomically: false, encoding: .utf8)
        let store = try Store.open(path: folder.file("h.sqlite"))
        let summary = Importer(store: store).run(paths: [path], format: nil)
        #expect(summary.inserted == 2)
        #expect(summary.skipped.map(\.reason) == [
            "create_time is not a number of seconds", "create_time is not a number of seconds", "create_time is not a number of seconds",
            "a message's create_time is not a number of seconds",
        ])
        let stored = try store.conversations.page(sort: .created, at: .first, limit: 5).items
        #expect(stored.map(\.title) == ["fine", "zero"])
        #expect(stored.last?.createdAt.milliseconds == 0)
        #expect(stored.first?.createdAt.milliseconds == 1_700_000_000_000)
    }

    @Test("a JSON Lines record with an empty source is skipped for that reason")
    func emptySource() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("backup.jsonl")
        let line = """
            {"format":"scrollback","version":1,"id":"99999999-0000-4000-8000-000000000001","title":"s","createdAt":"2026-01-01T10:00:00.000Z","updatedAt":"2026-01-01T11:00:00.000Z","source":"","pinned":false,"messages":[{"id":"99999999-0000-4000-8000-0000000000a1","role":"user","content":"c","createdAt":"2026-01-01T10:00:00.000Z"}]}
            """
        try (line + "\n").write(toFile: path, atomically: false, encoding: .utf8)
        let store = try Store.open(path: folder.file("h.sqlite"))
        let summary = Importer(store: store).run(paths: [path], format: nil)
        #expect(summary.skipped.map(\.reason) == ["its source is empty"])
    }
}
