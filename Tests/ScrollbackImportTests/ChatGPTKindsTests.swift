import Foundation
@testable import ScrollbackExport
import Testing

import ScrollbackModel
@testable import ScrollbackImport
@testable import ScrollbackStorage
import TestSupport

/// What the person saw in ChatGPT, and what the export holds besides: every message kept
/// with its kind, the seen ones shown, counted, searched and branched by default.
@Suite("Import: ChatGPT message kinds")
struct ChatGPTKindsTests {
    /// One node of a real-shaped export: its id, parent and message object (JSON text).
    struct Node {
        var id: String
        var parent: String?
        var message: String
    }

    static func message(
        _ id: String, role: String, name: String? = nil, recipient: String = "all", time: Int, content: String,
        metadata: String = "{}"
    ) -> String {
        let author = name.map { "{\"role\":\"\(role)\",\"name\":\"\($0)\"}" } ?? "{\"role\":\"\(role)\"}"
        return """
            {"id":"\(id)","author":\(author),"recipient":"\(recipient)","create_time":\(time),"content":\(content),"metadata":\(metadata)}
            """
    }

    static func text(_ value: String) -> String {
        "{\"content_type\":\"text\",\"parts\":[\(quoted(value))]}"
    }

    static func quoted(_ value: String) -> String {
        String(decoding: (try? JSONSerialization.data(withJSONObject: [value])) ?? Data(), as: UTF8.self).dropFirst().dropLast().description
    }

