import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import ScrollbackViewModels
import TerminalText
import TestSupport

@Suite("Reader and search view models")
@MainActor
struct ReaderAndSearchTests {
    @Test("a conversation of 100,000 messages pages through the repository, bounded")
    func longConversation() throws {
        let store = try Store.open(path: ":memory:")
        let conversation = try store.inserting(about: .max) {
            try store.addConversation(title: "long", createdAt: 0, messages: (0..<100_000).map { "line \($0)" })
        }
        let reader = try ReaderViewModel(conversation: conversation, messages: store.messages, width: 60, pageSize: 200, maximumLoaded: 1_000)
        reader.viewportHeight = 20
        try reader.open()
        #expect(reader.visibleLines.first?.style == .header(.user))
        #expect(reader.visibleLines.dropFirst().first?.text == "line 0")
        var maximumLines = 0
        for _ in 0..<2_000 {
            try reader.pageDown()
            maximumLines = max(maximumLines, reader.lines.count)
        }
        // 2,000 pages of 19 lines, 3 lines a message.
        #expect(reader.topPosition == 2_000 * 19 / 3)
        #expect(maximumLines <= 3 * 1_000 + 3 * 200)
        try reader.toEnd()
        #expect(reader.topPosition == 99_993)
        #expect(reader.visibleLines.last?.style == .blank)
        #expect(reader.visibleLines.contains { $0.text == "line 99999" })
        try reader.pageUp()
        try reader.scroll(by: -1)
        #expect(reader.visibleLines.first?.position == 99_986)
        try reader.toStart()
        #expect(reader.topPosition == 0)
    }

    @Test("text wraps to the width by cells; code blocks are kept apart")
    func layout() throws {
        let store = try Store.open(path: ":memory:")
        let conversation = try store.addConversation(
            title: "layout", createdAt: 0,
            messages: ["東京の天気はどうですか？明日は雨が降りますか？", "Here:\n```swift\nlet x = 1 // a long comment that goes past the width\n```\ndone \u{1B}[31m"])
        let reader = try ReaderViewModel(conversation: conversation, messages: store.messages, width: 20)
        reader.viewportHeight = 30
        try reader.open()
        let lines = reader.lines
        #expect(lines.allSatisfy { DisplayWidth.of($0.text) <= 20 })
        #expect(lines.map(\.text).contains("東京の天気はどうです"))
        #expect(lines.contains { $0.style == .fence && $0.text == "```swift" })
        let code = lines.filter { $0.style == .code }.map(\.text)
        #expect(code == ["│ let x = 1 // a lon", "│ g comment that goe", "│ s past the width"])
        #expect(lines.contains { $0.text == "done ␛[31m" })
        reader.resize(width: 40, height: 30)
        #expect(reader.lines.filter { $0.style == .code }.count == 2)
    }

    @Test("a block fenced with four backticks keeps a line of three inside it as code (imports fence code that holds fences so)")
    func longerFence() throws {
        let store = try Store.open(path: ":memory:")
        let conversation = try store.addConversation(
            title: "fences", createdAt: 0, messages: ["````md\n```\n## not a heading\n```python x\n````\nafter"])
        let reader = try ReaderViewModel(conversation: conversation, messages: store.messages, width: 40)
        reader.viewportHeight = 30
        try reader.open()
        let lines = reader.lines
        #expect(lines.filter { $0.style == .code }.map(\.text) == ["│ ```", "│ ## not a heading", "│ ```python x"])
        #expect(lines.filter { $0.style == .fence }.map(\.text) == ["````md", "````"])
        #expect(lines.contains { $0.text == "after" && $0.style != .code })
        #expect(MarkdownTranscript.codeBlocks(in: "````md\n```\n## not a heading\n```python x\n````\nafter") == ["```\n## not a heading\n```python x"])
    }

