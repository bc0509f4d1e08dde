import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
@testable import ScrollbackTerminal
import ScrollbackViewModels
import TerminalText
import TestSupport

/// The search footer, the hits' dates, the indexing note, finding in the reader and the
/// approximate position, at 80 and 20 columns, against golden files.
@Suite("Search layout")
@MainActor
struct SearchLayoutTests {
    /// The real search, reporting an index rebuild in progress.
    final class Indexing: SearchRepository {
        let base: any SearchRepository
        init(_ base: any SearchRepository) { self.base = base }
        func search(_ query: String, filter: ConversationFilter, includingHidden: Bool, after cursor: Cursor?, limit: Int) throws -> Page<SearchHit> {
            try base.search(query, filter: filter, includingHidden: includingHidden, after: cursor, limit: limit)
        }
        func matchingPositions(conversationID: Int64, query: String) throws -> [Int] {
            try base.matchingPositions(conversationID: conversationID, query: query)
        }
        func matchingMessageIDs(conversationID: Int64, query: String) throws -> [Int64] {
            try base.matchingMessageIDs(conversationID: conversationID, query: query)
        }
        func indexingProgress() throws -> Double? { 0.376 }
    }

    static func browser(_ store: Store, width: Int, height: Int, indexing: Bool = false) throws -> BrowserViewModel {
        let browser = try BrowserViewModel(
            repositories: .init(
                conversations: store.conversations, messages: store.messages,
                search: indexing ? Indexing(store.search) : store.search, settings: store.settings, activity: store.activity),
            databasePath: "/home/user/history.sqlite", isReadOnly: false, now: { LayoutTests.now }, zone: .utc)
        browser.resize(width: width, height: height)
        try browser.start()
        return browser
    }

    func type(_ text: String, _ browser: BrowserViewModel) throws {
        for character in text { _ = try browser.handle(.character(character)) }
    }

    @Test("hits with their dates and the indexing note", arguments: [20, 80])
    func results(width: Int) throws {
        let browser = try Self.browser(LayoutTests.makeStore(), width: width, height: 10, indexing: true)
        _ = try browser.handle(.character("/"))
        try type("東京", browser)
        _ = try browser.handle(.enter)
        let screen = LayoutTests.render(browser, width: width, height: 10)
        try LayoutTests().expectGolden(screen, "search-indexing-\(width)")
        #expect(screen.lines[1].hasSuffix("1h ago"))
        #expect(screen.lines[9].contains("indexing 37%"))
        if width == 80 { #expect(screen.lines[9].contains("1 of 2 · indexing 37%")) }
    }

    @Test("a long title that matched is cut around the match and keeps its label and date; one space before the label", arguments: [30, 46, 80])
    func longTitleHit(width: Int) throws {
        let browser = try Self.browser(LayoutTests.makeStore(), width: width, height: 10)
        _ = try browser.handle(.character("/"))
        try type("detail", browser)
        _ = try browser.handle(.enter)
        let screen = LayoutTests.render(browser, width: width, height: 10)
        let line = screen.lines[1]
        #expect(line.contains("detail") && line.contains(" · title ") && line.hasSuffix("ago"), "\(line)")
        #expect(!line.contains("  ·"), "\(line)")
        #expect(DisplayWidth.of(line) <= width)
        // Where the title fits, it is whole.
        _ = try browser.handle(.escape)
        _ = try browser.handle(.character("/"))
        for _ in 0..<6 { _ = try browser.handle(.backspace) }
        try type("Pinned", browser)
        _ = try browser.handle(.enter)
        let short = LayoutTests.render(browser, width: width, height: 10).lines[1]
        #expect(short.hasPrefix("  Pinned plan · title"), "\(short)")
    }

    @Test("with no match, the footer still says the index is being built")
    func indexingWithoutMatches() throws {
        let browser = try Self.browser(LayoutTests.makeStore(), width: 80, height: 10, indexing: true)
        _ = try browser.handle(.character("/"))
        try type("zzqxv", browser)
        _ = try browser.handle(.enter)
        let screen = LayoutTests.render(browser, width: 80, height: 10)
        #expect(screen.lines[9].contains("Nothing matches"), "\(screen.lines[9])")
        #expect(screen.lines[9].contains("indexing 37%"), "\(screen.lines[9])")
    }

    @Test("the prompt shows the last query selected, reversed", arguments: [20, 80])
    func selectedQuery(width: Int) throws {
        let browser = try Self.browser(LayoutTests.makeStore(), width: width, height: 8)
        _ = try browser.handle(.character("/"))
        try type("plan", browser)
        _ = try browser.handle(.enter)
        _ = try browser.handle(.character("/"))
        let screen = LayoutTests.render(browser, width: width, height: 8)
        try LayoutTests().expectGolden(screen, "search-reopened-\(width)")
        #expect(screen.style(row: 7, column: 2).reverse)
        _ = try browser.handle(.right)
        #expect(!LayoutTests.render(browser, width: width, height: 8).style(row: 7, column: 2).reverse)
    }

    @Test("finding in the reader: match k of m, the match highlighted", arguments: [20, 80])
    func find(width: Int) throws {
        let browser = try Self.browser(LayoutTests.makeStore(), width: width, height: 10)
        _ = try browser.handle(.character("j"))  // 東京旅行の計画, the newest after the pinned one
        _ = try browser.handle(.enter)
        _ = try browser.handle(.character("/"))
        try type("新宿", browser)
        _ = try browser.handle(.enter)
        let screen = LayoutTests.render(browser, width: width, height: 10)
        try LayoutTests().expectGolden(screen, "reader-find-\(width)")
        let row = try #require(screen.lines.firstIndex { $0.hasPrefix("新宿") })
        #expect(screen.style(row: row, column: 0).underline)
        // The footer counts the focused message: the match.
        if width == 80 { #expect(screen.lines[9].contains("message 2 of 2 · match 1 of 1")) }
    }

    @Test("the position is marked approximate until it is known")
    func approximate() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        let store = try Store.open(path: path)
        try store.inserting(about: .max) {
            for index in 0..<400 {
                try store.addConversation(
                    title: "c\(index)", createdAt: LayoutTests.now.milliseconds - Int64(index) * 60_000, messages: [])
            }
        }
        let browser = try BrowserViewModel(
            repositories: .init(
                conversations: store.conversations, messages: store.messages, search: store.search, settings: store.settings, activity: store.activity),
            databasePath: path, isReadOnly: false, positionRunner: BackgroundPositionRunner(path: path),
            now: { LayoutTests.now }, zone: .utc)
        browser.resize(width: 20, height: 6)
        try browser.start()
        for _ in 0..<50 { _ = try browser.handle(.pageDown) }
        _ = try browser.handle(.character("s"))
        let list = browser.list
        #expect(!list.isIndexExact)
        #expect(ListScreen.position(list) == "~\(NumberText.grouped(list.selection + 1)) of 400")
        for _ in 0..<5_000 where list.isFindingPosition {
            browser.poll()
            usleep(2_000)
        }
        #expect(ListScreen.position(list) == "\(NumberText.grouped(list.selection + 1)) of 400")
    }
}
