import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import ScrollbackViewModels
import TestSupport

/// `\`: the list narrows by title as it is typed (fzf's and htop's habit), the words as `/`
/// finds them, with the filter's other words kept; Enter keeps it, Esc puts back the list.
@Suite("Narrowing the list by title as you type")
@MainActor
struct NarrowTests {
    static func store() throws -> Store {
        let store = try Store.open(path: ":memory:")
        let titles = ["Async Rust in practice", "Trusting the compiler", "rust: async traits", "Café au lait", "東京旅行の計画", "A haiku about rain"]
        try store.inserting(about: .max) {
            for index in 0..<60 {
                let time = BrowserFixture.now.milliseconds - Int64(index) * 60_000
                _ = try store.addConversation(
                    title: "\(titles[index % titles.count]) \(index)", createdAt: time, updatedAt: time, messages: ["message \(index)"],
                    source: index % 2 == 0 ? "claude" : "chatgpt")
            }
        }
        return store
    }

    static func titles(_ browser: BrowserViewModel) -> [String] {
        (0..<browser.list.total).compactMap { browser.list.row(at: $0)?.title }
    }

    @Test("the list follows the typing once it pauses; Enter keeps it and says so; Esc in the list clears it")
    func followsTyping() throws {
        let clock = TestClock()
        let browser = try SearchAsYouTypeTests.browser(try Self.store(), clock: clock)
        _ = try browser.handle(.character("\\"))
        guard case .narrow = browser.prompt else {
            Issue.record("\\ should open the narrowing prompt")
            return
        }
        for character in "rus" { _ = try browser.handle(.character(character)) }
        clock.advance(BrowserViewModel.narrowDelay - 1)
        #expect(!browser.poll())
        #expect(browser.list.total == 60)
        #expect(browser.millisecondsUntilSearch == 1)
        clock.advance(1)
        #expect(browser.poll())
        // "rus" starts a word in two of the six titles, never inside "Trusting".
        #expect(browser.list.total == 20 && Self.titles(browser).allSatisfy { $0.lowercased().contains("rust") && !$0.hasPrefix("Trusting") })
        for character in "t asy" { _ = try browser.handle(.character(character)) }
        clock.advance(BrowserViewModel.narrowDelay)
        #expect(browser.poll())
        #expect(browser.list.total == 20)
        for character in "ncx" { _ = try browser.handle(.character(character)) }
        _ = try browser.handle(.enter)
        #expect(browser.prompt == nil)
        #expect(browser.list.filter == ConversationFilter(title: "rust asyncx"))
        #expect(browser.list.total == 0)
        #expect(browser.status == "Titles with “rust asyncx” — Esc clears the filter")
        // Opened again: the words as they are, selected (typing replaces them).
        _ = try browser.handle(.character("\\"))
        guard case .narrow(let editor, _, _, _) = browser.prompt else { return }
        #expect(editor.text == "rust asyncx" && editor.isAllSelected)
        for character in "café" { _ = try browser.handle(.character(character)) }
        _ = try browser.handle(.enter)
        #expect(browser.list.total == 10 && Self.titles(browser).allSatisfy { $0.hasPrefix("Café au lait") })
        _ = try browser.handle(.escape)
        #expect(browser.list.filter.isEmpty && browser.list.total == 60)
        #expect(browser.status == "Filter cleared: every conversation")
    }

    @Test("Esc in the prompt puts back the list as it was, narrowing and selection included; other filter words stay")
    func escapePutsBack() throws {
        let clock = TestClock()
        let browser = try SearchAsYouTypeTests.browser(try Self.store(), clock: clock)
        _ = try browser.handle(.character("f"))
        for character in "source:chatgpt" { _ = try browser.handle(.character(character)) }
        _ = try browser.handle(.enter)
        #expect(browser.list.total == 30)
        _ = try browser.handle(.character("\\"))
        for character in "haiku" { _ = try browser.handle(.character(character)) }
        _ = try browser.handle(.enter)
        #expect(browser.list.filter == ConversationFilter(source: "chatgpt", title: "haiku"))
        #expect(browser.list.total == 10)
        _ = try browser.handle(.character("j"))
        let selected = try #require(browser.list.selected)
        _ = try browser.handle(.character("\\"))
        for character in "京" { _ = try browser.handle(.character(character)) }
        clock.advance(BrowserViewModel.narrowDelay)
        #expect(browser.poll())
        #expect(browser.list.total == 0, "東京旅行 are all claude's: none passes source:chatgpt")
        _ = try browser.handle(.escape)
        #expect(browser.status == "Narrowing cancelled")
        #expect(browser.list.filter == ConversationFilter(source: "chatgpt", title: "haiku"))
        #expect(browser.list.selected?.id == selected.id)
        // Emptied and kept: the title goes, the source stays.
        _ = try browser.handle(.character("\\"))
        _ = try browser.handle(.backspace)
        _ = try browser.handle(.enter)
        #expect(browser.list.filter == ConversationFilter(source: "chatgpt"))
        #expect(browser.status == "Not narrowed by title")
        // The filter line shows the narrowing as title:, and takes plain words as title words.
        _ = try browser.handle(.character("f"))
        _ = try browser.handle(.control("u"))
        for character in "rust since:2w" { _ = try browser.handle(.character(character)) }
        _ = try browser.handle(.enter)
        #expect(browser.list.filter.title == "rust" && browser.list.filter.since != nil)
    }

