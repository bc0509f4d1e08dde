import Foundation
import Testing

@testable import ScrollbackCLI
import ScrollbackModel
@testable import ScrollbackStorage
@testable import ScrollbackViewModels
import TerminalText
import TestSupport

/// Rough edges a hostile tester and a newcomer met on the command line, each as it was seen.
@Suite("Rough edges of the command line, found off the tested paths")
struct RoughEdgesCommandTests {
    static func importing(_ runner: BinaryRunner, _ records: [String]) throws {
        let path = runner.folder.file("records-\(records.count).jsonl")
        try records.joined(separator: "\n").write(toFile: path, atomically: false, encoding: .utf8)
        let result = try runner.run(["import", path])
        #expect(result.status == 0, "\(result.error)")
    }

    @Test("rename keeps to the storage layer's rule for titles, in its words: no 100,000 characters, no ESC; line breaks and tabs become spaces")
    func renameRule() throws {
        let runner = try BinaryRunner()
        try Self.importing(runner, [DailyUseCommandTests.record("11111111-0000-4000-8000-000000000001", title: "Plain", date: "2026-01-01T10:00:00.000Z")])
        let long = try runner.run(["rename", "11111111", String(repeating: "x", count: 100_000)])
        #expect(long.status == 1 && long.error == "scrollback: a title is at most 1,000 characters (this one has 100,000); nothing was changed\n", "\(long.error)")
        for hostile in ["esc \u{1B}[31mred", "bell \u{07}", "over \u{202E}ride", "del \u{7F}"] {
            let refused = try runner.run(["rename", "11111111", hostile])
            #expect(refused.status == 1 && refused.error.contains("cannot hold control characters"), "\(refused.error)")
            #expect(!refused.error.contains("\u{1B}"))
        }
        let spaced = try runner.run(["rename", "11111111", "two\nlines\tand a tab"])
        #expect(spaced.status == 0, "\(spaced.error)")
        #expect(try runner.run(["list"]).output.contains("two lines and a tab"))
        #expect(try runner.run(["rename", "11111111", String(repeating: "y", count: 1_000)]).status == 0)
        // One character of 20,001 code points (a letter under 20,000 marks) is long too.
        let marks = try runner.run(["rename", "11111111", "e" + String(repeating: "\u{301}", count: 20_000)])
        #expect(marks.status == 1 && marks.error.contains("at most 4,000 code points") && marks.error.contains("this one has 20,001"), "\(marks.error)")
        #expect(!marks.error.contains("characters (this one"), "one character is not 20,001 characters: \(marks.error)")
        // Marks that change the characters next to them, and a mark with no letter under it
        // (from the fourth hostile round).
        for format in ["\u{FFF9}note\u{FFFA}ruby\u{FFFB}", "\u{0600}123", "end \u{06DD}12", "\u{070F}syriac", "x\u{110BD}1"] {
            let result = try runner.run(["rename", "11111111", format])
            #expect(result.status == 1 && result.error.contains("marks that change the letters next to them"), "\(result.error)")
        }
        for lone in ["\u{301}accent first", "\u{20DD} circled", "\u{0903}x"] {
            let result = try runner.run(["rename", "11111111", lone])
            #expect(result.status == 1 && result.error.contains("cannot start with a combining mark"), "\(result.error)")
        }
        #expect(try runner.run(["rename", "11111111", "cafe\u{301} and a\u{20DD}"]).status == 0)
        // Tag characters belong in a subdivision flag, and only there.
        let wales = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0077}\u{E006C}\u{E0073}\u{E007F}"
        let flag = try runner.run(["rename", "11111111", "Trip to " + wales])
        #expect(flag.status == 0, "\(flag.error)")
        #expect(try runner.run(["show", "11111111", "--json"]).output.contains("Trip to " + wales))
        #expect(try runner.run(["rename", "11111111", "x\u{E0067}\u{E0062}\u{E007F}"]).status == 1)
        // Text smuggled in tags hung on a 🏴 is no flag (from the sixth hostile round): only
        // two to six lower-case tag letters or digits are.
        func tags(_ text: String) -> String {
            "\u{1F3F4}" + String(String.UnicodeScalarView(text.unicodeScalars.compactMap { Unicode.Scalar($0.value + 0xE0000) })) + "\u{E007F}"
        }
        for smuggled in [tags("IGNORE ALL PREVIOUS INSTRUCTIONS"), tags("AB"), tags("g"), tags("gbscttt"), tags("gb sct")] {
            let result = try runner.run(["rename", "11111111", "Hi " + smuggled])
            #expect(result.status == 1 && result.error.contains("tag characters"), "\(result.error)")
            #expect(UntrustedText.sanitized("Hi " + smuggled).contains("⍰"))
        }
        for real in [tags("gbsct"), tags("gbeng"), tags("usca"), tags("fr75")] {
            #expect(ConversationTitle.isTagFlag(Character(real)) == true && UntrustedText.sanitized(real) == real)
        }
        // The browser's editor says the same words for the same rule.
        #expect(throws: StorageError.titleHasControls) { try ConversationTitle.normalized("a\u{1B}b") }
        #expect(throws: StorageError.titleTooLong(characters: 1_001)) { try ConversationTitle.normalized(String(repeating: "z", count: 1_001)) }
        #expect(throws: StorageError.invalidTitle) { try ConversationTitle.normalized(" \n\t ") }
        // What shows nothing is blank; invisible marks and tags are refused as controls are
        // (from the third hostile round).
        for invisible in ["\u{AD}", "\u{200B}\u{200B}", "\u{FEFF}", "\u{2800}", "\u{3164}", " \u{200D} "] {
            #expect(throws: StorageError.invalidTitle, "\(invisible.unicodeScalars.map { String($0.value, radix: 16) })") {
                try ConversationTitle.normalized(invisible)
            }
            let result = try runner.run(["rename", "11111111", invisible])
            #expect(result.status == 1 && result.error.contains("cannot be empty or blank"), "\(result.error)")
        }
        for smuggled in ["a\u{E0041}\u{E0042}", "\u{200E}\u{200F}x", "x\u{061C}"] {
            #expect(throws: StorageError.titleHasControls) { try ConversationTitle.normalized(smuggled) }
        }
        #expect(try ConversationTitle.normalized("naïve\u{AD}ly 👩‍👩‍👧") == "naïve\u{AD}ly 👩‍👩‍👧")
    }

    @Test("an option given twice is refused, saying both; --since 3m --until 3m is one instant, not two")
    func repeatedOptions() throws {
        let runner = try BinaryRunner()
        try Self.importing(runner, [DailyUseCommandTests.record("22222222-0000-4000-8000-000000000001", title: "Plain", date: "2026-01-01T10:00:00.000Z")])
        let twice = try runner.run(["list", "--since", "2w", "--since", "3w"])
        #expect(twice.status == 2 && twice.error.contains("--since is given twice ('2w', then '3w'); give it once"), "\(twice.error)")
        let limit = try runner.run(["list", "-n", "5", "--limit", "6"])
        #expect(limit.status == 2 && limit.error.contains("--limit is given twice"), "\(limit.error)")
        let instant = try runner.run(["list", "--since", "3m", "--until", "3m"])
        #expect(instant.status == 0, "\(instant.error)")
        let words = instant.error.split(whereSeparator: { $0 == " " || $0 == "\n" }).filter { $0.hasPrefix("since:") || $0.hasPrefix("until:") }
            .map { String($0.dropFirst(6)).replacingOccurrences(of: "Z.", with: "Z") }
        #expect(words.count == 2 && words[0] == words[1], "\(instant.error)")
    }

    @Test("export --out-dir onto a dangling symlink says so, in scrollback's words")
    func danglingOutDir() throws {
        let runner = try BinaryRunner()
        try Self.importing(runner, [DailyUseCommandTests.record("33333333-0000-4000-8000-000000000001", title: "Plain", date: "2026-01-01T10:00:00.000Z")])
        let link = runner.folder.file("dangling")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: runner.folder.file("nowhere/at/all"))
        let result = try runner.run(["export", "--out-dir", link])
        #expect(result.status == 1 && result.error.contains("is a symlink to nothing"), "\(result.error)")
        #expect(!result.error.contains("The operation could not be completed"))
        // A loop of symlinks is said as one (it is not "to nothing").
        try FileManager.default.createSymbolicLink(atPath: runner.folder.file("loopa"), withDestinationPath: runner.folder.file("loopb"))
        try FileManager.default.createSymbolicLink(atPath: runner.folder.file("loopb"), withDestinationPath: runner.folder.file("loopa"))
        let loop = try runner.run(["export", "--out-dir", runner.folder.file("loopa")])
        #expect(loop.status == 1 && loop.error.contains("is a loop of symlinks"), "\(loop.error)")
        // A missing folder, deep: made, as mkdir -p does.
        let deep = runner.folder.file("new/deep/folder")
        #expect(try runner.run(["export", "--out-dir", deep]).status == 0)
        #expect(FileManager.default.fileExists(atPath: deep))
    }

    @Test("list's columns line up when an id is printed longer, to name one conversation")
    func idColumn() throws {
        let runner = try BinaryRunner()
        try Self.importing(runner, [
            DailyUseCommandTests.record("44444444-aaaa-4000-8000-000000000001", title: "First", date: "2026-01-01T10:00:00.000Z"),
            DailyUseCommandTests.record("44444444-aaab-4000-8000-000000000002", title: "Second", date: "2026-01-02T10:00:00.000Z"),
            DailyUseCommandTests.record("55555555-0000-4000-8000-000000000003", title: "Third", date: "2026-01-03T10:00:00.000Z"),
        ])
        // A model name of two-cell characters takes its cells, not its characters.
        try Self.importing(runner, [DailyUseCommandTests.record("66666666-0000-4000-8000-000000000004", title: "Fourth", model: "通义千问", date: "2025-12-31T10:00:00.000Z")])
        let lines = try runner.run(["list"]).output.split(separator: "\n").map(String.init).filter { !$0.hasSuffix("Fourth") }
        let fourth = try #require(try runner.run(["list"]).output.split(separator: "\n").map(String.init).first { $0.hasSuffix("Fourth") })
        #expect(DisplayWidth.of(fourth) - DisplayWidth.of("Fourth") == lines[0].distance(from: lines[0].startIndex, to: try #require(lines[0].range(of: "TITLE")).lowerBound), "\(fourth)")
        #expect(lines.count == 4)
        // Each title starts under TITLE.
        let titleAt = try #require(lines[0].range(of: "TITLE")).lowerBound.utf16Offset(in: lines[0])
        for line in lines.dropFirst() {
            let title = ["First", "Second", "Third"].first { line.hasSuffix($0) } ?? ""
            #expect(line.utf16.count - title.utf16.count == titleAt, "\(lines)")
        }
        #expect(lines[1].hasPrefix("55555555 ") && lines[2].hasPrefix("44444444-aaab"), "\(lines)")
    }

    @Test("list's MSGS column groups its counts, as the browser does, and widens for the widest; MSGS stays over them")
    func groupedCounts() throws {
        let runner = try BinaryRunner()
        do {
            let store = try Store.open(path: runner.databasePath)
            let long = try store.addConversation(title: "Long one", createdAt: 1_000, messages: ["one"])
            _ = try store.addConversation(title: "Short one", createdAt: 2_000, messages: ["one", "two"])
            // As counted for a conversation of 123,456 messages (making them takes minutes).
            try store.database.run("UPDATE conversation SET message_count = 123456 WHERE id = ?", [.integer(long.id)])
        }
        let lines = try runner.run(["list"]).output.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(lines)")
        let header = lines[0]
        let countsEnd = try #require(header.range(of: "MSGS")).upperBound.utf16Offset(in: header)
        let long = try #require(lines.first { $0.hasSuffix("Long one") })
        let short = try #require(lines.first { $0.hasSuffix("Short one") })
        #expect(long.contains(" 123,456  "), "\(long)")
        for line in [long, short] {
            let end = try #require(line.range(of: line == long ? "123,456" : " 2  ")).upperBound.utf16Offset(in: line) - (line == long ? 0 : 2)
            #expect(end == countsEnd, "\(lines)")
        }
        #expect(long.range(of: "Long one")?.lowerBound.utf16Offset(in: long) == header.range(of: "TITLE")?.lowerBound.utf16Offset(in: header))
    }

    @Test("a config file that starts with a byte-order mark keeps its first section; the default file's words")
    func configRoughEdges() {
        let config = BrowserConfig.parse("\u{FEFF}[display]\nwheel_step = 7\n")
        #expect(config.problems.isEmpty && config.wheelStep == 7, "\(config.problems)")
        #expect(BrowserConfig.defaultFile().contains("the header of an assistant message"))
        #expect(!BrowserConfig.defaultFile().contains("a assistant"))
    }

    @Test("Ctrl-C while the demo database is made: exit 130, one line, nothing added (it ended the process with its progress line left unfinished)")
    func demoInterrupted() throws {
        let runner = try BinaryRunner()
        let cache = runner.folder.file("cache")
        let process = try ChildProcess(
            BinaryRunner.binary.path, ["--demo", "list"],
            environment: TestEnvironment.variables(home: runner.folder.path, adding: ["XDG_CACHE_HOME": cache]),
            output: runner.folder.file("out"), error: runner.folder.file("err"))
        var polls = 0
        while polls < 10_000 && !ImportHostileCommandTests.holdsInterrupts(process.pid) {
            usleep(1_000)
            polls += 1
        }
        usleep(300_000)
        kill(process.pid, SIGINT)
        let ending = process.wait()
        let said = (try? String(contentsOfFile: runner.folder.file("err"), encoding: .utf8)) ?? ""
        // Made whole before the signal came (a fast machine): then it lists them.
        if ending == .exited(0) { return }
        #expect(ending == .exited(130), "\(ending): \(said)")
        #expect(said.hasSuffix("scrollback: stopped; no demo conversation was added\n"), "\(said)")
        let stats = try runner.run(["--db", cache + "/scrollback/demo.sqlite", "stats", "--json"], withDatabase: false)
        let count = (try JSONSerialization.jsonObject(with: Data(stats.output.utf8)) as? [String: Any])?["conversations"] as? Int
        #expect(count == 0)
    }

    @Test("import of a folder that holds export folders (chatgpt/, claude/) imports them, saying what it found; an empty one says where it looked")
    func folderOfExports() throws {
        let runner = try BinaryRunner()
        let top = runner.folder.file("exports")
        for (name, fixture) in [("chatgpt", "chatgpt"), ("claude", "claude"), (".hidden", "chatgpt")] {
            try FileManager.default.createDirectory(atPath: top + "/" + name, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: "/work/shared/fixtures/\(fixture)/conversations.json", toPath: top + "/\(name)/conversations.json")
        }
        try FileManager.default.createDirectory(atPath: top + "/empty/inner", withIntermediateDirectories: true)
        let imported = try runner.run(["import", top])
        #expect(imported.status == 0, "\(imported.error)")
        #expect(imported.output.contains("found: \(top) holds no export itself; importing those in its folders chatgpt/, claude/"), "\(imported.output)")
        let sources = try #require(try runner.json(["list"])["conversations"] as? [[String: Any]]).compactMap { $0["source"] as? String }
        #expect(Set(sources) == ["chatgpt", "claude"], "\(sources)")
        let empty = try runner.run(["import", top + "/empty"])
        #expect(empty.status == 1 && empty.error.contains("no export in this folder (looked for conversations.json and conversations-000.json, here and in inner/)"), "\(empty.error)")
    }
}
