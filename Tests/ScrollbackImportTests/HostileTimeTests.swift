import Foundation
import Testing

@testable import ScrollbackImport
import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// Numbers and dates from files are range-checked and parsed strictly: an impossible time
/// skips its record with the reason, never traps, and the rest of the file imports.
@Suite("Import: hostile times")
struct HostileTimeTests {
    /// A one-message ChatGPT conversation; `patch` rewrites its JSON text (to put numbers in
    /// that JSONSerialization would not write, like `1e16`).
    static func chatgptRecord(_ id: String, patch: (String) -> String = { $0 }) -> String {
        let text = """
            {"id": "\(id)", "title": "t \(id)", "create_time": 1700000000, "update_time": 1700000001, \
            "mapping": {"r": {"id": "r", "parent": null, "children": [], "message": {"author": {"role": "user"}, \
            "create_time": 1700000002, "content": {"content_type": "text", "parts": ["hello"]}}}}}
            """
        return patch(text)
    }

    @Test("strict ISO 8601: impossible fields, trailing text and years outside 1970–9999 are refused", arguments: [
        ("2026-13-45T25:61:61Z", nil), ("99999-01-01", nil), ("9999-99-99T99:99:99", nil), ("2026-02-29T00:00:00Z", nil),
        ("2026-04-31T00:00:00Z", nil), ("2026-01-01T24:00:00Z", nil), ("2026-01-01T00:00:00Zjunk", nil),
        ("2026-01-01T00:00:00.Z", nil), ("2026-01-01T00:00:00+25:00", nil), ("1969-12-31T23:59:59Z", nil),
        ("0000-01-01T00:00:00Z", nil), ("2026-01-01", nil), ("2026/01/01T00:00:00Z", nil), ("", nil),
        ("1970-01-01T00:00:00Z", 0), ("2024-02-29T12:00:00.5Z", 1_709_208_000_500),
        ("2026-02-01T09:00:00.123456+02:00", 1_769_929_200_123), ("2026-02-01T09:00:00+0200", 1_769_929_200_000),
        ("2026-02-01T09:00:00", 1_769_936_400_000), ("9999-12-31T23:59:59.999Z", 253_402_300_799_999),
    ] as [(String, Int64?)])
    func strictDates(text: String, milliseconds: Int64?) {
        #expect(ImportTime.iso8601(text)?.milliseconds == milliseconds, "\(text)")
    }

    @Test("ChatGPT: 1e16, 9.3e15, 1e300, a 30-digit integer or a negative time skips only its record")
    func chatgptNumbers() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("conversations.json")
        let records = [
            Self.chatgptRecord("good-1"),
            Self.chatgptRecord("a") { $0.replacingOccurrences(of: "\"create_time\": 1700000000", with: "\"create_time\": 1e16") },
            Self.chatgptRecord("b") { $0.replacingOccurrences(of: "\"create_time\": 1700000000", with: "\"create_time\": 9.3e15") },
            Self.chatgptRecord("c") { $0.replacingOccurrences(of: "\"update_time\": 1700000001", with: "\"update_time\": 1e300") },
            Self.chatgptRecord("d") {
                $0.replacingOccurrences(of: "\"update_time\": 1700000001", with: "\"update_time\": 123456789012345678901234567890")
            },
            Self.chatgptRecord("e") { $0.replacingOccurrences(of: "\"create_time\": 1700000002", with: "\"create_time\": 1e16") },
            Self.chatgptRecord("f") { $0.replacingOccurrences(of: "\"create_time\": 1700000000", with: "\"create_time\": -5") },
            Self.chatgptRecord("good-2"),
        ]
        try Data(("[" + records.joined(separator: ",\n") + "]").utf8).write(to: URL(fileURLWithPath: path))
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [path], format: nil)
        #expect(summary.failed.isEmpty, "\(summary.failed)")
        #expect(summary.inserted == 2)
        #expect(summary.skipped.map(\.record) == ["record 2", "record 3", "record 4", "record 5", "record 6", "record 7"])
        #expect(summary.skipped.allSatisfy { $0.reason.hasSuffix("is not a time between the years 1970 and 9999") }, "\(summary.skipped)")
        #expect(summary.skipped.first?.reason == "create_time 1e+16 is not a time between the years 1970 and 9999")
    }

    @Test("Claude: 2026-13-45T25:61:61Z or 99999-01-01 skips its record; the rest imports")
    func claudeDates() throws {
        func record(_ id: String, _ created: String, message: String = "2024-01-01T00:00:00Z") -> [String: Any] {
            ["uuid": id, "name": "n \(id)", "created_at": created,
             "chat_messages": [["uuid": "m", "sender": "human", "text": "hi", "created_at": message]]]
        }
        let folder = try TemporaryDirectory()
        let path = folder.file("conversations.json")
        let records = [
            record("k1", "2026-13-45T25:61:61Z"), record("k2", "99999-01-01"),
            record("k3", "2024-01-01T00:00:00Z", message: "2024-02-30T00:00:00Z"), record("k4", "2024-02-29T23:59:59.5+01:30"),
        ]
        try JSONSerialization.data(withJSONObject: records).write(to: URL(fileURLWithPath: path))
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [path], format: nil)
        #expect(summary.inserted == 1 && summary.failed.isEmpty)
        #expect(summary.skipped.map(\.reason) == [
            "created_at '2026-13-45T25:61:61Z' is not a valid time between the years 1970 and 9999",
            "created_at '99999-01-01' is not a valid time between the years 1970 and 9999",
            "a message's created_at '2024-02-30T00:00:00Z' is not a valid time between the years 1970 and 9999",
        ])
        let good = try #require(try ImportTests.conversation(store, source: "claude", id: "k4"))
        #expect(good.createdAt.iso8601 == "2024-02-29T22:29:59.500Z")
    }

    @Test("llm: a response or thread time of 9999-99-99T99:99:99 skips its conversation; the rest imports")
    func llmDates() throws {
        let folder = try TemporaryDirectory()
        let legacy = folder.file("legacy.db")
        let threads = folder.file("threads.db")
        try FileManager.default.copyItem(atPath: ImportTests.fixtures + "/llm/llm-0.31.1.db", toPath: legacy)
        try FileManager.default.copyItem(atPath: ImportTests.fixtures + "/llm/llm-0.36.db", toPath: threads)
        try sqlite(legacy, "UPDATE responses SET datetime_utc = '9999-99-99T99:99:99' WHERE rowid = (SELECT min(rowid) FROM responses)")
        try sqlite(threads, "UPDATE threads SET datetime_utc = '2026-13-45 25:61:61' WHERE rowid = (SELECT min(rowid) FROM threads)")
        let clean = try Store.open(path: ":memory:")
        let expected = Importer(store: clean).run(paths: [ImportTests.fixtures + "/llm/llm-0.31.1.db", ImportTests.fixtures + "/llm/llm-0.36.db"], format: nil)
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [legacy, threads], format: nil)
        #expect(summary.failed.isEmpty, "\(summary.failed)")
        #expect(summary.inserted == expected.inserted - 2)
        let reasons = summary.skipped.map(\.reason).filter { $0.contains("is not a valid time") }
        #expect(reasons == [
            "the time '9999-99-99T99:99:99' is not a valid time between the years 1970 and 9999",
            "the time '2026-13-45T25:61:61' is not a valid time between the years 1970 and 9999",
        ])
    }

    func sqlite(_ path: String, _ sql: String) throws {
        #expect(try runSQLiteShell(path, sql).status == 0)
    }
}
