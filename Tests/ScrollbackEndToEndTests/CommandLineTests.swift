import Foundation
import Testing

@testable import ScrollbackCLI
import ScrollbackModel
import ScrollbackSync
import ScrollbackImport
@testable import ScrollbackStorage
import TestSupport

@Suite("The scrollback binary")
struct CommandLineTests {
    @Test("--version and --help")
    func versionAndHelp() throws {
        let runner = try BinaryRunner()
        let version = try runner.run(["--version"], withDatabase: false)
        #expect(version.status == 0)
        #expect(version.output == "scrollback \(Scrollback.version)\n")
        let help = try runner.run(["--help"], withDatabase: false)
        #expect(help.status == 0)
        for command in ["list", "show", "search", "rename", "delete", "stats", "check", "demo"] {
            #expect(help.output.contains("\n  \(command) "), "\(command)")
        }
        let listHelp = try runner.run(["list", "--help"], withDatabase: false)
        #expect(listHelp.output.contains("usage: scrollback list [--sort updated|created|title] [--limit N]"))
        #expect(try runner.run(["help", "delete"], withDatabase: false).output.contains("--yes"))
        #expect(runner.dataFiles() == [])
    }

    @Test("usage errors exit 2 with one line and a hint", arguments: [
        (["frobnicate"], "unknown command 'frobnicate'"),
        (["list", "--frob"], "unknown option '--frob' for 'list'"),
        (["list", "--limit", "many"], "--limit must be a whole number from 1 to 10000, not 'many'"),
        (["list", "--limit", "0"], "--limit must be a whole number from 1 to 10000, not '0'"),
        (["list", "--sort", "size"], "--sort must be updated, created or title, not 'size'"),
        (["list", "--after", "x", "--before", "y"], "use only one of --after, --before and --last"),
        (["list", "--limit"], "--limit needs a value (N)"),
        (["show"], "'show' needs ID"),
        (["show", "a", "b"], "unexpected argument 'b' for 'show'"),
        (["rename", "abc"], "'rename' needs ID TITLE..."),
        (["demo", "--seed", "-1"], "--seed must be a whole number, not '-1'"),
        (["list", "--json=yes"], "--json takes no value"),
    ])
    func usageErrors(arguments: [String], message: String) throws {
        let runner = try BinaryRunner()
        let result = try runner.run(arguments)
        #expect(result.status == 2)
        #expect(result.output == "")
        #expect(result.error.hasPrefix("scrollback: \(message) (see 'scrollback"), "\(result.error)")
        #expect(result.error.filter { $0 == "\n" }.count == 1)
    }

    @Test("an empty database lists nothing and says how to fill it")
    func emptyDatabase() throws {
        let runner = try BinaryRunner()
        let result = try runner.run(["list"])
        #expect(result.status == 0)
        #expect(result.output == "")
        // The demo of its own database, not `scrollback demo` into this history.
        #expect(result.error.contains("scrollback --demo") && result.error.contains("scrollback import"))
        let json = try runner.json(["list"])
        #expect((json["conversations"] as? [Any])?.isEmpty == true)
        #expect(json["next"] == nil)
        let summary = try runner.run([])
        #expect(summary.output.hasPrefix("\(runner.databasePath): 0 conversations, 0 messages"))
    }

