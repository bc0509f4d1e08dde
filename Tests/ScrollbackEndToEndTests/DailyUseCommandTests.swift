import Foundation
@testable import ScrollbackExport
import Testing

@testable import ScrollbackCLI
import ScrollbackModel
import ScrollbackStorage
import TestSupport

/// The command line's rough edges a new user met, each as it was seen: typos, short flags,
/// questions, hints that must work when pasted, filters, and what a command says it did.
@Suite("Daily use: the command line")
struct DailyUseCommandTests {
    /// The words of a `more:` line (the runner's paths need no quoting).
    static func hintWords(_ error: String) throws -> [String] {
        let line = try #require(error.split(separator: "\n").first { $0.hasPrefix("more: scrollback ") })
        return line.dropFirst("more: scrollback ".count).split(separator: " ").map(String.init)
    }

    /// One conversation as scrollback's JSON Lines export writes it.
    static func record(_ id: String, title: String, source: String = "local", model: String? = nil, date: String, content: String = "hi") -> String {
        let modelField = model.map { ", \"model\": \"\($0)\"" } ?? ""
        return
            "{\"format\": \"scrollback\", \"version\": 1, \"id\": \"\(id)\", \"title\": \"\(title)\", \"source\": \"\(source)\"\(modelField), \"createdAt\": \"\(date)\", \"updatedAt\": \"\(date)\", \"pinned\": false, \"messages\": [{\"id\": \"m-\(id)\", \"role\": \"user\", \"content\": \"\(content)\", \"createdAt\": \"\(date)\"}]}"
    }

    @Test("a mistyped command is named with the one meant; short flags; help shows no benchmark options; import names every format")
    func typosAndFlags() throws {
        let runner = try BinaryRunner()
        _ = try runner.run(["demo", "--count", "12"])
        let typo = try runner.run(["lsit"])
        #expect(typo.status == 2)
        #expect(typo.error == "scrollback: unknown command 'lsit'; did you mean 'list'? (see 'scrollback --help')\n")
        #expect(try runner.run(["xyzzy"]).error == "scrollback: unknown command 'xyzzy' (see 'scrollback --help')\n")
        let short = try runner.run(["list", "-n", "2", "-j"])
        #expect(short.status == 0)
        let page = try JSONSerialization.jsonObject(with: Data(short.output.utf8)) as? [String: Any]
        #expect((page?["conversations"] as? [Any])?.count == 2)
        #expect(try runner.run(["list", "-x"]).error.contains("unknown option '-x'"))
        let id = try #require(((page?["conversations"] as? [[String: Any]])?.first?["id"]) as? String)
        let deleted = try runner.run(["delete", id, "-y"])
        #expect(deleted.status == 0 && deleted.output == "Deleted 1 conversation.\n")

        let help = try runner.run(["--help"], withDatabase: false)
        #expect(!help.output.contains("--exit-after-first-frame"))
        #expect(help.output.contains("-h, --help"))
        let importHelp = try runner.run(["import", "--help"], withDatabase: false).output
        for format in ["ZIP", "conversations.json", "logs.db", "JSON Lines", "-q, --quiet"] {
            #expect(importHelp.contains(format), "\(format)")
        }
    }

