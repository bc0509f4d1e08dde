import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
@testable import ScrollbackTerminal
@testable import ScrollbackViewModels
import TerminalText
import TestSupport

/// The activity overview (`a`) on an in-memory screen against goldens, and its keys: Enter
/// on a bar lists what it counts.
@Suite("The activity overview")
@MainActor
struct OverviewLayoutTests {
    /// The list filtered to the fixture's half year, then `a`.
    static func overview(width: Int, height: Int, filter: String = "since:2025-01 until:2025-06") throws -> BrowserViewModel {
        let store = try Store.open(path: ":memory:")
        try store.addActivity()
        let browser = try LayoutTests.browser(store, width: width, height: height)
        try browser.list.setFilter(ConversationFilter.parse(filter, now: LayoutTests.now))
        _ = try browser.handle(.character("a"))
        #expect(browser.screen == .overview)
        return browser
    }

    /// One character a cell for its style: colour (b blue, m magenta…), else R reverse, U
    /// underline, B bold, d dim, `.` plain.
    static func styleMap(_ screen: MemoryScreen) -> String {
        (0..<screen.height).map { row in
            String(
                (0..<screen.width).map { column -> Character in
                    let style = screen.style(row: row, column: column)
                    if let color = style.color {
                        return ["r", "g", "y", "b", "m", "c"][color.rawValue - 1]
                    }
                    return style.reverse ? "R" : style.underline ? "U" : style.bold ? "B" : style.dim ? "d" : "."
                })
        }.joined(separator: "\n")
    }

    @Test("the overview at 20, 46, 80 and 200 columns: totals, each chart with its total, hostile model names made safe", arguments: [20, 46, 80, 200])
    func layout(width: Int) throws {
        let browser = try Self.overview(width: width, height: 46)
        let screen = LayoutTests.render(browser, width: width, height: 46)
        try LayoutTests().expectGolden(screen, "overview-\(width)")
        #expect(!screen.text.contains("\u{1B}") && !screen.text.contains("\u{202E}") && !screen.text.contains("\u{7}"))
        // The colours of the two series, the selection and headings: a style map.
        if width == 80 {
            try LayoutTests().expectGolden(Self.textScreen(Self.styleMap(screen), width: width), "overview-colors-\(width)")
        }
    }

    /// `text` as a screen's lines, for a golden.
    static func textScreen(_ text: String, width: Int) -> MemoryScreen {
        let lines = text.components(separatedBy: "\n")
        let screen = MemoryScreen(width: width, height: lines.count)
        for (row, line) in lines.enumerated() { screen.draw(line, row: row, column: 0, style: .plain) }
        return screen
    }

    @Test("the last 24 months without a filter; a short screen scrolls to the selected bar, its heading with its first bar")
    func scrolling() throws {
        let browser = try Self.overview(width: 60, height: 12, filter: "")
        let overview = try #require(browser.top as? OverviewScreen)
        #expect(overview.window.months == 24 && ActivityWindow.monthLabel(overview.window.start) == "2025-02")
        // LayoutTests.now is 2027-01-15: the fixture's months before the window are left out.
        let first = LayoutTests.render(browser, width: 60, height: 12).lines
        #expect(first[1].hasPrefix(" 10 conversations · 5,660 tokens · 2025-02 to 2027-01") && first[3].contains("Conversations per month · 10"))
        _ = try browser.handle(.character("G"))
        let last = LayoutTests.render(browser, width: 60, height: 12).lines
        #expect(last[10].contains("2025-02-01") && last[11].hasPrefix(" 65 of 65 · 2025-02-01: 1 conversation"), "\(last)")
        _ = try browser.handle(.character("g"))
        #expect(LayoutTests.render(browser, width: 60, height: 12).lines[1] == first[1])
        // j over the whole chart, then the next chart's first bar brings its heading too.
        for _ in 0..<24 { _ = try browser.handle(.character("j")) }
        let tokens = LayoutTests.render(browser, width: 60, height: 12).lines
        #expect(tokens.contains { $0.contains("Tokens per month") })
    }