    @Test("list pages through everything with the tokens it prints")
    func listPages() throws {
        let runner = try BinaryRunner()
        let demo = try runner.run(["demo", "--count", "120", "--seed", "3"])
        #expect(demo.status == 0)
        #expect(demo.output.hasPrefix("Added 120 conversations ("))
        for sort in ["updated", "created", "title"] {
            let whole = try runner.json(["list", "--sort", sort, "--limit", "1000"])
            let expected = (whole["conversations"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            #expect(expected.count == 120)
            var seen: [String] = []
            var arguments = ["list", "--sort", sort, "--limit", "25"]
            while true {
                let page = try runner.json(arguments)
                #expect(page["sort"] as? String == sort)
                seen += (page["conversations"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
                guard let next = page["next"] as? String else { break }
                arguments = ["list", "--sort", sort, "--limit", "25", "--after", next]
            }
            #expect(seen == expected)
            let last = try runner.json(["list", "--sort", sort, "--limit", "20", "--last"])
            #expect((last["conversations"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String } == Array(expected.suffix(20)))
            let previous = try #require(last["previous"] as? String)
            let before = try runner.json(["list", "--sort", sort, "--limit", "20", "--before", previous])
            #expect((before["conversations"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String } == Array(expected.dropLast(20).suffix(20)))
        }
        let text = try runner.run(["list", "--limit", "3"])
        #expect(text.output.split(separator: "\n").count == 4)
        #expect(text.output.hasPrefix("ID        UPDATED            MSGS  MODEL               TITLE\n"))
        // The hint is a command that works pasted: the same database, order and size.
        #expect(text.error.hasPrefix("more: scrollback --db \(runner.databasePath) list --sort updated --limit 3 --after "))
        let bad = try runner.run(["list", "--after", "not-a-token"])
        #expect(bad.status == 2)
        #expect(
            bad.error
                == "scrollback: --after: 'not-a-token' is not a page token printed by this version of scrollback; run the command without --after to start from the first page (see 'scrollback list --help')\n")
    }

    @Test("show prints a conversation with its messages in order; ids may be short")
    func show() throws {
        let runner = try BinaryRunner()
        _ = try runner.run(["demo", "--count", "40", "--seed", "9"])
        let list = try runner.json(["list", "--limit", "40"])
        let rows = list["conversations"] as? [[String: Any]] ?? []
        let row = try #require(rows.max { ($0["messageCount"] as? Int ?? 0) < ($1["messageCount"] as? Int ?? 0) })
        let id = try #require(row["id"] as? String)
        let json = try runner.json(["show", String(id.prefix(8))])
        let conversation = json["conversation"] as? [String: Any]
        #expect(conversation?["id"] as? String == id)
        let messages = json["messages"] as? [[String: Any]] ?? []
        #expect(messages.count == row["messageCount"] as? Int)
        #expect(messages.compactMap { $0["number"] as? Int } == Array(1...messages.count))
        let text = try runner.run(["show", id])
        #expect(text.status == 0)
        #expect(text.output.components(separatedBy: "\n── ").count == messages.count + 1)
        let missing = try runner.run(["show", "ffffffff-not"])
        #expect(missing.status == 1)
        #expect(missing.error == "scrollback: no conversation with id 'ffffffff-not'; `scrollback list` shows the ids\n")
        // With 40 ids, some single hex digit starts several of them.
        let prefixes = Dictionary(grouping: rows.compactMap { ($0["id"] as? String)?.prefix(1) }, by: { $0 })
        let shared = try #require(prefixes.first { $0.value.count > 1 })
        let ambiguous = try runner.run(["show", String(shared.key)])
        #expect(ambiguous.status == 1)
        #expect(ambiguous.error == "scrollback: id '\(shared.key)' matches \(shared.value.count) conversations; type more of it\n")
    }

    @Test("search finds words and takes operators literally")
    func search() throws {
        let runner = try BinaryRunner()
        _ = try runner.run(["demo", "--count", "200"])
        let json = try runner.json(["search", "sourdough", "starter", "--limit", "5"])
        let hits = json["hits"] as? [[String: Any]] ?? []
        #expect(hits.count == 5)
        for hit in hits {
            let snippet = try #require(hit["snippet"] as? String)
            #expect(snippet.lowercased().contains("sourdough"))
            let matches = hit["matches"] as? [[Int]] ?? []
            #expect(!matches.isEmpty)
            for match in matches {
                let text = String(Array(snippet)[match[0]..<match[1]]).lowercased()
                #expect(text == "sourdough" || text == "starter")
            }
        }
        #expect(json["next"] is String)
        for query in [#"""#, "AND", "(", "NEAR(a b)", "*", "東京"] {
            let result = try runner.run(["search", query])
            #expect(result.status == 0, "\(query): \(result.error)")
        }
        let cjk = try runner.json(["search", "東京"])
        #expect(!(cjk["hits"] as? [Any] ?? []).isEmpty)
    }

    @Test("rename and delete change the database; delete asks, or needs --yes without a terminal")
    func renameAndDelete() throws {
        let runner = try BinaryRunner()
        _ = try runner.run(["demo", "--count", "10"])
        let ids = (try runner.json(["list"])["conversations"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        let renamed = try runner.run(["rename", ids[0], "A", "new", "title"])
        #expect(renamed.status == 0)
        #expect(renamed.output.hasSuffix(" → A new title\n"))
        #expect((try runner.json(["show", ids[0]])["conversation"] as? [String: Any])?["title"] as? String == "A new title")
        let blank = try runner.run(["rename", ids[0], "   "])
        #expect(blank.status == 1)
        #expect(blank.error == "scrollback: a title cannot be empty or blank; type some text\n")

        let refused = try runner.run(["delete", ids[1]], input: "y\n")
        #expect(refused.status == 2)
        #expect(refused.error.contains("refusing to delete without --yes when standard input is not a terminal"))
        let wrong = try runner.run(["delete", ids[1], "zzzz", "--yes"])
        #expect(wrong.status == 1)
        #expect(try runner.json(["stats"])["conversations"] as? Int == 10)
        let deleted = try runner.run(["delete", ids[1], ids[2], ids[1], "--yes"])
        #expect(deleted.status == 0)
        #expect(deleted.output == "Deleted 2 conversations.\n")
        #expect(try runner.json(["stats"])["conversations"] as? Int == 8)
        #expect(try runner.run(["show", ids[1]]).status == 1)
        #expect(try runner.run(["check"]).status == 0)
    }

    @Test("stats and check report on the database; check fails on damage and --repair mends it")
    func statsAndCheck() throws {
        let runner = try BinaryRunner()
        _ = try runner.run(["demo", "--count", "30"])
        let stats = try runner.json(["stats"])
        #expect(stats["conversations"] as? Int == 30)
        #expect(stats["schemaVersion"] as? Int == Migrator.scrollback.latestVersion)
        #expect((stats["messages"] as? Int ?? 0) >= 60)
        #expect((stats["fileBytes"] as? Int ?? 0) > 0)
        #expect((stats["oldest"] as? String)?.hasSuffix("Z") == true)
        let ok = try runner.run(["check"])
        #expect(ok.status == 0)
        #expect(ok.output.hasPrefix("ok: "))
        do {
            let store = try Store.open(path: runner.databasePath)
            try store.database.write { try store.database.run("UPDATE conversation SET message_count = message_count + 1") }
        }
        let damaged = try runner.run(["check"])
        #expect(damaged.status == 1)
        #expect(damaged.output.contains("problem: message count: conversation "))
        #expect(damaged.error.contains("try `scrollback check --repair`"))
        let repaired = try runner.run(["check", "--repair"])
        #expect(repaired.status == 0, "\(repaired.error)")
    }

    @Test("a file damaged in SQLite's pages: check and check --repair both say --repair cannot mend it and what can, not each other; the bytes stay")
    func damagedPages() throws {
        let runner = try BinaryRunner()
        _ = try runner.run(["demo", "--count", "400"])
        _ = try runner.run(["check"])
        // Pages in the middle overwritten, as a bad disk or a stray write would.
        let handle = try #require(FileHandle(forUpdatingAtPath: runner.databasePath))
        let size = try handle.seekToEnd()
        for page in 0..<20 {
            try handle.seek(toOffset: size / 2 + UInt64(page) * 4096 + 100)
            try handle.write(contentsOf: Data(repeating: 0xFF, count: 64))
        }
        try handle.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: runner.databasePath))
        for arguments in [["check"], ["check", "--repair"]] {
            let result = try runner.run(arguments)
            #expect(result.status == 1, "\(arguments) \(result.error)")
            let last = result.error.split(separator: "\n").last.map(String.init) ?? ""
            #expect(last.contains("damaged in SQLite's own pages, which `check --repair` cannot mend"), "\(arguments): \(result.error)")
            #expect(last.contains(".recover") && !last.contains("run `scrollback check`") && !last.contains("try `scrollback check --repair`"), "\(last)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: runner.databasePath)) == before)
    }

    @Test("check --repair keeps the file and its -wal as they were before it writes: a damaged frame hides a transaction SQLite will not read, and the repair's checkpoint would drop it for good")
    func repairKeepsACopy() throws {
        let runner = try BinaryRunner()
        _ = try runner.run(["demo", "--count", "300"])
        let damaged = runner.folder.file("x.sqlite")
        do {
            let store = try Store.open(path: runner.databasePath)
            try store.database.execute("PRAGMA wal_autocheckpoint = 0")
            try store.database.write { try store.database.run("UPDATE conversation SET pinned = 1 - pinned") }
            // Copied while it is open: the change is only in the -wal.
            try FileManager.default.copyItem(atPath: runner.databasePath, toPath: damaged)
            try FileManager.default.copyItem(atPath: runner.databasePath + "-wal", toPath: damaged + "-wal")
        }
        let pageSize = try Store.open(path: damaged, readOnly: true).database.scalarInt("PRAGMA page_size")
        let handle = try #require(FileHandle(forUpdatingAtPath: damaged + "-wal"))
        try handle.seek(toOffset: UInt64(32 + (24 + pageSize) + 24 + 500))
        try handle.write(contentsOf: Data(repeating: 0xEE, count: 1_000))
        try handle.close()
        let log = try Data(contentsOf: URL(fileURLWithPath: damaged + "-wal"))
        let main = try Data(contentsOf: URL(fileURLWithPath: damaged))
        let repaired = try runner.run(["--db", damaged, "check", "--repair"], withDatabase: false)
        let line = try #require(repaired.output.split(separator: "\n").first { $0.hasPrefix("Kept a copy of it as it was: ") }, "\(repaired.output)")
        #expect(line.hasSuffix(" (and its -wal)"))
        let copy = String(line.dropFirst("Kept a copy of it as it was: ".count).dropLast(" (and its -wal)".count))
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy + "-wal")) == log)
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == main)
    }