    static func export(_ nodes: [Node], id: String = "kinds-1", current: String, in folder: TemporaryDirectory, name: String = "conversations.json")
        throws -> String
    {
        let mapping = nodes.map { node in
            "\(quoted(node.id)):{\"id\":\(quoted(node.id)),\"parent\":\(node.parent.map(quoted) ?? "null"),\"children\":[],\"message\":\(node.message)}"
        }.joined(separator: ",")
        let record = "[{\"id\":\"\(id)\",\"title\":\"Kinds\",\"create_time\":1750000000,\"current_node\":\"\(current)\",\"mapping\":{\(mapping)}}]"
        let path = folder.file(name)
        try record.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    /// A conversation the way ChatGPT exports one that used memory, a canvas, browsing,
    /// image generation, o1 reasoning and custom instructions, with a regeneration that
    /// only reasoned.
    static var nodes: [Node] {
        let canvasCall = #"{"name":"Trip plan","type":"document","content":"Day 1: Kyoto\nDay 2: Nara"}"#
        let canvasUpdate = #"{"updates":[{"pattern":".*","multiple":false,"replacement":"Day 1: Kyoto\nDay 2: Osaka"}]}"#
        return [
            Node(id: "sys", parent: nil, message: message("sys", role: "system", time: 1_750_000_000, content: text("You are ChatGPT."), metadata: #"{"is_visually_hidden_from_conversation":true}"#)),
            Node(id: "ctx", parent: "sys", message: message("ctx", role: "user", time: 1_750_000_001, content: #"{"content_type":"user_editable_context","user_profile":"I live in Lisbon.","user_instructions":"Be brief."}"#, metadata: #"{"is_visually_hidden_from_conversation":true,"is_user_system_message":true}"#)),
            Node(id: "u1", parent: "ctx", message: message("u1", role: "user", time: 1_750_000_010, content: text("Remember I like trains, and plan a trip."))),
            Node(id: "bio", parent: "u1", message: message("bio", role: "assistant", recipient: "bio", time: 1_750_000_011, content: text("User likes trains."))),
            Node(id: "bioR", parent: "bio", message: message("bioR", role: "tool", name: "bio", time: 1_750_000_012, content: text("Model set context updated."))),
            Node(id: "cv", parent: "bioR", message: message("cv", role: "assistant", recipient: "canmore.create_textdoc", time: 1_750_000_013, content: text(canvasCall))),
            Node(id: "cvR", parent: "cv", message: message("cvR", role: "tool", name: "canmore.create_textdoc", time: 1_750_000_014, content: text("Successfully created text document 'Trip Plan' which will be referenced in all future messages with the unique identifier textdoc_id: '6823'"), metadata: #"{"canvas":{"textdoc_id":"6823","title":"Trip plan"}}"#)),
            Node(id: "a1", parent: "cvR", message: message("a1", role: "assistant", time: 1_750_000_015, content: text("I drafted a plan in the canvas."))),
            Node(id: "u2", parent: "a1", message: message("u2", role: "user", time: 1_750_000_020, content: text("Swap Nara for Osaka, and check the weather."))),
            Node(id: "up", parent: "u2", message: message("up", role: "assistant", recipient: "canmore.update_textdoc", time: 1_750_000_021, content: text(canvasUpdate))),
            Node(id: "upR", parent: "up", message: message("upR", role: "tool", name: "canmore.update_textdoc", time: 1_750_000_022, content: text("Successfully updated text document with textdoc_id '6823'"))),
            Node(id: "ws", parent: "upR", message: message("ws", role: "assistant", recipient: "browser", time: 1_750_000_023, content: text("search(\"Osaka weather May\")"))),
            Node(id: "wsR", parent: "ws", message: message("wsR", role: "tool", name: "browser", time: 1_750_000_024, content: ##"{"content_type":"tether_browsing_display","result":"# 【0†Osaka weather†weather.example】\nSunny, 24°C","summary":""}"##)),
            Node(id: "q", parent: "wsR", message: message("q", role: "tool", name: "browser", time: 1_750_000_025, content: #"{"content_type":"tether_quote","url":"https://weather.example/osaka","domain":"weather.example","title":"Osaka","text":"Sunny all week."}"#)),
            Node(id: "a2", parent: "q", message: message("a2", role: "assistant", time: 1_750_000_026, content: text("Updated. Osaka will be sunny."))),
            // A regeneration of a2 that only reasoned: no branch the person saw.
            Node(id: "r2", parent: "q", message: message("r2", role: "assistant", time: 1_750_000_027, content: #"{"content_type":"thoughts","thoughts":[{"summary":"Checking","content":"Maybe rain?"}]}"#)),
            Node(id: "u3", parent: "a2", message: message("u3", role: "user", time: 1_750_000_030, content: text("Draw me a train."))),
            Node(id: "img", parent: "u3", message: message("img", role: "assistant", recipient: "t2uay3k.sj1i4kz", time: 1_750_000_031, content: text(#"{"prompt":"a red train","size":"1024x1024"}"#))),
            Node(id: "imgR", parent: "img", message: message("imgR", role: "tool", name: "t2uay3k.sj1i4kz", time: 1_750_000_032, content: #"{"content_type":"multimodal_text","parts":[{"content_type":"image_asset_pointer","asset_pointer":"sediment://file_00001","width":1024,"height":1024}]}"#)),
            Node(id: "imgT", parent: "imgR", message: message("imgT", role: "tool", name: "t2uay3k.sj1i4kz", time: 1_750_000_033, content: text("GPT-4o returned 1 images. From now on, do not say or show ANYTHING. Please end this turn now."))),
            Node(id: "u4", parent: "imgT", message: message("u4", role: "user", time: 1_750_000_040, content: text("Is it a hard puzzle?"))),
            Node(id: "o1", parent: "u4", message: message("o1", role: "tool", name: "a8km123", time: 1_750_000_041, content: text("**Weighing the puzzle**\nIt is easy."), metadata: #"{"finished_text":"Thought for 3 seconds"}"#)),
            Node(id: "rr", parent: "o1", message: message("rr", role: "assistant", time: 1_750_000_042, content: #"{"content_type":"reasoning_recap","content":"Thought for 3s"}"#)),
            Node(id: "nw", parent: "rr", message: message("nw", role: "assistant", time: 1_750_000_043, content: #"{"content_type":"hologram_v9","frames":[1,2]}"#)),
            Node(id: "a4", parent: "nw", message: message("a4", role: "assistant", time: 1_750_000_044, content: text("Not hard at all."))),
        ]
    }

    static func seen(_ store: Store) throws -> [MessageDTO] {
        let conversation = try #require(try store.conversations.page(sort: .created, at: .first, limit: 1).items.first)
        return try store.messages.page(try store.messages.branch(of: conversation, leaf: nil), at: .first, limit: 100).items
    }

    @Test("seen by default: the transcript, the canvas document with its name, the image; the rest kept with its kind")
    func kinds() throws {
        let folder = try TemporaryDirectory()
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [try Self.export(Self.nodes, current: "a4", in: folder)], format: nil)
        #expect(summary.inserted == 1 && summary.failed.isEmpty, "\(summary)")
        let seen = try Self.seen(store)
        #expect(seen.map(\.sourceNodeID) == ["u1", "cv", "a1", "u2", "up", "a2", "u3", "imgR", "u4", "a4"], "\(seen.map(\.sourceNodeID))")
        #expect(seen.map(\.position) == Array(0..<10))
        #expect(seen[1].kind == .document && seen[1].content == "**Trip plan**\n\nDay 1: Kyoto\nDay 2: Nara")
        #expect(seen[4].kind == .document && seen[4].content == "**Trip plan** (rewritten)\n\nDay 1: Kyoto\nDay 2: Osaka")
        // The image it made is an attachment (its line in the reader), not a placeholder.
        #expect(seen[7].content == "" && seen[7].role == .tool && seen[7].kind == .text)
        let drawn = try store.attachments(messages: [seen[7].id])[seen[7].id] ?? []
        #expect(drawn.map(\.reference) == ["sediment://file_00001"] && drawn.first?.width == 1024 && drawn.first?.isStored == false)

        let conversation = try #require(try store.conversations.page(sort: .created, at: .first, limit: 1).items.first)
        let all = try store.messages.all(conversationID: conversation.id, showingHidden: true)
        func kind(_ node: String) -> MessageKind? { all.first { $0.sourceNodeID == node }?.kind }
        func content(_ node: String) -> String? { all.first { $0.sourceNodeID == node }?.content }
        #expect(kind("ctx") == .internal && content("ctx") == "I live in Lisbon.\n\nBe brief.")
        #expect(kind("bio") == .internal && content("bio") == "→ bio\nUser likes trains.")
        #expect(kind("bioR") == .internal && content("bioR") == "← bio\nModel set context updated.")
        #expect(kind("cvR") == .internal && kind("upR") == .internal)
        #expect(kind("ws") == .internal && kind("wsR") == .internal && kind("q") == .internal)
        #expect(content("q") == "← browser\nOsaka\nhttps://weather.example/osaka\nSunny all week.")
        #expect(kind("img") == .internal && kind("imgT") == .internal)
        #expect(kind("r2") == .reasoning && content("r2") == "Checking\nMaybe rain?")
        #expect(kind("o1") == .reasoning && kind("rr") == .reasoning && content("rr") == "Thought for 3s")
        #expect(kind("nw") == .unknown && content("nw") == #"{"content_type":"hologram_v9","frames":[1,2]}"#)
        // The hidden system message is kept, hidden, as everything else.
        #expect(kind("sys") == .internal)
        #expect(all.count == Self.nodes.count)
        #expect(conversation.messageCount == all.count && conversation.seenCount == 10 && conversation.hiddenCount == all.count - 10)

        // A regeneration that only reasoned is no branch of what the person saw.
        let tree = try store.messages.tree(conversationID: conversation.id)
        #expect(tree.branches.count == 1)
        let a2 = try #require(seen.first { $0.sourceNodeID == "a2" })
        #expect(tree.siblingPlace(of: a2.id)?.count == 1)
        let everything = try store.messages.tree(conversationID: conversation.id, showingHidden: true)
        #expect(everything.branches.count == 2)

        // Search finds hidden text only when asked.
        #expect(try store.search.search("rain", after: nil, limit: 10).items.isEmpty)
        let hidden = try store.search.search("rain", filter: .none, includingHidden: true, after: nil, limit: 10).items
        #expect(hidden.count == 1 && hidden.first?.message != nil)
        #expect(try store.search.search("Osaka", after: nil, limit: 10).items.count == 3)
        #expect(try store.check().problems.isEmpty)
    }

    @Test("the same export again changes nothing; the kinds survive a JSON Lines round trip")
    func reimportAndRoundTrip() throws {
        let folder = try TemporaryDirectory()
        let store = try Store.open(path: ":memory:")
        let path = try Self.export(Self.nodes, current: "a4", in: folder)
        _ = Importer(store: store).run(paths: [path], format: nil)
        let again = Importer(store: store).run(paths: [path], format: nil)
        #expect(again.unchanged == 1 && again.updated == 0, "\(again)")
        let conversation = try #require(try store.conversations.page(sort: .created, at: .first, limit: 1).items.first)
        let line = try Exporter(store: store).render(conversation, as: .jsonl)
        let file = folder.file("backup.jsonl")
        try (line + "\n").write(toFile: file, atomically: false, encoding: .utf8)
        let copy = try Store.open(path: ":memory:")
        #expect(Importer(store: copy).run(paths: [file], format: nil).inserted == 1)
        let restored = try #require(try copy.conversations.page(sort: .created, at: .first, limit: 1).items.first)
        let kinds = { (store: Store, id: Int64) in
            try store.messages.all(conversationID: id, showingHidden: true).map { "\($0.publicID) \($0.kind.rawValue)" }.sorted()
        }
        #expect(try kinds(copy, restored.id) == kinds(store, conversation.id))
        #expect(restored.hiddenCount == conversation.hiddenCount)
        // Markdown shows what was seen, and with --hidden the rest, marked.
        let seenMarkdown = try Exporter(store: store).render(conversation, as: .md)
        #expect(!seenMarkdown.contains("Model set context updated") && seenMarkdown.contains("## Assistant · 2025-06-15T15:06:53.000Z · document"))
        let allMarkdown = try Exporter(store: store, showingHidden: true).render(conversation, as: .md)
        #expect(allMarkdown.contains("· hidden internal") && allMarkdown.contains("Model set context updated"))
    }

    /// The rows an earlier scrollback stored for `nodes`: the messages it kept visible (the
    /// tool results among them), each under the nearest one it kept, none of what it dropped.
    static func storeAsEarlierVersion(_ nodes: [Node], at path: String, folder: TemporaryDirectory) throws {
        let old = Migrator(migrations: Array(Migrator.scrollback.migrations.prefix(7)))
        let store = try Store.open(path: path, migrator: old)
        let keptByOld: Set<String> = ["u1", "bioR", "cvR", "a1", "u2", "upR", "wsR", "q", "a2", "u3", "imgR", "imgT", "u4", "o1", "a4"]
        let kept = nodes.filter { keptByOld.contains($0.id) }
        var parents: [String: String?] = [:]
        for node in nodes { parents[node.id] = node.parent }
        func keptParent(_ id: String) -> String? {
            var at = parents[id] ?? nil
            while let current = at, !keptByOld.contains(current) { at = parents[current] ?? nil }
            return at
        }
        let conversationID = StableID.uuid("chatgpt", "kinds-1")
        try store.database.write {
            try store.database.run(
                """
                INSERT INTO conversation (id, public_id, title, source, source_id, created_at, updated_at, source_title)
                VALUES (1, ?, 'Kinds', 'chatgpt', 'kinds-1', 1750000000000, 1750000000000, 'Kinds')
                """, [.text(conversationID)])
            var rowIDs: [String: Int64] = [:]
            for (position, node) in kept.enumerated() {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(node.message.utf8)) as? [String: Any])
                let role = ((object["author"] as? [String: Any])?["role"] as? String) ?? "user"
                let content = (object["content"] as? [String: Any]) ?? [:]
                // What the earlier release stored: the parts joined, else the text, else the result.
                let parts = (content["parts"] as? [Any])?.compactMap { $0 as? String }.joined(separator: "\n")
                let stored = content["content_type"] as? String == "multimodal_text" ? "[image]" : parts ?? (content["result"] as? String) ?? ""
                let time = Int64(((object["create_time"] as? Double) ?? 0) * 1000)
                let id = time * 65_536
                try store.database.run(
                    """
                    INSERT INTO message (id, public_id, conversation_id, position, role, content, created_at, parent_id, source_node_id)
                    VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?)
                    """,
                    [.integer(id), .text(StableID.uuid(conversationID, node.id)), .integer(Int64(position)), .text(role), .text(stored),
                     .integer(time), keptParent(node.id).flatMap { rowIDs[$0] }.map { .integer($0) } ?? .null, .text(node.id)])
                rowIDs[node.id] = id
            }
            try store.database.run("UPDATE conversation SET current_leaf_id = ?, branch_length = ? WHERE id = 1", [.integer(rowIDs["a4"] ?? 0), .integer(Int64(kept.count))])
        }
    }

    @Test("a database of schema 7 is upgraded (backup first); re-importing moves its rows to their kinds and puts back what it dropped where it stood")
    func upgradeAndReimport() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("old.sqlite")
        try Self.storeAsEarlierVersion(Self.nodes, at: path, folder: folder)
        let oldIDs = try Store.open(path: path, readOnly: true, migrator: Migrator(migrations: Array(Migrator.scrollback.migrations.prefix(7))))
            .database.query("SELECT source_node_id, id, public_id FROM message ORDER BY id") { "\($0.text(0)) \($0.int64(1)) \($0.text(2))" }
        #expect(oldIDs.count == 15)

        let store = try Store.open(path: path)
        #expect(store.migration.fromVersion == 7 && store.migration.toVersion == Migrator.scrollback.latestVersion)
        let backup = try #require(store.migration.backupPath)
        #expect(FileManager.default.fileExists(atPath: backup))
        // Before the re-import: every row is text, as it was shown, and nothing is hidden.
        let before = try #require(try store.conversations.page(sort: .created, at: .first, limit: 1).items.first)
        #expect(before.hiddenCount == 0 && before.messageCount == 15)
        #expect(try store.database.scalarInt("SELECT count(*) FROM message WHERE kind <> 'text'") == 0)
        #expect(try store.check().problems.isEmpty)

        let summary = Importer(store: store).run(paths: [try Self.export(Self.nodes, current: "a4", in: folder)], format: nil)
        #expect(summary.updated == 1 && summary.inserted == 0, "\(summary)")
        let seen = try Self.seen(store)
        #expect(seen.map(\.sourceNodeID) == ["u1", "cv", "a1", "u2", "up", "a2", "u3", "imgR", "u4", "a4"], "\(seen.map(\.sourceNodeID))")
        let after = try store.database.query("SELECT source_node_id, id, public_id FROM message ORDER BY id") { "\($0.text(0)) \($0.int64(1)) \($0.text(2))" }
        // Every row kept its ids; one row per node, none twice.
        #expect(Set(oldIDs).isSubset(of: Set(after)))
        #expect(after.count == Self.nodes.count)
        // What it dropped hangs where it stood: the confirmation under the canvas call, the
        // call under the memory result, and so on: the stored parents are the export's.
        let parents = try store.database.query(
            "SELECT m.source_node_id, p.source_node_id FROM message AS m LEFT JOIN message AS p ON p.id = m.parent_id") {
            ($0.text(0), $0.optionalText(1))
        }
        for (node, parent) in parents {
            let expected = Self.nodes.first { $0.id == node }?.parent
            #expect(parent == expected, "\(node)")
        }
        let conversation = try #require(try store.conversations.page(sort: .created, at: .first, limit: 1).items.first)
        let whole = try store.messages.branch(of: conversation, leaf: nil, showingHidden: true)
        #expect(conversation.seenCount == 10 && conversation.branchLength == whole.count)
        #expect(try store.check().problems.isEmpty)
        // And once more: nothing changes.
        let again = Importer(store: store).run(paths: [try Self.export(Self.nodes, current: "a4", in: folder)], format: nil)
        #expect(again.unchanged == 1, "\(again)")
    }

    @Test("a canvas call as real exports write it (content_type code, language json) is the document")
    func canvasAsCode() throws {
        let folder = try TemporaryDirectory()
        let call = #"{"name":"Plan","type":"document","content":"Step one"}"#
        let code = "{\"content_type\":\"code\",\"language\":\"json\",\"text\":\(Self.quoted(call))}"
        let nodes = [
            Node(id: "u", parent: nil, message: Self.message("u", role: "user", time: 1_750_000_001, content: Self.text("Plan it"))),
            Node(id: "c", parent: "u", message: Self.message("c", role: "assistant", recipient: "canmore.create_textdoc", time: 1_750_000_002, content: code)),
        ]
        let store = try Store.open(path: ":memory:")
        _ = Importer(store: store).run(paths: [try Self.export(nodes, current: "c", in: folder)], format: nil)
        let seen = try Self.seen(store)
        #expect(seen.last?.kind == .document && seen.last?.content == "**Plan**\n\nStep one")
    }

    @Test("hostile canvas calls: not JSON, no content, a pattern that would take exponential time, an update with no document")
    func hostileCanvas() throws {
        var canvas: ChatGPTMessage.Canvas?
        #expect(ChatGPTMessage.canvas("canmore.create_textdoc", arguments: "not json", before: &canvas) == nil)
        #expect(ChatGPTMessage.canvas("canmore.create_textdoc", arguments: #"{"name":"x"}"#, before: &canvas) == nil)
        let slow = #"{"updates":[{"pattern":"(a+)+$","multiple":true,"replacement":"b"}]}"#
        // Passages of a document never shown: fenced, as nothing says they are Markdown.
        #expect(ChatGPTMessage.canvas("canmore.update_textdoc", arguments: slow, before: &canvas) == "**Untitled document** (edited)\n\n```\nb\n```")
        // Passages of code: fenced in its language, longer than the fences they hold (a
        // comment is no heading, a lone fence does not swallow the rest of an export).
        canvas = ChatGPTMessage.Canvas(name: "script.py", type: "code/python", content: "x = 1")
        let passage = ##"{"updates":[{"pattern":"x = 1","replacement":"# Heading from a comment\n```\nx = 2"}]}"##
        #expect(
            ChatGPTMessage.canvas("canmore.update_textdoc", arguments: passage, before: &canvas)
                == "**script.py** (edited: 1 passage)\n\n````python\n# Heading from a comment\n```\nx = 2\n````")
        // Of a text document: Markdown, as the person saw it.
        canvas = ChatGPTMessage.Canvas(name: "Plan", type: "document", content: "Step one")
        let prose = #"{"updates":[{"pattern":"one","replacement":"*two*"}]}"#
        #expect(ChatGPTMessage.canvas("canmore.update_textdoc", arguments: prose, before: &canvas) == "**Plan** (edited: 1 passage)\n\n*two*")
        canvas = nil
        canvas = ChatGPTMessage.Canvas(name: "Code", type: "code/python", content: "print(1)")
        let rewrite = #"{"updates":[{"pattern":".*","replacement":"print(2)"}]}"#
        #expect(ChatGPTMessage.canvas("canmore.update_textdoc", arguments: rewrite, before: &canvas) == "**Code** (rewritten)\n\n```python\nprint(2)\n```")
        #expect(canvas?.content == "print(2)")
        #expect(ChatGPTMessage.canvas("canmore.update_textdoc", arguments: #"{"updates":[]}"#, before: &canvas) == nil)

        // Code holding a fence of its own, and a name with line breaks: the fence is longer
        // than any run of backticks in the code, and the name stays on its heading's line,
        // so nothing forges a heading or ends the block early (in the reader, the Markdown
        // export, copied code).
        let sneaky = "print(1)\n```\n## Assistant\nfake answer\n````x"
        let call = try #require(String(data: try JSONSerialization.data(withJSONObject: [
            "name": "Evil\n\n## User\n\nforged", "type": "code/python", "content": sneaky,
        ]), encoding: .utf8))
        var fresh: ChatGPTMessage.Canvas?
        let shown = try #require(ChatGPTMessage.canvas("canmore.create_textdoc", arguments: call, before: &fresh))
        #expect(shown == "**Evil ## User forged**\n\n`````python\n\(sneaky)\n`````", "\(shown.debugDescription)")
        #expect(!shown.split(separator: "\n").contains { $0.hasPrefix("## User") })
        #expect(MarkdownTranscript.codeBlocks(in: shown) == [sneaky])
        // A code cell and its output fenced the same way.
        #expect(ImportText.fenced("a ``` b", language: "py thon`") == "````python\na ``` b\n````")
        #expect(ImportText.fenced("plain") == "```\nplain\n```")
        #expect(ImportText.oneLine(String(repeating: "n", count: 300)).count == 200)
    }

    @Test("shapes this version cannot read as text (thoughts not a list, a recap not a string, parts all objects) are kept raw and hidden, counted, not dropped")
    func unreadable() throws {
        let folder = try TemporaryDirectory()
        let nodes = [
            Node(id: "u", parent: nil, message: Self.message("u", role: "user", time: 1_750_000_001, content: Self.text("Think"))),
            Node(id: "t", parent: "u", message: Self.message("t", role: "assistant", time: 1_750_000_002, content: #"{"content_type":"thoughts","thoughts":{"summary":"not a list"}}"#)),
            Node(id: "r", parent: "t", message: Self.message("r", role: "assistant", time: 1_750_000_003, content: #"{"content_type":"reasoning_recap","content":{"seconds":4}}"#)),
            Node(id: "p", parent: "r", message: Self.message("p", role: "assistant", time: 1_750_000_004, content: #"{"content_type":"text","parts":[{"kind":"future"},7]}"#)),
            // Empty is empty: nothing to keep (the root's blank system message, an empty list).
            Node(id: "e", parent: "p", message: Self.message("e", role: "assistant", time: 1_750_000_005, content: #"{"content_type":"text","parts":["",null,[]]}"#)),
            Node(id: "a", parent: "e", message: Self.message("a", role: "assistant", time: 1_750_000_006, content: Self.text("Done"))),
        ]
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [try Self.export(nodes, current: "a", in: folder)], format: nil)
        #expect(summary.inserted == 1 && summary.unknownParts == 3, "\(summary)")
        let conversation = try #require(try store.conversations.page(sort: .created, at: .first, limit: 1).items.first)
        let all = try store.messages.all(conversationID: conversation.id, showingHidden: true)
        #expect(all.map(\.sourceNodeID) == ["u", "t", "r", "p", "a"])
        #expect(all.map(\.kind) == [.text, .unknown, .unknown, .unknown, .text])
        #expect(all[1].content == #"{"content_type":"thoughts","thoughts":{"summary":"not a list"}}"#)
        #expect(all[2].content == #"{"content":{"seconds":4},"content_type":"reasoning_recap"}"#)
        #expect(try Self.seen(store).map(\.content) == ["Think", "Done"])
        #expect(conversation.hiddenCount == 3)
    }

    @Test("a bulk load (thousands of messages into an empty database) counts each conversation's hidden messages as the triggers would")
    func bulkCounts() throws {
        let folder = try TemporaryDirectory()
        let copies = 60  // 60 × 25 messages: a bulk load
        let records = (0..<copies).map { copy in
            let mapping = Self.nodes.map { node in
                "\(Self.quoted(node.id)):{\"id\":\(Self.quoted(node.id)),\"parent\":\(node.parent.map(Self.quoted) ?? "null"),\"children\":[],\"message\":\(node.message.replacingOccurrences(of: "\"id\":\"", with: "\"id\":\"c\(copy)-"))}"
            }.joined(separator: ",")
            return "{\"id\":\"bulk-\(copy)\",\"title\":\"Kinds \(copy)\",\"create_time\":1750000000,\"current_node\":\"a4\",\"mapping\":{\(mapping)}}"
        }
        let path = folder.file("conversations.json")
        try ("[" + records.joined(separator: ",") + "]").write(toFile: path, atomically: false, encoding: .utf8)
        let store = try Store.open(path: folder.file("bulk.sqlite"))
        let summary = Importer(store: store).run(paths: [path], format: nil)
        #expect(summary.inserted == copies, "\(summary)")
        let conversations = try store.conversations.page(sort: .created, at: .first, limit: 100).items
        #expect(conversations.count == copies)
        #expect(conversations.allSatisfy { $0.messageCount == Self.nodes.count && $0.seenCount == 10 && $0.hiddenCount == Self.nodes.count - 10 })
        #expect(try store.stats().hiddenMessages == copies * (Self.nodes.count - 10))
        #expect(try store.check().problems.isEmpty)
        // The counting triggers are back for what comes after the load.
        #expect(try store.database.scalarInt("SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' AND name LIKE 'message_hidden_%'") == 3)
        let first = try #require(conversations.first)
        #expect(try store.conversations.delete(id: first.id))
        #expect(try store.stats().hiddenMessages == (copies - 1) * (Self.nodes.count - 10))
        #expect(try store.check().problems.isEmpty)
    }
}
