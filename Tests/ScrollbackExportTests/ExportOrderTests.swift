import Foundation
import Testing

@testable import ScrollbackExport
import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// Two machines that hold the same tree, stored in another order (one imported it in two
/// steps, the other at once; sync delivers in the order machines are read), export the same
/// bytes: anyone's backup check compares them.
@Suite("Export: the order of a conversation's messages is the tree's own")
struct ExportOrderTests {
    static let start: Int64 = 1_760_000_000_000

    static func message(_ node: String, _ role: Role, at offset: Int64, under parent: String?) -> ImportedMessage {
        ImportedMessage(
            role: role, content: "text of \(node)", createdAt: Timestamp(milliseconds: start + offset), nodeID: node,
            parent: parent.map { .node($0) } ?? .root)
    }

    static func conversation(_ messages: [ImportedMessage], current: String) -> ImportedConversation {
        ImportedConversation(
            source: "chatgpt", sourceID: "tree", title: "A tree", model: nil, createdAt: Timestamp(milliseconds: start),
            updatedAt: Timestamp(milliseconds: start + 9_000), messages: messages, currentNodeID: current)
    }

    @Test("the same tree stored in two orders exports the same Markdown, JSON and JSON Lines")
    func sameBytes() throws {
        let folder = try TemporaryDirectory()
        let question = Self.message("q", .user, at: 0, under: nil)
        let edited = Self.message("q2", .user, at: 500, under: nil)  // an edited first question
        let first = Self.message("a1", .assistant, at: 1_000, under: "q")
        let second = Self.message("a2", .assistant, at: 2_000, under: "q")
        let followUp = Self.message("f", .user, at: 3_000, under: "a2")
        let late = Self.message("g", .assistant, at: 4_000, under: "f")
        // One machine imported an older export first, then the newer one.
        let a = try Store.open(path: folder.file("a.sqlite"))
        _ = try a.upsert(Self.conversation([question, first], current: "a1"))
        _ = try a.upsert(Self.conversation([question, first, second, followUp, late, edited], current: "g"))
        // The other imported the newer one at once, its messages listed in another order.
        let b = try Store.open(path: folder.file("b.sqlite"))
        _ = try b.upsert(Self.conversation([edited, question, second, followUp, late, first], current: "g"))
        let positions = { (store: Store) in
            try store.database.query("SELECT source_node_id FROM message ORDER BY position") { $0.text(0) }
        }
        #expect(try positions(a) != positions(b), "the two stores must hold the tree in different orders for this test to mean anything")
        for format in ExportFormat.allCases {
            let exported = try [a, b].map { store in
                let exporter = Exporter(store: store)
                var text = ""
                try exporter.forEachConversation { text += try exporter.render($0, as: format) }
                return text
            }
            #expect(exported[0] == exported[1], "\(format)")
        }
        // Parents before children, siblings by time: q, a1, a2, f, g, then q2.
        let exporter = Exporter(store: a)
        var order: [String] = []
        try exporter.forEachConversation { conversation in
            order = try exporter.allMessages(of: conversation).map(\.content)
        }
        #expect(order == ["q", "a1", "a2", "f", "g", "q2"].map { "text of \($0)" })
    }

    @Test("a loop of parents (a damaged file) still exports every message, once each")
    func loop() {
        func dto(_ id: Int64, parent: Int64?) -> MessageDTO {
            MessageDTO(
                id: id, publicID: "m\(id)", conversationID: 1, position: 0, role: .user, content: "\(id)",
                createdAt: Timestamp(milliseconds: id), model: nil, parentID: parent)
        }
        let messages = [dto(1, parent: nil), dto(2, parent: 3), dto(3, parent: 2), dto(4, parent: 1), dto(5, parent: 99)]
        let ordered = Exporter.treeOrder(messages)
        #expect(ordered.map(\.id) == [1, 4, 5, 2, 3])
    }
}