    @Test("list's more: line is a command that works pasted; tokens of another query or database are refused")
    func moreLineWorks() throws {
        let runner = try BinaryRunner()
        _ = try runner.run(["demo", "--count", "30", "--seed", "2"])
        let all = try runner.json(["list", "--sort", "title", "--limit", "100"])["conversations"] as? [[String: Any]] ?? []
        let first = try runner.run(["list", "--sort", "title", "--limit", "7"])
        #expect(first.status == 0)
        var words = try Self.hintWords(first.error)
        #expect(Array(words.prefix(8)) == ["--db", runner.databasePath, "list", "--sort", "title", "--limit", "7", "--after"])
        // Pasted as printed (no --db added by the runner): the next 7, in order.
        let second = try runner.run(words, withDatabase: false)
        #expect(second.status == 0, "\(second.error)")
        let shownIDs = second.output.split(separator: "\n").dropFirst().map { String($0.prefix(8)) }
        #expect(shownIDs == all[7..<14].compactMap { ($0["id"] as? String).map { String($0.prefix(8)) } })
        let token = try #require(words.last)
        // An edited token (one character of its body changed) is refused, not followed.
        var edited = Array(token)
        edited[12] = edited[12] == "A" ? "B" : "A"
        let changed = try runner.run(["list", "--sort", "title", "--limit", "7", "--after", String(edited)])
        #expect(changed.status == 2 && changed.error.contains("--after:"), "\(changed.error)")
        let damaged = try runner.run(["list", "--sort", "title", "--after", String(token.dropLast(3))])
        #expect(damaged.status == 2 && damaged.error.contains("is not a page token printed by this version"))

        // The same token with another order, filter, or against another database: refused.
        let otherOrder = try runner.run(["list", "--sort", "created", "--after", token])
        #expect(otherOrder.status == 2)
        #expect(otherOrder.error.contains("this page token is for another query (another order, filter or search), or was changed"))
        let otherFilter = try runner.run(["list", "--sort", "title", "--source", "demo", "--after", token])
        #expect(otherFilter.status == 2 && otherFilter.error.contains("for another query"))
        let other = try BinaryRunner()
        _ = try other.run(["demo", "--count", "30", "--seed", "2"])
        let otherDatabase = try other.run(["list", "--sort", "title", "--after", token])
        #expect(otherDatabase.status == 2)
        #expect(otherDatabase.error.contains("this page token is from another database, or was changed; run the command without --after"))

        // Filters ride along in the hint, times exact.
        let filtered = try runner.run(["list", "--limit", "2", "--since", "3y", "--model", "o"])
        words = try Self.hintWords(filtered.error)
        #expect(words.contains("--since") && words.contains("--model"))
        let since = try #require(words.firstIndex(of: "--since").map { words[$0 + 1] })
        #expect(since.hasSuffix("Z") && since.count == 24)
        #expect(try runner.run(words, withDatabase: false).status == 0)

        // search's hint works pasted too, its words after --.
        let search = try runner.run(["search", "-n", "1", "the"])
        #expect(search.status == 0)
        words = try Self.hintWords(search.error)
        #expect(words.suffix(2) == ["--", "the"])
        #expect(try runner.run(words, withDatabase: false).status == 0)
    }

