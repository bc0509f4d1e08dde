import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// `show --all-branches` (the whole tree of a conversation) and `stats`' counts per model,
/// through the real binary.
@Suite("show --all-branches and stats per model")
struct TreeCommandTests {
    static let chatgpt = ImportExportCommandTests.fixtures + "/chatgpt/conversations.json"

    /// The shared ChatGPT sample imported; the id of "Postgres indexing" (a regenerated
    /// first answer a1 beside the current a2).
    static func postgres(_ runner: BinaryRunner, importing paths: [String] = [chatgpt]) throws -> String {
        let imported = try runner.run(["import", "--quiet"] + paths)
        #expect(imported.status == 0, "\(imported.error)")
        let list = try runner.json(["list"])
        let rows = list["conversations"] as? [[String: Any]] ?? []
        return try #require(rows.first { $0["title"] as? String == "Postgres indexing" }?["id"] as? String)
    }

    @Test("show --all-branches prints every message indented by depth, siblings in time order, the current branch marked")
    func allBranchesText() throws {
        let runner = try BinaryRunner()
        let id = try Self.postgres(runner)
        let result = try runner.run(["show", String(id.prefix(8)), "--all-branches"])
        #expect(result.status == 0, "\(result.error)")
        #expect(
            result.output == """
                Postgres indexing
                id \(id) · model gpt-5 · source chatgpt · created 2026-01-01 10:00 · updated 2026-01-01 11:00 · 7 messages · 1 hidden (--hidden shows them) · 2 branches

                * ── user · 2026-01-01 10:00
                  Why is my query on orders slow?
                  ▣ explain.txt  text  not here: the export did not hold it

                    ── assistant · 2026-01-01 10:00 · gpt-5 · ‹1/2›
                    First answer that was regenerated.

                *   ── assistant · 2026-01-01 10:01 · gpt-5 · ‹2/2›
                    You are missing an index on customer_id. Add a composite index.

                *     ── user · 2026-01-01 10:01
                      Here is the plan output. Can you write the statement?
                      ▣ file-2  file  not here: the export did not hold it

                *       ── assistant · 2026-01-01 10:01 · gpt-5
                        ```sql
                        CREATE INDEX idx_orders_customer ON orders (customer_id, created_at);
                        ```

                *         ── tool · 2026-01-01 10:01
                          ```
                          CREATE INDEX
                          ```

                *           ── assistant · 2026-01-01 10:02 · gpt-5
                            Done. The query should now use the index.

                """)
        // With --hidden: the reasoning the person did not see too, marked, where it stood.
        let hidden = try runner.run(["show", String(id.prefix(8)), "--all-branches", "--hidden"])
        #expect(hidden.status == 0)
        #expect(hidden.output.contains("8 messages · 1 of them hidden by default · 2 branches"))
        #expect(hidden.output.contains("*       ── assistant · 2026-01-01 10:01 · gpt-5 · hidden reasoning\n        x\n        y\n"))
        #expect(hidden.output.contains("*         ── assistant · 2026-01-01 10:01 · gpt-5\n          ```sql"))
        let json = try runner.json(["show", id, "--hidden"])
        let kinds = (json["messages"] as? [[String: Any]] ?? []).map { $0["kind"] as? String ?? "?" }
        #expect(kinds == ["text", "text", "text", "reasoning", "text", "text", "text"])
        // Without the flag: the current branch, as before.
        let plain = try runner.run(["show", id])
        #expect(plain.status == 0)
        #expect(!plain.output.contains("First answer that was regenerated."))
        #expect(plain.output.components(separatedBy: "\n── ").count == 7)
        #expect(plain.output.hasSuffix("\n── assistant · 2026-01-01 10:02 · gpt-5\nDone. The query should now use the index.\n"))
    }

    @Test("show --json --all-branches: every message with its parentID, depth as position; the conversation's currentLeafID")
    func allBranchesJSON() throws {
        let runner = try BinaryRunner()
        let id = try Self.postgres(runner)
        let tree = try runner.json(["show", id, "--all-branches"])
        let messages = tree["messages"] as? [[String: Any]] ?? []
        let ids = messages.compactMap { $0["id"] as? String }
        let contents = messages.map { String(($0["content"] as? String ?? "").prefix(12)) }
        #expect(
            contents == [
                "Why is my qu", "First answer", "You are miss", "Here is the ", "```sql\nCREAT", "```\nCREATE I", "Done. The qu",
            ])
        #expect(ids.count == 7 && Set(ids).count == 7)
        // parentID is null (present) for the first message, else the parent's public id.
        #expect(messages.first.map { $0.keys.contains("parentID") && $0["parentID"] is NSNull } == true)
        let parents = messages.map { $0["parentID"] as? String }
        #expect(parents == [nil, ids[0], ids[0], ids[2], ids[3], ids[4], ids[5]])
        #expect(messages.compactMap { $0["number"] as? Int } == [1, 2, 2, 3, 4, 5, 6])
        let conversation = tree["conversation"] as? [String: Any]
        #expect(conversation?["currentLeafID"] as? String == ids[6])
        #expect(conversation?["messageCount"] as? Int == 7)

        // Without the flag: the current branch, with the same parent ids and leaf.
        let branch = try runner.json(["show", id])
        let branchMessages = branch["messages"] as? [[String: Any]] ?? []
        let branchIDs = branchMessages.compactMap { $0["id"] as? String }
        #expect(branchIDs == [ids[0]] + ids[2...])
        #expect(branchMessages.map { $0["parentID"] as? String } == [nil] + branchIDs.dropLast())
        #expect(branchMessages.compactMap { $0["number"] as? Int } == Array(1...6))
        #expect((branch["conversation"] as? [String: Any])?["currentLeafID"] as? String == ids[6])
    }

    @Test("show --all-branches of a conversation without branches: one column of marked messages")
    func oneBranch() throws {
        let runner = try BinaryRunner()
        let store = try Store.open(path: runner.databasePath)
        let conversation = try store.addConversation(title: "Plain", createdAt: 1_700_000_000_000, messages: ["one", "two", "three"])
        let result = try runner.run(["show", conversation.publicID, "--all-branches"])
        #expect(result.output.hasSuffix("· 3 messages · 1 branch\n\n* ── user · 2023-11-14 22:13\n  one\n\n*   ── assistant · 2023-11-14 22:13\n    two\n\n*     ── user · 2023-11-14 22:13\n      three\n"))
    }

    @Test("deep conversations indent at most six levels, then say the depth")
    func deepIndentation() throws {
        let runner = try BinaryRunner()
        let store = try Store.open(path: runner.databasePath)
        let conversation = try store.addConversation(
            title: "Deep", createdAt: 1_700_000_000_000, messages: (0..<9).map { "m\($0)\nsecond line" })
        let result = try runner.run(["show", conversation.publicID, "--all-branches"])
        #expect(result.output.hasSuffix("\n              m8\n              second line\n"))
        #expect(result.output.contains("\n*             ── user · 2023-11-14 22:13\n              m6\n"))
        #expect(result.output.contains("\n*             ── assistant · 2023-11-14 22:13 · depth 7\n              m7\n              second line\n"))
        #expect(result.output.contains("\n*             ── user · 2023-11-14 22:13 · depth 8\n"))
    }

    @Test("hostile text and model names in a branch that is not current reach a terminal only as placeholders; JSON stays exact")
    func hostileBranchOnATerminal() throws {
        let runner = try BinaryRunner()
        // The sample with the regenerated answer (a1) made hostile.
        let folder = try TemporaryDirectory()
        var export = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.chatgpt))) as? [[String: Any]])
        var mapping = try #require(export[0]["mapping"] as? [String: Any])
        var node = try #require(mapping["a1"] as? [String: Any])
        var message = try #require(node["message"] as? [String: Any])
        message["content"] = ["content_type": "text", "parts": ["B" + HostileText.sample + "\nline two" + HostileText.sample]]
        message["metadata"] = ["model_slug": "M" + HostileText.sample]
        node["message"] = message
        mapping["a1"] = node
        export[0]["mapping"] = mapping
        let path = folder.file("hostile.json")
        try JSONSerialization.data(withJSONObject: export).write(to: URL(fileURLWithPath: path))
        let id = try Self.postgres(runner, importing: [path])

        let database = HostileText.quoted(runner.databasePath)
        for command in ["show \(id) --all-branches", "show \(id) --all-branches --json"] {
            let result = try BinaryRunner.shell("script -q -e -c \"\\\"$0\\\" --db \(database) \(command)\" /dev/null")
            #expect(result.status == 0, "\(command): \(result.error)")
            #expect(String(decoding: result.output, as: UTF8.self).contains("line two"), "\(command)")
            #expect(HostileText.dangerousBytes(in: result.output) == [], "\(command)")
        }
        // Piped, the JSON is the exact text.
        let json = try runner.json(["show", id, "--all-branches"])
        let contents = (json["messages"] as? [[String: Any]] ?? []).compactMap { $0["content"] as? String }
        #expect(contents.contains("B" + HostileText.sample + "\nline two" + HostileText.sample))
    }

    @Test("stats counts conversations, messages and known tokens per model, most messages first; plain and JSON")
    func statsPerModel() throws {
        let runner = try BinaryRunner()
        _ = try Self.postgres(runner, importing: [Self.chatgpt, ImportExportCommandTests.fixtures + "/llm/llm-0.36.db"])
        let store = try Store.open(path: runner.databasePath)
        // A long model name with escapes, and messages of no model at all.
        let long = "a-very-long-model-name-\u{1B}[31m-that-goes-on-and-on-and-on"
        let odd = try store.addConversation(title: "Odd", createdAt: 1_700_000_000_000, messages: ["q", "a"])
        try store.database.run("UPDATE conversation SET model = ? WHERE id = ?", [.text(long), .integer(odd.id)])
        let none = try store.addConversation(title: "None", createdAt: 1_700_000_000_000, messages: ["q"])
        try store.database.run("UPDATE conversation SET model = NULL WHERE id = ?", [.integer(none.id)])

        let json = try runner.json(["stats"])
        let models = json["models"] as? [[String: Any]] ?? []
        func row(_ model: [String: Any]) -> String {
            let tokens = [model["inputTokens"], model["outputTokens"]].map { ($0 as? Int).map(String.init) ?? "-" }
            return "\(model["model"] as? String ?? "(none)") \(model["conversations"] as? Int ?? -1) \(model["messages"] as? Int ?? -1) "
                + tokens.joined(separator: " ")
        }
        #expect(models.map(row) == ["echo 2 7 16 48", "gpt-5 1 7 - -", long + " 1 2 - -", "gpt-5-mini 1 2 - -", "(none) 1 1 - -"])
        #expect(models.last.map { $0.keys.contains("model") } == false)

        let plain = try runner.run(["stats"])
        #expect(plain.status == 0)
        let table = plain.output.components(separatedBy: "\n\n").last ?? ""
        #expect(
            table == """
                model                             conversations  messages  input tokens  output tokens
                echo                                          2         7            16             48
                gpt-5                                         1         7             -              -
                a-very-long-model-name-␛[31m-th…              1         2             -              -
                gpt-5-mini                                    1         2             -              -
                (unknown)                                     1         1             -              -

                """)
    }

    @Test("search --hidden: each hit says its kind (JSON) and a hidden one says so (text); its more: line and page token keep --hidden")
    func searchHidden() throws {
        let runner = try BinaryRunner()
        try FileManager.default.createDirectory(atPath: runner.dataFolder, withIntermediateDirectories: true)
        do {
            let store = try Store.open(path: runner.databasePath)
            try store.addTree(title: "Repo", start: 1_750_000_000_000, nodes: Store.hiddenTree, current: "a1")
        }
        // Without --hidden: the tool call only (a tool line is seen).
        let seen = try runner.json(["search", "git"])
        #expect((seen["hits"] as? [[String: Any]] ?? []).compactMap { ($0["message"] as? [String: Any])?["kind"] as? String } == ["tool"], "\(seen)")
        let json = try runner.json(["search", "--hidden", "git"])
        let hits = json["hits"] as? [[String: Any]] ?? []
        let kinds = hits.compactMap { ($0["message"] as? [String: Any])?["kind"] as? String }.sorted()
        #expect(kinds == ["internal", "reasoning", "tool"], "\(hits)")
        let text = try runner.run(["search", "--hidden", "status"])
        #expect(text.status == 0, "\(text.error)")
        #expect(text.output.contains("assistant (hidden reasoning): Thinking: look at git [status] first."), "\(text.output)")
        #expect(text.output.contains("tool: Bash(git [status])"), "\(text.output)")
        // Paging keeps --hidden, and its token is refused by a search without it.
        let first = try runner.run(["search", "--hidden", "--limit", "1", "git"])
        let more = try #require(first.error.split(separator: "\n").first { $0.hasPrefix("more: ") })
        let words = more.dropFirst("more: scrollback ".count).split(separator: " ").map(String.init)
        #expect(words.contains("--hidden"), "\(more)")
        let second = try runner.run(words, withDatabase: false)
        #expect(second.status == 0 && !second.output.isEmpty, "\(second.error)")
        let token = try #require(words.firstIndex(of: "--after").map { words[$0 + 1] })
        let without = try runner.run(["search", "--limit", "1", "--after", token, "git"])
        #expect(without.status == 2 && without.error.contains("for another query"), "\(without.error)")
    }

    @Test("a current node on a version of only reasoning: show, show --hidden and export --hidden show the same branch; hidden after the last seen answer is shown with --hidden; counts say where the hidden are")
    func hiddenCurrentNode() throws {
        let runner = try BinaryRunner()
        func export(current: String, extra: String = "") throws -> String {
            let path = runner.folder.file("hc-\(current).json")
            let record = """
                [{"id":"hc-\(current)","title":"Hidden current \(current)","create_time":1750000000,"current_node":"\(current)","mapping":{
                "u":{"id":"u","parent":null,"children":["a1","r2"],"message":{"id":"u","author":{"role":"user"},"create_time":1750000001,"content":{"content_type":"text","parts":["question"]}}},
                "a1":{"id":"a1","parent":"u","children":["r3"],"message":{"id":"a1","author":{"role":"assistant"},"create_time":1750000002,"content":{"content_type":"text","parts":["first answer"]}}},
                "r2":{"id":"r2","parent":"u","children":[],"message":{"id":"r2","author":{"role":"assistant"},"create_time":1750000003,"content":{"content_type":"thoughts","thoughts":[{"summary":"s","content":"only reasoning"}]}}},
                "r3":{"id":"r3","parent":"a1","children":[],"message":{"id":"r3","author":{"role":"assistant"},"create_time":1750000004,"content":{"content_type":"reasoning_recap","content":"after the answer"}}}
                }}]
                """
            try record.write(toFile: path, atomically: false, encoding: .utf8)
            return path
        }
        #expect(try runner.run(["import", "--quiet", try export(current: "r2"), try export(current: "r3")]).status == 0)
        let rows = try runner.json(["list"])["conversations"] as? [[String: Any]] ?? []
        let onlyReasoning = try #require(rows.first { $0["title"] as? String == "Hidden current r2" }?["id"] as? String)
        let trailing = try #require(rows.first { $0["title"] as? String == "Hidden current r3" }?["id"] as? String)

        // r2 is no branch of what was seen: every view shows u → a1; --hidden adds r3, below a1.
        let plain = try runner.run(["show", onlyReasoning]).output
        let hidden = try runner.run(["show", onlyReasoning, "--hidden"]).output
        #expect(plain.contains("first answer") && hidden.contains("first answer") && !hidden.contains("only reasoning"), "\(hidden)")
        #expect(hidden.contains("after the answer"))
        #expect(plain.contains("3 messages") == false && plain.contains("· 2 messages · 1 hidden (--hidden shows them) · 1 more hidden on other branches"), "\(plain)")
        let markdown = try runner.run(["export", "--format", "md", "--hidden", onlyReasoning]).output
        #expect(markdown.contains("first answer") && markdown.contains("after the answer") && !markdown.contains("only reasoning\n"), "\(markdown)")
        let seenJSON = try runner.json(["show", onlyReasoning])
        let hiddenJSON = try runner.json(["show", onlyReasoning, "--hidden"])
        let seenIDs = (seenJSON["messages"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        let hiddenIDs = (hiddenJSON["messages"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        #expect(seenIDs.count == 2 && Array(hiddenIDs.prefix(2)) == seenIDs && hiddenIDs.count == 3)
        // JSON exports name the seen answer as current, as show --json does (a script that
        // walks up from it gets the branch the person saw), and read back the same.
        #expect((seenJSON["conversation"] as? [String: Any])?["currentLeafID"] as? String == seenIDs.last)
        let exported = try runner.run(["export", "--format", "json", onlyReasoning])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(exported.output.utf8)) as? [String: Any])
        let record = (document["conversations"] as? [[String: Any]])?.first
        #expect(record?["currentLeafID"] as? String == seenIDs.last, "\(exported.output)")
        let lines = try runner.run(["export", "--format", "jsonl", onlyReasoning]).output
        #expect(lines.contains("\"currentLeafID\":\"\(seenIDs.last ?? "")\""), "\(lines)")

        // The current node after the answer: the same branch, the hidden one with --hidden.
        let after = try runner.run(["show", trailing, "--hidden"]).output
        #expect(after.contains("first answer") && after.contains("after the answer") && !after.contains("only reasoning"))
    }
}
