import Foundation
@testable import ScrollbackExport
import Testing

@testable import ScrollbackImport
import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// What a hostile tester found in the import of conversation trees, kept as tests.
@Suite("Import: hostile trees")
struct HostileTreeImportTests {
    static let folder = ImportTests.fixtures + "/hostile-trees/"

    @Test("a message on another branch that cannot be read is left out and said; the rest of the conversation is kept")
    func sideBranchUnreadable() throws {
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [Self.folder + "cg_sidebranch_surrogate.json"], format: nil)
        #expect(summary.failed.isEmpty && summary.inserted == 2, "\(summary)")
        let said = summary.skipped.filter { $0.reason.hasPrefix("a message on another branch left out, the rest kept") }
        #expect(said.count == 1 && said.first?.record == "record 1", "\(summary.skipped)")
        let id = "11111111-aaaa-4bbb-8ccc-000000000001"
        #expect(try TreeImportTests.nodes(store, source: "chatgpt", id: id).map(\.node) == ["u1", "a2", "u2", "t1", "c1", "x1", "a3"])
    }

    @Test("a Claude uuid that reads like a part's id keeps its own node; the current leaf is that message")
    func claudePartIDCollision() throws {
        let store = try Store.open(path: ":memory:")
        _ = Importer(store: store).run(paths: [Self.folder + "claude_hash_collision.json"], format: nil)
        let id = "cafe0000-0000-4000-8000-000000000001"
        let nodes = try TreeImportTests.nodes(store, source: "claude", id: id)
        #expect(nodes.map(\.node) == ["m1", "m3", "m3#2", "m3#2@2"], "\(nodes)")
        #expect(nodes.map(\.parent) == [nil, "m1", "m3", "m3#2"])
        #expect(try TreeImportTests.currentLeaf(store, source: "claude", id: id) == "m3#2@2")
        let newer = Importer(store: store).run(paths: [Self.folder + "claude_hash_collision_newer.json"], format: nil)
        #expect(newer.updated == 1, "\(newer)")
        let after = try TreeImportTests.nodes(store, source: "claude", id: id)
        #expect(after.count == 5 && after.last?.parent == "m3#2@2" && after.last?.text == "reply to the follow-up")
        #expect(try ImportTests.transcript(store, source: "claude", id: id).last == "assistant: reply to the follow-up")
        #expect(Importer(store: store).run(paths: [Self.folder + "claude_hash_collision_newer.json"], format: nil).unchanged == 1)
    }

    @Test("a current message with answers below it: the branch shown goes on to its newest leaf, and Markdown lists the rest right")
    func currentLeafNotALeaf() throws {
        let store = try Store.open(path: ":memory:")
        _ = Importer(store: store).run(paths: [Self.folder + "claude_leaf_nonleaf.json", Self.folder + "cg_current_hidden.json"], format: nil)
        #expect(try ImportTests.transcript(store, source: "claude", id: "d0000000-0000-4000-8000-0000000000a4") == ["user: q4", "assistant: a4.1", "user: follow up"])
        let chatgpt = try #require(try store.conversations.page(sort: .title, at: .first, limit: 5).items.first { $0.source == "chatgpt" })
        #expect(try ImportTests.transcript(store, source: "chatgpt", id: chatgpt.sourceID ?? "") == ["user: q4", "assistant: answer a1"])
        let claude = try #require(try ImportTests.conversation(store, source: "claude", id: "d0000000-0000-4000-8000-0000000000a4"))
        let markdown = try Exporter(store: store).render(claude, as: .md)
        #expect(markdown.hasSuffix("1 other branch (`scrollback show \(claude.publicID.prefix(8)) --all-branches`):\n\n- at message 2, assistant: a4.2 retry\n"), "\(markdown)")
    }

    @Test("JSON Lines: a parentID that names no earlier message, an unknown currentLeafID, a count out of range: skipped, saying which")
    func jsonlStrict() throws {
        let store = try Store.open(path: ":memory:")
        let forward = Importer(store: store).run(paths: [Self.folder + "jsonl_forward_parent.jsonl"], format: nil)
        #expect(forward.inserted == 0 && forward.skipped.map(\.reason) == ["a message's parentID names no message before it"])
        let work = try TemporaryDirectory()
        let path = work.file("records.jsonl")
        func record(_ messages: String, leaf: String = "\"a\"") -> String {
            "{\"format\":\"scrollback\",\"version\":1,\"id\":\"x\",\"title\":\"t\",\"source\":\"s\",\"createdAt\":\"2026-01-01T00:00:00.000Z\","
                + "\"updatedAt\":\"2026-01-01T00:00:00.000Z\",\"pinned\":false,\"currentLeafID\":\(leaf),\"messages\":[\(messages)]}"
        }
        let message = "{\"id\":\"a\",\"role\":\"user\",\"content\":\"hi\",\"createdAt\":\"2026-01-01T00:00:00.000Z\""
        let lines = [
            record(message + "}", leaf: "\"nope\""),
            record(message + ",\"inputTokens\":1e30}"),
            record(message + ",\"parentID\":\"a\"}"),
            record(message + ",\"sourceNodeID\":\"n\"}," + message.replacingOccurrences(of: "\"a\"", with: "\"b\"") + ",\"sourceNodeID\":\"n\"}"),
        ]
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: path))
        let summary = Importer(store: store).run(paths: [path], format: nil)
        #expect(summary.inserted == 0)
        #expect(summary.skipped.map(\.reason) == [
            "its currentLeafID names none of its messages",
            "not a scrollback record: messages[0].inputTokens is not of its kind (a whole number in range, …)",
            "a message's parentID names no message before it",
            "two of its messages have the same sourceNodeID",
        ])
    }
}
