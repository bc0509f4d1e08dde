import Foundation
import Testing

@testable import ScrollbackImport
import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// A ChatGPT `mapping` is read in place: per node only a small fixed record (ids and where
/// its message is), and only the messages of the transcript are parsed.
@Suite("Import: long ChatGPT conversations")
struct ChatGPTLongConversationTests {
    @Test("the per-node record is small and fixed: ids and a byte range, no parsed values")
    func nodeRecord() {
        #expect(MemoryLayout<ChatGPTExport.Node>.stride <= 48)
    }

    @Test("a message on another branch that cannot be read is left out; the rest is kept")
    func offBranchNotParsed() throws {
        func node(_ id: String, parent: String?, children: [String], message: String) -> String {
            let parentText = parent.map { "\"\($0)\"" } ?? "null"
            let childText = children.map { "\"\($0)\"" }.joined(separator: ",")
            return "\"\(id)\": {\"id\": \"\(id)\", \"parent\": \(parentText), \"children\": [\(childText)], \"message\": \(message)}"
        }
        func message(_ role: String, _ text: String, time: Int) -> String {
            "{\"author\": {\"role\": \"\(role)\"}, \"create_time\": \(time), \"content\": {\"content_type\": \"text\", \"parts\": [\"\(text)\"]}}"
        }
        // A long chain, shuffled as real exports are, with a broken message on a side branch.
        var nodes = [node("n0", parent: nil, children: ["n1"], message: "null")]
        let count = 400
        for index in 1...count {
            let children = index < count ? ["n\(index + 1)"] + (index == 7 ? ["side"] : []) : []
            nodes.append(
                node("n\(index)", parent: "n\(index - 1)", children: children,
                     message: message(index % 2 == 1 ? "user" : "assistant", "message \(index)", time: 1_700_000_000 + index)))
        }
        nodes.append(node("side", parent: "n7", children: [], message: "{\"author\": {\"role\": \"user\"}, \"content\": {\"parts\": [tru, \"\\ud800\",]}}"))
        var generator = SystemRandomNumberGenerator()
        nodes.shuffle(using: &generator)
        let record = "[{\"id\": \"long\", \"title\": \"Long\", \"create_time\": 1700000000, \"current_node\": \"n\(count)\", "
            + "\"mapping\": {\(nodes.joined(separator: ", "))}}]"
        let folder = try TemporaryDirectory()
        let path = folder.file("conversations.json")
        try Data(record.utf8).write(to: URL(fileURLWithPath: path))
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [path], format: nil)
        // Left out, and said.
        #expect(summary.failed.isEmpty && summary.skipped.map(\.reason.count).count == 1, "\(summary)")
        #expect(summary.skipped.first?.reason.hasPrefix("a message on another branch left out, the rest kept") == true)
        let transcript = try ImportTests.transcript(store, source: "chatgpt", id: "long")
        #expect(transcript.count == count)
        #expect(transcript.first == "user: message 1" && transcript.last == "assistant: message \(count)")
    }
}
