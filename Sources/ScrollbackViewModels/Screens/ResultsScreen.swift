import Foundation
import ScrollbackModel
import TerminalText

/// Search results, over the list: two lines per hit. Its keys and their handling.
@MainActor
public final class ResultsScreen: BrowserScreenModel {
    public let search: SearchViewModel
    unowned let browser: BrowserViewModel

    init(_ search: SearchViewModel, browser: BrowserViewModel) {
        self.search = search
        self.browser = browser
    }

    public var kind: BrowserScreen { .results }

    public nonisolated static let title = "Search results"

    public nonisolated static let bindings: [KeyBinding] =
        KeyBindings.moving(on: .results, pages: KeyBindings.pages(on: .results))
        + [
            KeyBinding(.open, [.enter, .character("l"), .right], "Open the conversation", hint: "open", on: [.results], when: [.actsOnShown]),
            KeyBinding(.back, [.escape, .character("h"), .left], "Back", hint: "back", on: [.results]),
            KeyBinding(.quit, [.character("q")], "Back", on: [.results]),
            KeyBinding(.search, [.character("/")], "Search everything, as you type", hint: "search", on: [.results]),
            KeyBinding(.nextMatch, [.character("n")], "Next hit", hint: "next", on: [.results], when: [.actsOnShown], repeats: true),
            KeyBinding(.previousMatch, [.character("N")], "Previous hit", on: [.results], when: [.actsOnShown], repeats: true),
        ]

    public func perform(_ command: BrowserCommand) throws -> ScreenAnswer {
        switch command {
        case .down, .nextMatch: try search.move(by: 1)
        case .up, .previousMatch: try search.move(by: -1)
        case .pageDown, .halfPageDown: try search.move(by: max(search.viewportHits - 1, 1))
        case .pageUp, .halfPageUp: try search.move(by: -max(search.viewportHits - 1, 1))
        case .top: search.moveToStart()
        case .bottom: try search.move(by: SearchViewModel.maximumHits)
        case .open: try openHit()
        case .back, .quit: browser.remove(self)
        case .search: browser.openSearchPrompt()
        default: return .unhandled
        }
        return .handled
    }

    /// Two lines a hit: the wheel moves half as many hits as rows.
    public func wheel(by delta: Int) throws { try search.move(by: delta > 0 ? max(delta / 2, 1) : min(delta / 2, -1)) }

    public func click(line: Int, open: Bool) throws {
        guard let first = search.visibleHits.first?.index else { return }
        let index = first + line / 2
        guard search.hits.indices.contains(index) else { return }
        try search.move(by: index - search.selection)
        if open { try openHit() }
    }

    public func footer(width: Int) -> ScreenFooter {
        let count = search.hits.count
        var left =
            count == 0
            ? "no matches" : "\(NumberText.grouped(search.selection + 1)) of \(NumberText.grouped(count))\(search.isComplete ? "" : "+")"
        if let progress = browser.indexingProgress {
            // On a narrow screen the note comes first, so that it is never cut.
            let note = Self.indexingText(progress)
            left = DisplayWidth.of(" \(left) · \(note)") <= width ? left + " · " + note : note + " · " + left
        }
        return ScreenFooter(left: left, hints: [.open, .nextMatch, .back])
    }

    public func resize(width: Int, contentHeight: Int) { search.viewportHits = max(contentHeight / 2, 1) }

    /// `indexing 37%` (never 100% while it is not done).
    public static func indexingText(_ progress: Double) -> String {
        "indexing \(SearchViewModel.indexingPercent(progress))%"
    }

    /// Opens the reader on the hit's branch, the matched message in view.
    func openHit() throws {
        guard let hit = search.selected else { return }
        guard try browser.repositories.conversations.conversation(id: hit.conversation.id) != nil else {
            browser.status = "“\(DisplayWidth.truncated(UntrustedText.sanitized(hit.conversation.title), to: 40))” was deleted by another process"
            return
        }
        let reader = try ReaderScreen.makeReader(hit.conversation, highlights: search.terms, browser: browser)
        if let message = hit.message { try reader.open(message: message.id) } else { try reader.open(at: 0) }
        let screen = ReaderScreen(reader, browser: browser)
        // n and N then go through this conversation's matches, in order, from the hit.
        let positions = try screen.matchingPositions(of: search.query)
        try reader.setFind(query: search.query, positions: positions, keeping: hit.message != nil ? reader.focus : nil)
        browser.push(screen)
    }
}
