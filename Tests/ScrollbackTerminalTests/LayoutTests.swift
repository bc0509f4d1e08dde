import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
@testable import ScrollbackTerminal
import ScrollbackViewModels
import TerminalText
import TestSupport

/// Layout on an in-memory screen against golden text files in `Golden/`. Run with
/// `SCROLLBACK_RECORD_GOLDEN=1` to write them anew after a deliberate change, then read
/// the diff.
@Suite("Layout")
@MainActor
struct LayoutTests {
    static let now = Timestamp(milliseconds: 1_800_000_000_000)
    static let hour: Int64 = 3_600_000

    /// Awkward text everywhere: CJK, emoji, combining marks, controls, bidi overrides.
    static func makeStore() throws -> Store {
        let store = try Store.open(path: ":memory:")
        let rows: [(String, Int64, Bool, [String])] = [
            ("東京旅行の計画", 1, false, ["東京で美味しいラーメン屋を教えてください。", "新宿と渋谷にあります。🍜"]),
            ("Emoji 😀😃😄 in commit messages", 3, false, ["Is 👩‍💻 one character?", "Yes: one grapheme cluster."]),
            ("Cafe\u{301} au lait, cre\u{300}me bru\u{302}le\u{301}e", 30, false, ["Combining marks: e\u{301}"]),
            ("evil \u{1B}[31mred\u{1B}[0m title\u{7}", 50, false, ["body with \u{1B}]0;owned\u{7} and \u{202E}reversed"]),
            ("A very long conversation title that goes on and on about everything we considered, in detail", 200, false, ["short"]),
            ("Pinned plan", 400, true, ["```swift\nlet greeting = \"こんにちは\"\nprint(greeting)\n```\nThat prints a greeting."]),
        ]
        for (title, hoursAgo, pinned, messages) in rows {
            let time = now.milliseconds - hoursAgo * hour
            let conversation = try store.conversations.create(
                NewConversation(title: title, model: "gpt-4o", createdAt: Timestamp(milliseconds: time), pinned: pinned))
            _ = try store.messages.append(
                messages.enumerated().map { index, text in
                    NewMessage(role: index % 2 == 0 ? .user : .assistant, content: text, createdAt: Timestamp(milliseconds: time))
                }, to: conversation.id)
        }
        return store
    }

    static func browser(_ store: Store, width: Int, height: Int, readOnly: Bool = false) throws -> BrowserViewModel {
        let browser = try BrowserViewModel(
            repositories: .init(
                conversations: store.conversations, messages: store.messages, search: store.search, settings: store.settings, activity: store.activity),
            databasePath: "/home/user/history.sqlite", isReadOnly: readOnly, now: { now }, zone: .utc)
        browser.resize(width: width, height: height)
        try browser.start()
        return browser
    }

    static func render(_ browser: BrowserViewModel, width: Int, height: Int) -> MemoryScreen {
        let screen = MemoryScreen(width: width, height: height)
        BrowserRenderer.render(browser, on: screen)
        return screen
    }

    func expectGolden(_ screen: MemoryScreen, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        for (row, line) in screen.lines.enumerated() {
            #expect(DisplayWidth.of(line) <= screen.width, "row \(row) spills: \(line)", sourceLocation: sourceLocation)
        }
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")
        let file = folder.appendingPathComponent(name + ".txt")
        let actual = screen.text + "\n"
        if ProcessInfo.processInfo.environment["SCROLLBACK_RECORD_GOLDEN"] == "1" {
            try actual.write(to: file, atomically: false, encoding: .utf8)
            return
        }
        let expected = try String(contentsOf: file, encoding: .utf8)
        #expect(actual == expected, "\(name) differs from Golden/\(name).txt:\n\(actual)", sourceLocation: sourceLocation)
    }

    @Test("the list at 20, 46, 80 and 200 columns", arguments: [20, 46, 80, 200])
    func list(width: Int) throws {
        let browser = try Self.browser(Self.makeStore(), width: width, height: 10)
        _ = try browser.handle(.character("j"))
        _ = try browser.handle(.character(" "))
        let screen = Self.render(browser, width: width, height: 10)
        try expectGolden(screen, "list-\(width)")
        #expect(screen.isReversed(row: 0))  // header
        #expect(screen.isReversed(row: 3))  // the selection, below the marked row
        #expect(!screen.isReversed(row: 2))
    }