    @Test("Enter on a bar lists what it counts (month, day, model, source); the model's note says which other models its filter takes; Esc and a go back")
    func enterOnBars() throws {
        let browser = try Self.overview(width: 100, height: 60)
        // March, the third month.
        _ = try browser.handle(.character("j"))
        _ = try browser.handle(.character("j"))
        #expect(browser.top.footer(width: 100).left.hasPrefix("3 of 31 · 2025-03: 4 conversations"))
        _ = try browser.handle(.enter)
        #expect(browser.screen == .list)
        #expect(browser.list.filter.description == "since:2025-03-01 until:2025-03-31")
        #expect(browser.list.total == 4)
        #expect(browser.status?.hasPrefix("Filtered — since:2025-03-01 until:2025-03-31") == true)

        // The models' gpt-4o bar: the list takes gpt-4o-mini too, and says so.
        try browser.list.setFilter(ConversationFilter.parse("since:2025-01 until:2025-06", now: LayoutTests.now))
        _ = try browser.handle(.character("a"))
        let overview = try #require(browser.top as? OverviewScreen)
        let gpt = try #require(overview.lines.firstIndex { overview.bar($0)?.label == "gpt-4o" })
        try overview.click(line: gpt - overview.top, open: false)
        _ = try browser.handle(.enter)
        #expect(browser.list.filter.model == "gpt-4o" && browser.list.total == 5)
        #expect(browser.status?.contains("(also gpt-4o-mini)") == true)

        // The unknown model has no filter: it says so and stays.
        _ = try browser.handle(.escape)
        try browser.list.setFilter(ConversationFilter.parse("since:2025-01 until:2025-06", now: LayoutTests.now))
        _ = try browser.handle(.character("a"))
        let again = try #require(browser.top as? OverviewScreen)
        let unknown = try #require(again.lines.firstIndex { line in again.bar(line).map { $0.label == nil } == true })
        try again.click(line: unknown - again.top, open: true)
        #expect(browser.screen == .overview && browser.status?.hasPrefix("No filter lists the conversations without a model") == true)
        let day = try #require(again.lines.firstIndex { again.bar($0)?.label == "2025-03-14" })
        try again.click(line: day - again.top, open: true)
        #expect(browser.screen == .list && browser.list.filter.description == "since:2025-03-14 until:2025-03-14" && browser.list.total == 4)

        _ = try browser.handle(.character("a"))
        _ = try browser.handle(.character("a"))
        #expect(browser.screen == .list)
        _ = try browser.handle(.character("a"))
        _ = try browser.handle(.escape)
        #expect(browser.screen == .list && browser.list.total == 4)
    }

    /// The fixture in a file, its half year's overview counted by a background runner.
    static func counting(path: String, readOnly: Bool) throws -> (BrowserViewModel, OverviewScreen) {
        let store = try Store.open(path: path)
        try store.addActivity()
        let browser = try BrowserViewModel(
            repositories: .init(
                conversations: store.conversations, messages: store.messages, search: store.search, settings: store.settings,
                activity: store.activity),
            databasePath: path, isReadOnly: readOnly, activityRunner: BackgroundActivityRunner(path: path), now: { LayoutTests.now }, zone: .utc)
        browser.resize(width: 80, height: 46)
        try browser.start()
        try browser.list.setFilter(ConversationFilter.parse("since:2025-01 until:2025-06", now: LayoutTests.now))
        _ = try browser.handle(.character("a"))
        return (browser, try #require(browser.top as? OverviewScreen))
    }

    @Test("counted in the background: the screen opens at once saying so, each chart shows as it arrives, the same as counted in place")
    func background() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        let (browser, overview) = try Self.counting(path: path, readOnly: true)
        for _ in 0..<4_000 where overview.isCounting {
            browser.poll()
            usleep(1_000)
        }
        #expect(!overview.isCounting)
        let inPlace = try Self.overview(width: 80, height: 46)
        // Whatever order the charts came in, the first bar is selected, as counted in place.
        #expect(LayoutTests.render(browser, width: 80, height: 46).lines.dropFirst().dropLast() == LayoutTests.render(inPlace, width: 80, height: 46).lines.dropFirst().dropLast())
        #expect(overview.footer(width: 80).left == (inPlace.top as? OverviewScreen)?.footer(width: 80).left)
    }

    @Test("another process's import while the overview is open: every chart is counted again, the bars shown until the new ones arrive")
    func recountsOnChange() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        let (browser, overview) = try Self.counting(path: path, readOnly: false)
        func settle() {
            for _ in 0..<4_000 where overview.isCounting {
                browser.poll()
                usleep(1_000)
            }
        }
        settle()
        #expect(overview.charts[.months]?.total == 14)
        let other = try Store.open(path: path)
        _ = try other.upsert(
            ImportedConversation(
                source: "chatgpt", sourceID: "late", title: "Arrived", model: "gpt-4o", createdAt: Timestamp(milliseconds: 1_748_736_000_000),
                updatedAt: Timestamp(milliseconds: 1_748_736_000_000),
                messages: [ImportedMessage(role: .user, content: "Hi", createdAt: Timestamp(milliseconds: 1_748_736_000_000))]))  // 2025-06-01
        #expect(try browser.idle())
        // Counting again: the old bars stay meanwhile.
        #expect(overview.charts[.months]?.total == 14)
        settle()
        #expect(overview.charts[.months]?.total == 15 && overview.charts[.sources]?.bars.first?.value == 6)
        #expect(browser.screen == .overview)
    }
}