    @Test("search: / opens a prompt, Enter lists matches, Enter opens the message, n/N move, Esc returns")
    func searchNavigation() throws {
        let store = try Store.open(path: ":memory:")
        for index in 0..<30 {
            try store.addConversation(
                title: "chat \(index)", createdAt: Int64(index) * 1_000,
                messages: (0..<40).map { $0 == 25 ? "the walrus \(index) said hello" : "filler \($0)" })
        }
        let fixture = try BrowserFixture(store: store)
        let browser = fixture.browser
        try fixture.press(.character("j"), .character("j"))
        try fixture.press(.character("/"))
        try fixture.type("walrus")
        try fixture.press(.enter)
        #expect(browser.screen == .results)
        let search = try #require(browser.search)
        #expect(search.hits.count == 30)
        #expect(search.selected?.conversation.title == "chat 29")
        try fixture.press(.character("n"), .enter)
        #expect(browser.screen == .reader)
        #expect(browser.reader?.conversation.title == "chat 28")
        #expect(browser.reader?.topPosition == 25)
        #expect(browser.reader?.visibleLines.dropFirst().first?.text == "the walrus 28 said hello")
        #expect(browser.reader?.highlights == ["walrus"])
        // n and N stay in this conversation: its one match, said so, never another chat.
        #expect(browser.reader?.find?.positions == [25])
        try fixture.press(.character("n"))
        #expect(browser.reader?.conversation.title == "chat 28")
        #expect(browser.status == "The only match in this conversation")
        try fixture.press(.character("N"), .character("N"))
        #expect(browser.reader?.conversation.title == "chat 28")
        try fixture.press(.escape)
        #expect(browser.screen == .results)
        try fixture.press(.escape)
        #expect(browser.screen == .list)
        #expect(fixture.selectedTitle == "chat 27")
        // A query with FTS syntax is just text.
        try fixture.press(.character("/"), .control("u"))
        try fixture.type("\"wal* AND (")
        try fixture.press(.enter)
        #expect(browser.status == "Nothing matches “\"wal* AND (”")
    }
}

@Suite("Background search")
@MainActor
struct BackgroundSearchTests {
    static func browser(_ folder: TemporaryDirectory) throws -> (Store, BrowserViewModel) {
        let path = folder.file("h.sqlite")
        let store = try Store.open(path: path)
        for index in 0..<40 {
            try store.addConversation(title: "chat \(index)", createdAt: Int64(index), messages: ["the walrus \(index)", "filler"])
        }
        let browser = try BrowserViewModel(
            repositories: .init(conversations: store.conversations, messages: store.messages, search: store.search, settings: store.settings, activity: store.activity),
            databasePath: path, isReadOnly: false, searchRunner: BackgroundSearchRunner(path: path))
        browser.resize(width: 80, height: 24)
        try browser.start()
        return (store, browser)
    }

    static func waitForPoll(_ browser: BrowserViewModel) -> Bool {
        for _ in 0..<2_000 {
            if browser.poll() { return true }
            usleep(5_000)
        }
        return false
    }

    @Test("the search runs on its own connection; the screen stays on the list until the results come")
    func results() throws {
        let folder = try TemporaryDirectory()
        let (_, browser) = try Self.browser(folder)
        _ = try browser.handle(.character("/"))
        for character in "walrus" { _ = try browser.handle(.character(character)) }
        _ = try browser.handle(.enter)
        #expect(browser.searching == "walrus" || browser.screen == .list)
        _ = try browser.handle(.character("j"))  // keys still work meanwhile
        #expect(Self.waitForPoll(browser))
        #expect(browser.screen == .results)
        #expect(browser.searching == nil)
        #expect(browser.search?.hits.count == 40)
        try browser.search?.move(by: 39)
        #expect(browser.search?.selected?.conversation.title == "chat 0")
    }

    @Test("Esc cancels a running search: its results never replace the screen")
    func cancel() throws {
        let folder = try TemporaryDirectory()
        let (_, browser) = try Self.browser(folder)
        _ = try browser.handle(.character("/"))
        for character in "walrus" { _ = try browser.handle(.character(character)) }
        _ = try browser.handle(.enter)
        _ = try browser.handle(.escape)
        #expect(browser.status == "Search cancelled")
        #expect(browser.searching == nil)
        usleep(200_000)
        #expect(!browser.poll())
        #expect(browser.screen == .list)
    }

    @Test("keys that act on a conversation, between a search asked for and its results, never reach the list behind")
    func nothingActsBehindAPendingSearch() throws {
        let folder = try TemporaryDirectory()
        let (store, browser) = try Self.browser(folder)
        // As an unbracketed paste of "walrus\nd" then y would arrive: one key at a time.
        _ = try browser.handle(.character("/"))
        for character in "walrus" { _ = try browser.handle(.character(character)) }
        _ = try browser.handle(.enter)
        #expect(browser.searching == "walrus")
        for key in [Key.character("d"), .character("y"), .character("r"), .character(" "), .character("D"), .character("u")] {
            #expect(try browser.handle(key))
            #expect(browser.prompt == nil)
        }
        #expect(browser.status == "Searching… the results come first (Esc cancels)")
        #expect(try store.conversations.count() == 40)
        // q stops the search rather than quitting.
        #expect(try browser.handle(.character("q")))
        #expect(browser.searching == nil && browser.status == "Search cancelled")
        #expect(try store.conversations.count() == 40)
    }
}