    @Test("a branched conversation: the version marker on the focused message, and the outline", arguments: [20, 46, 80, 200])
    func branches(width: Int) throws {
        let store = try Store.open(path: ":memory:")
        let nodes = Store.sortingTree + [
            TreeNode("a5", "q1", .assistant, "evil \u{1B}[31mred\u{1B}[0m answer\u{7} with \u{202E}reversed text", minute: 6)
        ]
        try store.addTree(title: "Sorting \u{1B}]0;owned\u{7}", start: Self.now.milliseconds - 2 * Self.hour, nodes: nodes)
        let browser = try Self.browser(store, width: width, height: 12)
        _ = try browser.handle(.enter)
        _ = try browser.handle(.character("}"))
        let reader = Self.render(browser, width: width, height: 12)
        try expectGolden(reader, "reader-branch-\(width)")
        let header = try #require(reader.lines.firstIndex { $0.hasPrefix("‹ 2/4 › ") })
        #expect(reader.isReversed(row: header))
        _ = try browser.handle(.character("t"))
        let outline = Self.render(browser, width: width, height: 12)
        try expectGolden(outline, "outline-\(width)")
        let shown = try #require(outline.lines.firstIndex { $0.contains("● ") })
        #expect(outline.isReversed(row: shown))
        for line in reader.lines + outline.lines {
            #expect(!line.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x202E })
            #expect(DisplayWidth.of(line) <= width)
        }
    }

    @Test("hidden messages: the seen transcript, then z shows them dimmed and marked, a tool line collapsed and opened with Tab", arguments: [20, 80, 200])
    func hidden(width: Int) throws {
        let store = try Store.open(path: ":memory:")
        try store.addTree(title: "Repo changes", start: Self.now.milliseconds - 2 * Self.hour, nodes: Store.hiddenTree, current: "x1")
        let browser = try Self.browser(store, width: width, height: 24)
        _ = try browser.handle(.enter)
        let seen = Self.render(browser, width: width, height: 24)
        try expectGolden(seen, "reader-seen-\(width)")
        #expect(!seen.text.contains("Thinking") && !seen.text.contains("browser") && !seen.text.contains("‹"))
        _ = try browser.handle(.character("z"))
        let shown = Self.render(browser, width: width, height: 24)
        try expectGolden(shown, "reader-hidden-\(width)")
        let marked = try #require(shown.lines.firstIndex { $0.contains("hidden reasoning") || $0.contains("hidden r…") || $0.contains("assistant · hid") })
        #expect(shown.isDimmed(row: marked + 1))
        // The tool line, opened with Tab.
        while browser.reader?.focusedMessage?.kind != .tool, try browser.reader?.moveFocus(by: 1) == true {}
        _ = try browser.handle(.tab)
        let opened = Self.render(browser, width: width, height: 24)
        try expectGolden(opened, "reader-tool-open-\(width)")
        #expect(opened.text.contains("M file1.swift") && !opened.text.contains("▸ Bash"))
        for line in seen.lines + shown.lines + opened.lines {
            #expect(!line.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x202E })
            #expect(DisplayWidth.of(line) <= width)
        }
    }

    @Test("a conversation of only hidden messages: the footer says there is no message you saw and what z does, not \"message 1 of 0\"")
    func allHidden() throws {
        let store = try Store.open(path: ":memory:")
        try store.addTree(
            title: "Only context", start: Self.now.milliseconds - Self.hour,
            nodes: [TreeNode("s", nil, .system, "You are ChatGPT.", minute: 0, kind: .internal),
                    TreeNode("r", "s", .assistant, "Thinking only", minute: 1, kind: .reasoning)],
            current: "r")
        let browser = try Self.browser(store, width: 80, height: 12)
        _ = try browser.handle(.enter)
        let screen = Self.render(browser, width: 80, height: 12)
        #expect(screen.text.contains("no message you saw · z shows the 2 hidden"), "\(screen.text)")
        #expect(!screen.text.contains("of 0"))
        _ = try browser.handle(.character("z"))
        #expect(Self.render(browser, width: 80, height: 12).text.contains("Showing 2 hidden messages"))
    }

    @Test("the reader at 20, 46, 80 and 200 columns", arguments: [20, 46, 80, 200])
    func reader(width: Int) throws {
        let store = try Self.makeStore()
        let browser = try Self.browser(store, width: width, height: 16)
        for _ in 0..<4 { _ = try browser.handle(.character("j")) }
        _ = try browser.handle(.enter)
        try expectGolden(Self.render(browser, width: width, height: 16), "reader-evil-\(width)")
        _ = try browser.handle(.escape)
        _ = try browser.handle(.character("g"))
        _ = try browser.handle(.enter)
        try expectGolden(Self.render(browser, width: width, height: 16), "reader-pinned-\(width)")
    }