    @Test("filters on list, search and export: source, model, time, pinned; bad ones say what works")
    func filters() throws {
        let runner = try BinaryRunner()
        let file = runner.folder.file("mixed.jsonl")
        var lines: [String] = []
        for (index, (model, source)) in [("gpt-4o", "chatgpt"), ("GPT-4o-mini", "chatgpt"), ("claude-3-5-sonnet", "claude"), ("", "llm")].enumerated() {
            lines.append(
                Self.record(
                    "c\(index)", title: "chat \(index) about bread", source: source, model: model.isEmpty ? nil : model,
                    date: "202\(index + 1)-03-01T10:00:00.000Z", content: "bread \(index)"))
        }
        try lines.joined(separator: "\n").write(toFile: file, atomically: false, encoding: .utf8)
        let imported = try runner.run(["import", file])
        #expect(imported.status == 0, "\(imported.output) \(imported.error)")
        func titles(_ arguments: [String]) throws -> [String] {
            (try runner.json(["list"] + arguments)["conversations"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String }
        }
        let all = try titles([])
        #expect(all.count == 4)
        #expect(try titles(["--model", "GPT-4O"]).count == 2)
        #expect(try titles(["--since", "2023", "--until", "2023-12"]) == ["chat 2 about bread"])
        #expect(try titles(["--until", "2022-03-01"]).sorted() == ["chat 0 about bread", "chat 1 about bread"])
        #expect(try titles(["--pinned"]).isEmpty)
        let search = try runner.json(["search", "bread", "--model", "sonnet"])["hits"] as? [[String: Any]] ?? []
        #expect(!search.isEmpty && search.allSatisfy { ($0["conversation"] as? [String: Any])?["title"] as? String == "chat 2 about bread" })
        let exported = try runner.run(["export", "--format", "jsonl", "--until", "2021"])
        #expect(exported.output.split(separator: "\n").count == 1)
        let empty = try runner.run(["list", "--source", "nobody"])
        #expect(empty.status == 0 && empty.error == "No conversations match source:nobody.\n")
        let bad = try runner.run(["list", "--since", "last tuesday"])
        #expect(bad.status == 2)
        #expect(bad.error.hasPrefix("scrollback: 'last tuesday' is not a date: use 2025-01-31, 2025-01, 2025"))
        #expect(try runner.run(["list", "--since", "2025", "--until", "2024"]).error.contains("nothing can match"))

        // The model column says "–" where the export named none (not the source); text and
        // JSON number messages the same way, from 1.
        let text = try runner.run(["list"]).output
        let llmRow = try #require(text.split(separator: "\n").first { $0.contains("chat 3 about bread") })
        #expect(llmRow.contains("  –   ") && !llmRow.contains("llm"))
        let id = try #require((try runner.json(["list", "--source", "llm"])["conversations"] as? [[String: Any]])?.first?["id"] as? String)
        let shown = try runner.json(["show", id])["messages"] as? [[String: Any]] ?? []
        #expect(shown.first?["number"] as? Int == 1 && shown.first?["position"] == nil)
        let searchText = try runner.run(["search", "bread", "--source", "llm"]).output
        #expect(searchText.contains("#1 user: [bread] 3"), "\(searchText)")
    }

    @Test("export says what it wrote; a missing folder is named")
    func exportSays() throws {
        let runner = try BinaryRunner()
        _ = try runner.run(["demo", "--count", "3"])
        let file = runner.folder.file("all.md")
        let written = try runner.run(["export", "--out", file])
        #expect(written.status == 0)
        #expect(written.error == "Exported 3 conversations as Markdown to \(file).\n")
        let missing = runner.folder.file("no/such/folder/x.json")
        let refused = try runner.run(["export", "--format", "json", "--out", missing])
        #expect(refused.status == 1)
        #expect(refused.error == "scrollback: cannot write \(missing): the folder \(runner.folder.file("no/such/folder")) does not exist (create it first)\n")
        // To a pipe, standard error stays quiet for scripts.
        #expect(try runner.run(["export"]).error.isEmpty)
    }

    @Test("check --readonly says what it checked and what it did not")
    func checkReadOnly() throws {
        let runner = try BinaryRunner()
        _ = try runner.run(["demo", "--count", "3"])
        let check = try runner.run(["check", "--readonly"])
        #expect(check.status == 0)
        #expect(check.output.contains("skipped: deep check of message_fts (it writes, which --readonly forbids: run check without --readonly)"))
        #expect(check.output.contains("ok: schema, integrity, foreign keys, message counts, branches and the sizes of the search indexes (not their content) of "))
        #expect(check.output.hasSuffix("; not checked: what 'skipped' lists above\n"))
        let full = try runner.run(["check"])
        #expect(full.output.hasPrefix("ok: schema, integrity, foreign keys, message counts, branches and search indexes of "))
    }

    @Test("delete asks in the same words as the browser; declining is not an error; --source demo removes the demo's")
    func deleteQuestion() throws {
        let runner = try BinaryRunner()
        _ = try runner.run(["demo", "--count", "4", "--seed", "3"])
        let page = try runner.json(["list"])["conversations"] as? [[String: Any]] ?? []
        let id = try #require(page.first?["id"] as? String)
        let title = try #require(page.first?["title"] as? String)
        let count = try #require(page.first?["messageCount"] as? Int)
        let tmux = try TmuxSession(width: 200, height: 10, arguments: ["--db", runner.databasePath, "delete", id])
        let screen = try tmux.waitFor(text: "[y/N]")
        let noun = count == 1 ? "message" : "messages"
        #expect(screen.contains { $0.hasPrefix("Delete “\(title)” with \(count) \(noun)? [y/N]") }, "\(screen)")
        try tmux.type("n")
        try tmux.send("Enter")
        #expect(try tmux.waitForExit() == 0)
        #expect(try tmux.screen().contains { $0 == "Nothing deleted." })
        #expect(try runner.json(["stats"])["conversations"] as? Int == 4)

        // Imported data stays; every demo conversation goes.
        let file = runner.folder.file("one.jsonl")
        try Self.record("k1", title: "Mine", date: "2024-01-01T00:00:00.000Z").write(toFile: file, atomically: false, encoding: .utf8)
        #expect(try runner.run(["import", file]).status == 0)
        let removed = try runner.run(["delete", "--source", "demo", "--yes"])
        #expect(removed.status == 0 && removed.output == "Deleted 4 conversations.\n")
        #expect((try runner.json(["list"])["conversations"] as? [[String: Any]])?.compactMap { $0["title"] as? String } == ["Mine"])
        let none = try runner.run(["delete", "--source", "demo", "--yes"])
        #expect(none.status == 0 && none.error == "No conversations from source 'demo': nothing deleted.\n")
        #expect(try runner.run(["delete"]).status == 2)
        #expect(try runner.run(["delete", id, "--source", "demo"]).status == 2)
    }

    @Test("demo into the real history asks first on a terminal and refuses in a pipe; its dates end today")
    func demoAsks() throws {
        let runner = try BinaryRunner()
        let environment = ["XDG_DATA_HOME": runner.folder.file("xdg")]
        let refused = try runner.run(["demo", "--count", "5"], withDatabase: false, environment: environment)
        #expect(refused.status == 2)
        #expect(refused.error.contains("refusing to add generated conversations to your history"))
        #expect(!FileManager.default.fileExists(atPath: runner.folder.file("xdg/scrollback/history.sqlite")))

        let tmux = try TmuxSession(width: 200, height: 10, arguments: ["demo", "--count", "5"], environment: environment.merging(["HOME": runner.folder.path]) { $1 })
        _ = try tmux.waitFor(text: "[y/N]")
        try tmux.type("n")
        try tmux.send("Enter")
        #expect(try tmux.waitForExit() == 0)
        #expect(!FileManager.default.fileExists(atPath: runner.folder.file("xdg/scrollback/history.sqlite")))

        let yes = try runner.run(["demo", "--count", "300", "--yes"], withDatabase: false, environment: environment)
        #expect(yes.status == 0, "\(yes.error)")
        let store = try Store.open(path: runner.folder.file("xdg/scrollback/history.sqlite"), readOnly: true)
        let newest = try #require(try store.conversations.page(sort: .created, filter: .none, at: .first, limit: 400).items.filter { !$0.pinned }.first)
        let now = Timestamp.now()
        // Within a few days of today (300 over three years), never in the future.
        #expect(now.milliseconds - newest.createdAt.milliseconds < 20 * 86_400_000)
        let latest = try #require(try store.conversations.page(sort: .updated, filter: .none, at: .first, limit: 400).items.map(\.updatedAt).max())
        #expect(latest <= now)
        // A handful pinned: four of the first forty, then about one in 2,000.
        #expect((4...6).contains(try store.conversations.count(filter: ConversationFilter(pinnedOnly: true))))
    }

    @Test("pin and unpin take many ids, all or nothing; pinned come first in every order")
    func pinCommands() throws {
        let runner = try BinaryRunner()
        _ = try runner.run(["demo", "--count", "8", "--seed", "5"])
        _ = try runner.run(["unpin"] + ((try runner.json(["list"])["conversations"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String })
        let ids = ((try runner.json(["list", "--sort", "title"])["conversations"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }
        #expect(try runner.run(["pin", ids[5], "nonexistent"]).status == 1)
        #expect(try runner.json(["list", "--pinned"])["conversations"] as? [Any] == nil || (try runner.json(["list", "--pinned"])["conversations"] as? [Any])?.isEmpty == true)
        let pinned = try runner.run(["pin", ids[5], ids[7], ids[5]])
        #expect(pinned.status == 0 && pinned.output == "Pinned 2 conversations.\n")
        for sort in ["updated", "created", "title"] {
            let first = ((try runner.json(["list", "--sort", sort])["conversations"] as? [[String: Any]]) ?? []).prefix(2)
            #expect(Set(first.compactMap { $0["id"] as? String }) == [ids[5], ids[7]], "\(sort)")
        }
        #expect(try runner.run(["pin", ids[5]]).output == "Pinned 0 conversations; 1 was pinned already.\n")
        #expect(try runner.run(["unpin", ids[5], ids[7]]).output == "Unpinned 2 conversations.\n")
        #expect(try runner.run(["--readonly", "pin", ids[1]]).status == 1)
    }

    @Test("hostile findings: one-character paths, sources as imported, ids that start alike, blank models, empty exports")
    func hostileFindings() throws {
        let runner = try BinaryRunner()
        let lines = [
            Self.record("33333333-0000-4000-8000-000000000001", title: "first of two", source: "MySource", model: "  ", date: "2024-02-29T12:00:00.000Z"),
            Self.record("33333333-0000-4000-8000-000000000002", title: "second of two", source: "weird src", model: "gpt-4o", date: "2024-03-01T00:00:00.000Z"),
        ]
        let file = runner.folder.file("two.jsonl")
        try lines.joined(separator: "\n").write(toFile: file, atomically: false, encoding: .utf8)
        #expect(try runner.run(["import", file]).status == 0)
        // One-character paths (Foundation traps on them): written, not a crash.
        let written = try runner.run(["export", "--out", "a"], directory: runner.folder.path)
        #expect(written.status == 0 && FileManager.default.fileExists(atPath: runner.folder.file("a")), "\(written.error)")
        #expect(try runner.run(["--db", "w", "list"], withDatabase: false, directory: runner.folder.path).status == 0)
        let dash = try runner.run(["export", "--out", "-", "--format", "jsonl"])
        #expect(dash.output.split(separator: "\n").count == 2)
        // Sources as the import kept them, any case; a name that looks like an option is refused.
        #expect((try runner.json(["list", "--source", "mysource"])["conversations"] as? [Any])?.count == 1)
        #expect((try runner.json(["list", "--source", "weird src"])["conversations"] as? [Any])?.count == 1)
        #expect(try runner.run(["list", "--source", "--pinned"]).status == 2)
        // --until a time takes in that instant.
        #expect((try runner.json(["list", "--until", "2024-02-29T12:00Z"])["conversations"] as? [Any])?.count == 1)
        // Ids that start alike are printed long enough to name one; show takes them.
        let text = try runner.run(["list"]).output
        let ids = text.split(separator: "\n").dropFirst().map { String($0.split(separator: " ").first ?? "") }
        #expect(ids.count == 2 && ids.allSatisfy { $0.count > 8 }, "\(text)")
        for id in ids { #expect(try runner.run(["show", id]).status == 0) }
        // A blank model is no model.
        let blank = try #require(text.split(separator: "\n").first { $0.contains("first of two") })
        #expect(blank.contains("  –  "), "\(blank)")
        // An export of nothing says so.
        let none = try runner.run(["export", "--source", "nobody"])
        #expect(none.status == 0 && none.error == "Exported 0 conversations: no conversation passes the filter.\n")
        let delete = try runner.run(["delete", "--source", "MYSOURCE", "--yes"])
        #expect(delete.output == "Deleted 1 conversation.\n")
    }

    @Test("the browser's x with z on writes the hidden messages into Markdown, marked, as export --hidden does; without z, what was seen")
    func exportFromBrowserShowingHidden() throws {
        let runner = try BinaryRunner()
        try FileManager.default.createDirectory(atPath: runner.dataFolder, withIntermediateDirectories: true)
        let store = try Store.open(path: runner.databasePath)
        try store.addTree(title: "Repo", start: 1_750_000_000_000, nodes: Store.hiddenTree, current: "a1")
        let one = try #require(try store.conversations.page(sort: .updated, at: .first, limit: 1).items.first)
        let environment = ["HOME": runner.folder.path]
        let seen = runner.folder.file("seen.md"), all = runner.folder.file("all.md"), lines = runner.folder.file("all.jsonl")
        #expect(BrowserExport.run(ids: [one.id], path: seen, store: store, environment: environment).hasSuffix("seen.md"))
        let shown = BrowserExport.run(ids: [one.id], path: all, showingHidden: true, store: store, environment: environment)
        #expect(shown.hasSuffix("all.md, hidden messages included (z)"), "\(shown)")
        let seenText = try String(contentsOfFile: seen, encoding: .utf8), allText = try String(contentsOfFile: all, encoding: .utf8)
        #expect(!seenText.contains("Thinking") && allText.contains("· hidden reasoning") && allText.contains("Thinking: look at git"))
        let expected = try runner.run(["export", "--hidden", "--format", "md"])
        #expect(expected.output == allText)
        // JSON Lines carry every message whatever is shown: nothing to say.
        #expect(BrowserExport.run(ids: [one.id], path: lines, showingHidden: true, store: store, environment: environment).hasSuffix("all.jsonl"))
    }

    @Test("second hostile round: the browser's export refuses a folder, an existing file and a deleted conversation in its own words; the extension in any case; search names its filter; demo pins a few")
    @MainActor
    func hostileRoundTwo() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["demo", "--count", "300", "--seed", "2"]).status == 0)
        #expect(((try runner.json(["list", "--pinned"])["conversations"] as? [Any]) ?? []).count >= 3)
        let store = try Store.open(path: runner.databasePath)
        let one = try #require(try store.conversations.page(sort: .updated, at: .first, limit: 1).items.first)
        let environment = ["HOME": runner.folder.path]
        let upper = runner.folder.file("A.JSONL")
        #expect(BrowserExport.run(ids: [one.id], path: upper, store: store, environment: environment).hasPrefix("Exported 1 conversation as JSON Lines"))
        #expect(try String(contentsOfFile: upper, encoding: .utf8).hasPrefix("{"))
        #expect(BrowserExport.run(ids: [one.id], path: upper, store: store, environment: environment)
            == "Not exported: \(upper) exists; choose another name (nothing is replaced from here)")
        #expect(BrowserExport.run(ids: [one.id], path: "~", store: store, environment: environment)
            == "Not exported: \(runner.folder.path) is a folder; give a file name in it")
        _ = try store.conversations.delete(id: one.id)
        let gone = runner.folder.file("gone.md")
        #expect(BrowserExport.run(ids: [one.id], path: gone, store: store, environment: environment)
            == "Not exported: that conversation was deleted meanwhile, by another process; no file written")
        #expect(!FileManager.default.fileExists(atPath: gone))
        let search = try runner.run(["search", "the", "--source", "nobody"])
        #expect(search.error == "Nothing matches 'the' among the conversations that pass source:nobody.\n")
    }
}