    @Test("marks a word typed on the way hides come back with the words kept, or with Esc; those the words hide go")
    func marksSurvive() throws {
        let clock = TestClock()
        let store = try Self.store()
        let browser = try SearchAsYouTypeTests.browser(store, clock: clock)
        // Marks on "Async Rust in practice 0" and "Trusting the compiler 1".
        for key: Key in [.character(" "), .character(" ")] { _ = try browser.handle(key) }
        #expect(browser.list.marks.count == 2)
        _ = try browser.handle(.character("\\"))
        for character in "cafe" { _ = try browser.handle(.character(character)) }
        clock.advance(BrowserViewModel.narrowDelay)
        #expect(browser.poll())
        #expect(browser.list.marks.isEmpty, "hidden marks are never acted on")
        _ = try browser.handle(.escape)
        #expect(browser.list.marks.count == 2)
        _ = try browser.handle(.character("\\"))
        for character in "cafe" { _ = try browser.handle(.character(character)) }
        clock.advance(BrowserViewModel.narrowDelay)
        _ = browser.poll()
        _ = try browser.handle(.control("u"))
        for character in "rust" { _ = try browser.handle(.character(character)) }
        _ = try browser.handle(.enter)
        // "rust" keeps "Async Rust in practice 0", not "Trusting…": one mark, on the row shown.
        #expect(browser.list.marks.count == 1)
        let marked = try #require(browser.list.marks.first)
        #expect(try store.conversations.conversation(id: marked)?.title == "Async Rust in practice 0")
    }

    @Test("a paste narrows as typing does; hostile words are shown made safe; read-only narrows too")
    func pasteAndHostile() throws {
        let clock = TestClock()
        let store = try Self.store()
        _ = try store.addConversation(title: "evil \u{1B}]52;c;aGk=\u{07} title", createdAt: BrowserFixture.now.milliseconds)
        let browser = try SearchAsYouTypeTests.browser(store, clock: clock)
        _ = try browser.handle(.character("\\"))
        _ = try browser.handle(.paste("evil \u{1B}]52"))
        clock.advance(BrowserViewModel.narrowDelay)
        #expect(browser.poll())
        #expect(browser.list.total == 1)
        _ = try browser.handle(.enter)
        let status = try #require(browser.status)
        #expect(!status.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(status.debugDescription)")

        let readOnly = try BrowserFixture(store: store, readOnly: true)
        try readOnly.press(.character("\\"))
        try readOnly.type("haiku")
        try readOnly.press(.enter)
        #expect(readOnly.browser.list.total == 10)
    }

    @Test("\\ acts on the list only: the reader and the results say where it does; a search on its way holds it")
    func otherScreens() throws {
        let fixture = try BrowserFixture(store: try Self.store())
        try fixture.press(.enter, .character("\\"))
        #expect(fixture.browser.status?.hasPrefix("\\ does nothing here (in the list: narrow by title as you type") == true, "\(fixture.browser.status ?? "")")
        #expect(KeyBindings.helpLines(for: .list).contains { $0.hasPrefix("\\ ") && $0.contains("Narrow by title as you type") })
        #expect(BrowserCommand(configName: "narrow") == .narrow)
    }

    @Test("a title another process changes while the list is narrowed: the row joins or leaves the narrowed list when idle, the count with it")
    func renamedElsewhere() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        do {
            let store = try Store.open(path: path)
            for index in 0..<30 {
                let time = BrowserFixture.now.milliseconds - Int64(index) * 60_000
                try store.addConversation(title: index % 3 == 0 ? "rust notes \(index)" : "garden \(index)", createdAt: time, updatedAt: time)
            }
        }
        let fixture = try BrowserFixture(store: Store.open(path: path))
        let browser = fixture.browser
        try fixture.press(.character("\\"))
        try fixture.type("rust")
        try fixture.press(.enter)
        #expect(browser.list.total == 10)
        let other = try Store.open(path: path)
        let rows = try other.conversations.page(sort: .updated, at: .first, limit: 30).items
        let joining = try #require(rows.first { $0.title == "garden 4" })
        let leaving = try #require(rows.first { $0.title == "rust notes 9" })
        _ = try other.conversations.rename(id: joining.id, to: "rust garden")
        #expect(try browser.idle())
        #expect(browser.list.total == 11)
        #expect(Self.titles(browser).contains("rust garden"))
        _ = try other.conversations.rename(id: leaving.id, to: "plain")
        #expect(try browser.idle())
        try fixture.press(.character("G"), .character("g"), .character("j"))
        #expect(browser.list.total == 10)
        #expect(!Self.titles(browser).contains("plain") && Self.titles(browser).contains("rust garden"))
        // The selected row renamed out: the selection goes to the next row, the count down.
        let selected = try #require(browser.list.selected)
        let next = try #require(browser.list.row(at: browser.list.selection + 1))
        _ = try other.conversations.rename(id: selected.id, to: "elsewhere")
        #expect(try browser.idle())
        #expect(browser.list.selected?.id == next.id && browser.list.total == 9)
        // Under the open narrowing prompt, the list it shows follows such changes too.
        try fixture.press(.character("\\"))
        _ = try other.conversations.rename(id: selected.id, to: "rust again")
        #expect(try browser.idle())
        #expect(browser.list.total == 10 && Self.titles(browser).contains("rust again"))
        try fixture.press(.enter)
        #expect(browser.list.total == 10)
        // Renamed here out of the narrowing: the row goes, and the footer says where.
        try fixture.press(.character("g"))
        let mine = try #require(browser.list.selected)
        try fixture.press(.character("r"), .control("u"))
        try fixture.type("nothing to see")
        try fixture.press(.enter)
        #expect(browser.status == "Renamed (its new title is not in the filtered list: Esc shows every one) — u undoes")
        #expect(browser.list.total == 9 && browser.list.selected?.id != mine.id)
        try fixture.press(.character("u"))
        #expect(browser.list.total == 10)
    }
}