    @Test("the filter line, then the filtered list with its filter in the header", arguments: [20, 46, 80, 200])
    func filter(width: Int) throws {
        let browser = try Self.browser(Self.makeStore(), width: width, height: 10)
        _ = try browser.handle(.character("f"))
        for character in "since:3w pinned" { _ = try browser.handle(.character(character)) }
        try expectGolden(Self.render(browser, width: width, height: 10), "filter-prompt-\(width)")
        _ = try browser.handle(.enter)
        try expectGolden(Self.render(browser, width: width, height: 10), "filter-\(width)")
    }

    @Test("each screen's help lists its own keys and scrolls when it does not fit", arguments: [20, 46, 80, 200])
    func helpPerScreen(width: Int) throws {
        let browser = try Self.browser(Self.makeStore(), width: width, height: 14)
        _ = try browser.handle(.character("?"))
        try expectGolden(Self.render(browser, width: width, height: 14), "help-list-\(width)")
        // j scrolls the help by a line, G to its end; another key closes it.
        _ = try browser.handle(.character("j"))
        #expect(browser.showingHelp && browser.helpTop == 1)
        _ = try browser.handle(.character("G"))
        let end = Self.render(browser, width: width, height: 14)
        #expect(end.text.contains("Pinned conversations") || width < 46)
        _ = try browser.handle(.character("x"))
        #expect(!browser.showingHelp && browser.screen == .list)
        _ = try browser.handle(.enter)
        _ = try browser.handle(.character("?"))
        let reader = Self.render(browser, width: width, height: 14)
        try expectGolden(reader, "help-reader-\(width)")
        #expect(width < 46 || reader.text.contains("The reader: keys"))
        #expect(KeyBindings.helpLines(for: .reader).contains { $0.hasSuffix("Find in this conversation (the branch shown)") })
        #expect(!KeyBindings.helpLines(for: .reader).contains { $0.contains("Sort by") })
        _ = try browser.handle(.escape)
        _ = try browser.handle(.escape)
        _ = try browser.handle(.character("/"))
        for character in "plan" { _ = try browser.handle(.character(character)) }
        _ = try browser.handle(.enter)
        _ = try browser.handle(.character("?"))
        let results = Self.render(browser, width: width, height: 14)
        try expectGolden(results, "help-results-\(width)")
        #expect(width < 46 || results.text.contains("Search results: keys"))
        #expect(!KeyBindings.helpLines(for: .results).contains { $0.contains("Delete") })
    }

    @Test("the new prompts: pipe to, go to date, export to", arguments: [20, 46, 80, 200])
    func prompts(width: Int) throws {
        for (key, typed, name) in [("|", "wc -c", "pipe"), (":", "2025-03", "jump"), ("x", "", "export")] {
            let browser = try Self.browser(Self.makeStore(), width: width, height: 6)
            _ = try browser.handle(.character(Character(key)))
            for character in typed { _ = try browser.handle(.character(character)) }
            try expectGolden(Self.render(browser, width: width, height: 6), "prompt-\(name)-\(width)")
        }
    }

    @Test("a long error beside a prompt shows on the line above it; the selection takes the palette's selection role")
    func promptErrorsAndPalette() throws {
        let browser = try Self.browser(Self.makeStore(), width: 80, height: 10)
        _ = try browser.handle(.character("f"))
        for character in "since:2025-13" { _ = try browser.handle(.character(character)) }
        _ = try browser.handle(.enter)
        let screen = Self.render(browser, width: 80, height: 10)
        #expect(screen.lines[8].contains("'2025-13' is not a date") && screen.lines[9].hasPrefix(" Filter: since:2025-13"), "\(screen.text)")
        BrowserRenderer.palette = Palette([.selection: "underline green"])
        defer { BrowserRenderer.palette = .standard }
        _ = try browser.handle(.escape)
        let colored = Self.render(browser, width: 80, height: 10)
        let selected = colored.style(row: 1, column: 4)
        #expect(selected.underline && selected.color == .green && !selected.reverse)
    }

    @Test("the header at 40 columns keeps the order and the read-only label; the path is cut first")
    func narrowHeader() throws {
        let readOnly = try Self.browser(Self.makeStore(), width: 40, height: 8, readOnly: true)
        let header = Self.render(readOnly, width: 40, height: 8).lines[0]
        #expect(header.contains("scrollback · by updated") && header.contains("[read-only]"), "\(header)")
        for width in [20, 24, 30] {
            let narrow = try Self.browser(Self.makeStore(), width: width, height: 8, readOnly: true)
            let line = Self.render(narrow, width: width, height: 8).lines[0]
            #expect((line.contains("[read-only]") || line.contains("[ro]")) && line.contains("by updated"), "\(width): \(line)")
        }
        let writable = try Self.browser(Self.makeStore(), width: 40, height: 8)
        let cut = Self.render(writable, width: 40, height: 8).lines[0]
        #expect(cut.contains("scrollback — …") && cut.contains(".sqlite · by updated"), "\(cut)")
    }

