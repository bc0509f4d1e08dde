import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackImport
@testable import ScrollbackStorage
import TestSupport

/// Shapes of real exports that came out wrong: Code Interpreter cells, old Claude exports
/// listing messages out of time order, a single Claude conversation saved from the web app.
@Suite("Import: real export shapes")
struct RealExportShapesTests {
    static func transcript(_ store: Store) throws -> [String] {
        let conversation = try #require(try store.conversations.page(sort: .created, at: .first, limit: 1).items.first)
        return try store.messages.page(conversationID: conversation.id, at: .first, limit: 50).items.map { "\($0.role.rawValue): \($0.content)" }
    }

    @Test("a Code Interpreter cell (to python) is kept as code before its output; a drawn plot reads [image]")
    func codeInterpreter() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("conversations.json")
        func node(_ id: String, parent: String?, child: String?, _ message: String) -> String {
            "\"\(id)\":{\"id\":\"\(id)\",\"parent\":\(parent.map { "\"\($0)\"" } ?? "null"),\"children\":[\(child.map { "\"\($0)\"" } ?? "")],\"message\":\(message)}"
        }
        let nodes = [
            node("u", parent: nil, child: "c", #"{"id":"u","author":{"role":"user"},"create_time":1700000001,"content":{"content_type":"text","parts":["plot it"]}}"#),
            node("c", parent: "u", child: "o", #"{"id":"c","author":{"role":"assistant"},"recipient":"python","create_time":1700000002,"content":{"content_type":"code","language":"unknown","text":"plt.plot(x)"}}"#),
            node("o", parent: "c", child: "b", #"{"id":"o","author":{"role":"tool","name":"python"},"create_time":1700000003,"content":{"content_type":"execution_output","text":"<<ImageDisplayed>>"}}"#),
            node("b", parent: "o", child: "a", #"{"id":"b","author":{"role":"assistant"},"recipient":"dalle.text2im","create_time":1700000004,"content":{"content_type":"text","parts":["{\"prompt\":\"x\"}"]}}"#),
            node("a", parent: "b", child: nil, #"{"id":"a","author":{"role":"assistant"},"recipient":"all","create_time":1700000005,"content":{"content_type":"text","parts":["Here it is."]}}"#),
        ]
        let record = "[{\"id\":\"ci\",\"title\":\"plot\",\"create_time\":1700000001,\"current_node\":\"a\",\"mapping\":{\(nodes.joined(separator: ","))}}]"
        try record.write(toFile: path, atomically: false, encoding: .utf8)
        let store = try Store.open(path: folder.file("s.sqlite"))
        let summary = Importer(store: store).run(paths: [path], format: nil)
        #expect(summary.inserted == 1, "\(summary.failed) \(summary.skipped)")
        #expect(try Self.transcript(store) == ["user: plot it", "assistant: ```\nplt.plot(x)\n```", "tool: ```\n[image]\n```", "assistant: Here it is."])
    }

    @Test("an old Claude export without parents is read in time order, the file's order breaking ties")
    func claudeWithoutParents() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("conversations.json")
        let messages = [
            #"{"uuid":"m3","sender":"human","text":"and a follow-up","created_at":"2024-05-01T10:02:00Z"}"#,
            #"{"uuid":"m1","sender":"human","text":"first question","created_at":"2024-05-01T10:00:00Z"}"#,
            #"{"uuid":"m2a","sender":"assistant","text":"first answer","created_at":"2024-05-01T10:01:00Z"}"#,
            #"{"uuid":"m2b","sender":"assistant","text":"same second, later in the file","created_at":"2024-05-01T10:01:00Z"}"#,
        ]
        let record = "[{\"uuid\":\"old\",\"name\":\"old\",\"created_at\":\"2024-05-01T10:00:00Z\",\"chat_messages\":[\(messages.joined(separator: ","))]}]"
        try record.write(toFile: path, atomically: false, encoding: .utf8)
        let store = try Store.open(path: folder.file("s.sqlite"))
        #expect(Importer(store: store).run(paths: [path], format: nil).inserted == 1)
        #expect(try Self.transcript(store) == [
            "user: first question", "assistant: first answer", "assistant: same second, later in the file", "user: and a follow-up",
        ])
    }

    @Test("a single Claude conversation object is imported, on its current leaf's branch")
    func singleClaudeConversation() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("conversation.json")
        let root = ClaudeExport.rootParent
        // Pretty-printed, as a viewer saves it; the current leaf is the older of two answers.
        let object = """
            {
              "uuid": "single-1",
              "name": "saved from the web app",
              "created_at": "2025-02-01T09:00:00Z",
              "current_leaf_message_uuid": "a1",
              "chat_messages": [
                {"uuid": "q", "parent_message_uuid": "\(root)", "sender": "human", "text": "question", "created_at": "2025-02-01T09:00:00Z"},
                {"uuid": "a1", "parent_message_uuid": "q", "sender": "assistant", "text": "the answer kept", "created_at": "2025-02-01T09:01:00Z"},
                {"uuid": "a2", "parent_message_uuid": "q", "sender": "assistant", "text": "a retry", "created_at": "2025-02-01T09:05:00Z"}
              ]
            }
            """
        try object.write(toFile: path, atomically: false, encoding: .utf8)
        #expect(try Importer.detect(path) == .claude)
        let store = try Store.open(path: folder.file("s.sqlite"))
        let summary = Importer(store: store).run(paths: [path], format: nil)
        #expect(summary.failed.isEmpty, "\(summary.failed)")
        #expect(summary.inserted == 1)
        #expect(try Self.transcript(store) == ["user: question", "assistant: the answer kept"])
        // Again: the same conversation, not a second one.
        #expect(Importer(store: store).run(paths: [path], format: .claude).unchanged == 1)
        // Any other object is still not a chat export.
        try #"{"uuid": "x", "something": []}"#.write(toFile: path, atomically: false, encoding: .utf8)
        #expect(throws: ImportError.self) { try Importer.detect(path) }
    }
}
