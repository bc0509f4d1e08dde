import Foundation
import Testing

import ScrollbackImport
import ScrollbackModel
@testable import ScrollbackStorage
@testable import ScrollbackViewModels
import TestSupport

/// Generated exports with large trees, imported and read: a branch of 100,000 messages paged
/// to its end with a bounded number loaded, and a tree with 200 branch points five wide.
@Suite("Reader: large trees")
@MainActor
struct LargeTreeTests {
    static let start = 1_700_000_000

    /// A ChatGPT mapping node.
    static func node(_ id: String, parent: String?, role: String, text: String, second: Int) -> String {
        let parentText = parent.map { "\"\($0)\"" } ?? "null"
        return "\"\(id)\": {\"id\": \"\(id)\", \"parent\": \(parentText), \"children\": [], \"message\": {\"author\": {\"role\": \"\(role)\"}, "
            + "\"create_time\": \(start + second), \"content\": {\"content_type\": \"text\", \"parts\": [\"\(text)\"]}}}"
    }

    static func record(_ id: String, title: String, current: String, nodes: [String]) -> String {
        "{\"id\": \"\(id)\", \"title\": \"\(title)\", \"create_time\": \(start), \"current_node\": \"\(current)\", \"mapping\": {\(nodes.joined(separator: ", "))}}"
    }

    /// "long": 100,000 messages in a chain, and a second answer to the first question (so
    /// that the long branch is paged by the ids along it). "wide": a spine of 400 messages
    /// where every other one has four more versions, each followed by one more message.
    static func export(at path: String) throws {
        var long: [String] = [node("l0", parent: nil, role: "user", text: "message 0", second: 0)]
        for index in 1..<100_000 {
            long.append(node("l\(index)", parent: "l\(index - 1)", role: index % 2 == 0 ? "user" : "assistant", text: "message \(index)", second: index))
        }
        long.append(node("other", parent: "l0", role: "assistant", text: "another first answer", second: 200_000))
        var wide: [String] = [node("s0", parent: nil, role: "user", text: "spine 0", second: 0)]
        for index in 1..<400 {
            wide.append(node("s\(index)", parent: "s\(index - 1)", role: index % 2 == 0 ? "user" : "assistant", text: "spine \(index)", second: index * 10))
            if index % 2 == 1 {
                for version in 1...4 {
                    let id = "s\(index)v\(version)"
                    wide.append(node(id, parent: "s\(index - 1)", role: "assistant", text: "version \(version) of \(index)", second: index * 10 + version))
                    wide.append(node(id + "f", parent: id, role: "user", text: "after version \(version) of \(index)", second: index * 10 + version + 5))
                }
            }
        }
        let text = "[" + record("long", title: "Long", current: "l99999", nodes: long) + ", "
            + record("wide", title: "Wide", current: "s399", nodes: wide) + "]"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    @Test("100,000 messages along a branch: paged to the end and back with a bounded number loaded; 200 branch points switched")
    func largeTrees() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("conversations.json")
        try Self.export(at: path)
        let store = try Store.open(path: folder.file("trees.sqlite"))
        let summary = Importer(store: store).run(paths: [path], format: nil)
        #expect(summary.failed.isEmpty && summary.skipped.isEmpty && summary.inserted == 2, "\(summary)")
        let conversations = try store.conversations.page(sort: .title, at: .first, limit: 5).items
        let long = try #require(conversations.first { $0.title == "Long" })
        let wide = try #require(conversations.first { $0.title == "Wide" })
        #expect(long.messageCount == 100_001 && long.branchLength == 100_000 && long.isBranched)
        #expect(wide.messageCount == 400 + 200 * 8 && wide.branchLength == 400)

        // The long branch, to its end and back: never more than 400 messages loaded.
        let reader = try ReaderViewModel(conversation: long, messages: store.messages, width: 60, pageSize: 100, maximumLoaded: 400)
        reader.viewportHeight = 20
        try reader.open()
        #expect(reader.branch.path?.count == 100_000)
        try reader.toEnd()
        #expect(reader.focus == 99_999 && reader.focusedMessage?.content == "message 99999")
        #expect(reader.loadedCount <= 400)
        for _ in 0..<50 { try reader.pageUp() }
        #expect(reader.loadedCount <= 400)
        #expect((reader.topPosition ?? 0) < 99_999 && (reader.topPosition ?? 0) > 99_000)
        try reader.toStart()
        try reader.moveFocus(by: 1)
        #expect(reader.focusedSiblings! == (0, 2))
        #expect(try reader.switchSibling(by: 1)! == (1, 2))
        #expect(reader.branchCount == 2)
        #expect(try reader.switchSibling(by: -1)! == (0, 2))
        #expect(reader.branchCount == 100_000)

        // The wide tree: every branch point deep down has five versions, in time order.
        let tree = try store.messages.tree(conversationID: wide.id)
        #expect(tree.branches.count == 801)
        let wideReader = try ReaderViewModel(conversation: wide, messages: store.messages, width: 60)
        wideReader.viewportHeight = 20
        try wideReader.open()
        try wideReader.show(position: 399)
        #expect(wideReader.focusedSiblings! == (0, 5))
        for version in 1...4 {
            #expect(try wideReader.switchSibling(by: 1)! == (version, 5))
            #expect(wideReader.branchCount == 401 && wideReader.focusedMessage?.content == "version \(version) of 399")
        }
        #expect(try wideReader.switchSibling(by: 1) == nil)
        try wideReader.toEnd()
        #expect(wideReader.focusedMessage?.content == "after version 4 of 399")
        // A version at the top, then back: the branch left there (version 4 at the bottom)
        // is remembered.
        try wideReader.show(position: 1)
        _ = try wideReader.switchSibling(by: 1)
        #expect(wideReader.branchCount == 3 && wideReader.focusedMessage?.content == "version 1 of 1")
        _ = try wideReader.switchSibling(by: -1)
        #expect(wideReader.branchCount == 401 && wideReader.focusedMessage?.content == "spine 1")
        try wideReader.toEnd()
        #expect(wideReader.focusedMessage?.content == "after version 4 of 399")
        #expect(try store.check().problems.isEmpty)
    }
}