    @Test("search results with highlighted matches", arguments: [46, 80])
    func search(width: Int) throws {
        let browser = try Self.browser(Self.makeStore(), width: width, height: 12)
        _ = try browser.handle(.character("/"))
        for character in "東京" { _ = try browser.handle(.character(character)) }
        let prompt = Self.render(browser, width: width, height: 12)
        try expectGolden(prompt, "search-prompt-\(width)")
        #expect(prompt.cursor?.row == 11 && prompt.cursor?.column == 6)
        _ = try browser.handle(.enter)
        let screen = Self.render(browser, width: width, height: 12)
        try expectGolden(screen, "search-\(width)")
        #expect(screen.style(row: 1, column: 2).underline)  // the match in the title hit's title
        #expect(screen.style(row: 2, column: 4).dim)  // "title match", not the title again
        #expect(screen.style(row: 4, column: 4).underline)  // the match in the message hit's snippet
    }

    @Test("narrowing by title: the prompt, the rows whose titles hold the words, the words underlined; hostile titles made safe", arguments: [46, 80])
    func narrowed(width: Int) throws {
        let browser = try Self.browser(Self.makeStore(), width: width, height: 10)
        _ = try browser.handle(.character("\\"))
        for character in "cafe" { _ = try browser.handle(.character(character)) }
        _ = try browser.handle(.enter)
        let screen = Self.render(browser, width: width, height: 10)
        try expectGolden(screen, "narrowed-\(width)")
        #expect(screen.lines[1].contains("Caf") && screen.style(row: 1, column: 2).underline && screen.style(row: 1, column: 5).underline)
        #expect(!screen.style(row: 1, column: 7).underline)
        // Opened again on the words (End keeps them), more typed: the prompt under the list.
        _ = try browser.handle(.character("\\"))
        _ = try browser.handle(.end)
        for character in " crè" { _ = try browser.handle(.character(character)) }
        let prompt = Self.render(browser, width: width, height: 10)
        try expectGolden(prompt, "narrow-prompt-\(width)")
        #expect(prompt.cursor?.row == 9 && prompt.cursor?.column == 17)
        // Words in no title, pasted with an escape sequence: said, made safe.
        _ = try browser.handle(.control("u"))
        _ = try browser.handle(.paste("evil \u{1B}[31mz"))
        _ = try browser.handle(.enter)
        let none = Self.render(browser, width: width, height: 10)
        try expectGolden(none, "narrowed-none-\(width)")
        #expect(!none.lines.joined().unicodeScalars.contains { $0.value == 0x1B })
    }

    @Test("help overlay, delete question, rename editor, read-only footer")
    func overlays() throws {
        let store = try Self.makeStore()
        let browser = try Self.browser(store, width: 80, height: 30)
        _ = try browser.handle(.character("?"))
        try expectGolden(Self.render(browser, width: 80, height: 30), "help-80")
        _ = try browser.handle(.character("x"))
        _ = try browser.handle(.character("d"))
        try expectGolden(Self.render(browser, width: 80, height: 8), "delete-80")
        _ = try browser.handle(.escape)
        _ = try browser.handle(.character("r"))
        let rename = Self.render(browser, width: 46, height: 8)
        try expectGolden(rename, "rename-46")
        #expect(rename.cursor?.row == 7)
        let readOnly = try Self.browser(store, width: 80, height: 8, readOnly: true)
        _ = try readOnly.handle(.character("d"))
        try expectGolden(Self.render(readOnly, width: 80, height: 8), "readonly-80")
    }

    @Test("an empty database shows what to do")
    func empty() throws {
        let browser = try Self.browser(Store.open(path: ":memory:"), width: 60, height: 10)
        try expectGolden(Self.render(browser, width: 60, height: 10), "empty-60")
    }

    @Test("every size down to 1×1 draws what fits without crashing")
    func tinySizes() throws {
        let store = try Self.makeStore()
        let browser = try Self.browser(store, width: 80, height: 24)
        _ = try browser.handle(.enter)
        for width in [0, 1, 2, 5, 19, 20, 21] {
            for height in [0, 1, 2, 4, 5, 6] {
                browser.resize(width: width, height: height)
                let screen = Self.render(browser, width: width, height: height)
                for line in screen.lines { #expect(DisplayWidth.of(line) <= width) }
            }
        }
        try expectGolden(Self.render(browser, width: 19, height: 4), "too-small")
        browser.resize(width: 80, height: 24)
        #expect(Self.render(browser, width: 80, height: 24).lines[0].contains("Pinned plan"))
    }
}