    @Test("--readonly refuses every change, creates nothing and leaves the bytes alone")
    func readOnly() throws {
        let runner = try BinaryRunner()
        let missing = try runner.run(["--readonly", "list"])
        #expect(missing.status == 1)
        #expect(missing.error == "scrollback: no database at \(runner.databasePath); run without --readonly to create one, or pass --db PATH\n")
        #expect(runner.dataFiles() == [])

        _ = try runner.run(["demo", "--count", "20"])
        let id = try #require((try runner.json(["list"])["conversations"] as? [[String: Any]])?.first?["id"] as? String)
        let before = try sha256(ofFile: runner.databasePath)
        let files = runner.dataFiles()
        for arguments in [["rename", id, "x"], ["delete", id, "--yes"], ["demo", "--count", "5"], ["check", "--repair"]] {
            let result = try runner.run(["--readonly"] + arguments)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.error == "scrollback: the database is open read-only; run without --readonly to change it\n")
        }
        for arguments in [["list"], ["show", id], ["search", "the"], ["stats"], ["check"], []] {
            let result = try runner.run(arguments + ["--readonly"])
            #expect(result.status == 0, "\(arguments): \(result.error)")
        }
        #expect(try sha256(ofFile: runner.databasePath) == before)
        // Readers of a WAL database may leave SQLite's -shm (and an empty -wal): nothing else.
        #expect(runner.dataFiles().filter { !$0.hasSuffix("-shm") && !$0.hasSuffix("-wal") } == files.filter { !$0.hasSuffix("-shm") && !$0.hasSuffix("-wal") })
        #expect((try? Data(contentsOf: URL(fileURLWithPath: runner.databasePath + "-wal")))?.count ?? 0 == 0)
    }

    @Test("a newer database, a file that is not a database: one line, exit 1, bytes unchanged")
    func refusals() throws {
        let runner = try BinaryRunner()
        try FileManager.default.createDirectory(atPath: runner.dataFolder, withIntermediateDirectories: true)
        try String(repeating: "not sqlite ", count: 100).write(toFile: runner.databasePath, atomically: false, encoding: .utf8)
        let notDatabase = try runner.run(["list"])
        #expect(notDatabase.status == 1)
        #expect(notDatabase.error == "scrollback: \(runner.databasePath) is not a scrollback database (not a SQLite file); pass another --db PATH\n")
        try FileManager.default.removeItem(atPath: runner.databasePath)
        do {
            let newer = try Store.open(
                path: runner.databasePath,
                migrator: Migrator(migrations: Migrator.scrollback.migrations + [Migration(name: "future", sql: "CREATE TABLE future (x);")]))
            try newer.addConversation(title: "from the future", createdAt: 1)
        }
        let before = try sha256(ofFile: runner.databasePath)
        for arguments in [["list"], ["stats", "--readonly"], ["demo"]] {
            let result = try runner.run(arguments)
            #expect(result.status == 1)
            #expect(result.error == "scrollback: \(runner.databasePath) was written by a newer scrollback (schema \(Migrator.scrollback.latestVersion + 1), this one knows \(Migrator.scrollback.latestVersion)); upgrade scrollback\n")
        }
        #expect(try sha256(ofFile: runner.databasePath) == before)
    }

    @Test("text from the database never reaches the terminal raw")
    func sanitizedOutput() throws {
        let runner = try BinaryRunner()
        do {
            let store = try Store.open(path: runner.databasePath)
            try store.addConversation(
                title: "evil \u{1B}]0;pwned\u{07} \u{1B}[2J title \u{202E}", createdAt: 1,
                messages: ["body \u{1B}[31mred\u{1B}[0m\nsecond line \u{9B}"])
        }
        let id = try #require((try runner.json(["list"])["conversations"] as? [[String: Any]])?.first?["id"] as? String)
        for arguments in [["list"], ["show", id], ["search", "evil"], ["search", "second"], ["rename", id, "still evil"]] {
            let result = try runner.run(arguments)
            #expect(result.status == 0)
            let everything = result.output + result.error
            #expect(!everything.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x9B || $0.value == 0x202E }, "\(arguments)")
            #expect(everything.contains("␛"), "\(arguments)")
        }
        // A title with an escape is refused by rename (the storage layer's rule), in words without it.
        let refused = try runner.run(["rename", id, "still \u{1B}[1m evil"])
        #expect(refused.status == 1 && !refused.error.unicodeScalars.contains { $0.value == 0x1B })
    }

    @Test("the default database follows SCROLLBACK_DB, then XDG_DATA_HOME, then HOME")
    func defaultLocation() throws {
        let runner = try BinaryRunner()
        let home = runner.folder.path
        _ = try runner.run(["stats"], withDatabase: false)
        #expect(FileManager.default.fileExists(atPath: home + "/.local/share/scrollback/history.sqlite"))
        _ = try runner.run(["stats"], withDatabase: false, environment: ["XDG_DATA_HOME": home + "/xdg"])
        #expect(FileManager.default.fileExists(atPath: home + "/xdg/scrollback/history.sqlite"))
        _ = try runner.run(["stats"], withDatabase: false, environment: ["SCROLLBACK_DB": home + "/explicit.sqlite", "XDG_DATA_HOME": home + "/xdg"])
        #expect(FileManager.default.fileExists(atPath: home + "/explicit.sqlite"))
    }

    @Test("--demo makes the demo database once and uses it")
    func demoDatabase() throws {
        let runner = try BinaryRunner()
        let first = try runner.run(["--demo"], withDatabase: false)
        #expect(first.status == 0, "\(first.error)")
        let demoPath = runner.folder.path + "/.cache/scrollback/demo.sqlite"
        #expect(first.error.contains("making a demo database at \(demoPath)"))
        #expect(first.output.hasPrefix("\(demoPath): 10,000 conversations, "))
        let second = try runner.run(["--demo", "stats", "--json"], withDatabase: false)
        #expect(second.error == "")
        #expect(second.output.contains("\"conversations\" : 10000"))
    }
}
