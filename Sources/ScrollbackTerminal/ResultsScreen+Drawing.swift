import Foundation
import ScrollbackModel
import ScrollbackViewModels
import TerminalText

/// Drawing search results.
extension ResultsScreen: ScreenDrawing {
    func draw(_ browser: BrowserViewModel, on screen: any Screen) { BrowserRenderer.drawSearch(browser, on: screen) }
}

extension BrowserRenderer {
    static func drawSearch(_ browser: BrowserViewModel, on screen: any Screen) {
        guard let search = browser.search else { return }
        let more = search.isComplete ? "" : "+"
        drawHeader(
            "search “\(UntrustedText.sanitized(search.query))” · \(NumberText.grouped(search.hits.count))\(more) match\(search.hits.count == 1 && more.isEmpty ? "" : "es")",
            right: readOnlyLabel(browser, width: screen.width), on: screen)
        let width = screen.width
        let now = browser.now()
        for (offset, item) in search.visibleHits.enumerated() {
            let row = 1 + offset * 2
            guard row + 1 < screen.height - 1 else { break }
            let hit = item.hit
            let place = hit.message.map { "#\($0.position + 1) \($0.role.rawValue)" } ?? "title"
            let date = " " + TimeText.relative(hit.message?.createdAt ?? hit.conversation.createdAt, now: now, zone: browser.zone) + " "
            // The label and the date keep their place; a long title gives way, and where the
            // title is what matched, it is cut around the match, which stays in view.
            let label = " · " + place
            let room = max(width - 2 - DisplayWidth.of(label) - DisplayWidth.of(date), 1)
            let shownTitle = UntrustedText.sanitized(hit.conversation.title)
            let cut = hit.message == nil ? Self.cut(shownTitle, around: search.terms, to: room) : DisplayWidth.truncated(shownTitle, to: room)
            let title = DisplayWidth.fitted("  " + cut + label, to: width - DisplayWidth.of(date)) + date
            var titleStyle = TextStyle(bold: true)
            if item.index == search.selection { titleStyle.reverse = true }
            guard hit.message != nil else {
                // The title is what matched: its words are marked there.
                drawHighlighted(title, terms: search.terms, row: row, column: 0, width: width, style: titleStyle, on: screen)
                // The title above is what matched: no snippet repeating it.
                let count = hit.conversation.seenCount
                let note = "title match · \(NumberText.grouped(count)) message\(count == 1 ? "" : "s")"
                screen.draw(DisplayWidth.truncated(note, to: width - 4), row: row + 1, column: 4, style: hint)
                continue
            }
            screen.draw(title, row: row, column: 0, style: titleStyle)
            let snippet = DisplayWidth.truncated(UntrustedText.sanitized(hit.snippet), to: width - 4)
            drawHighlighted(snippet, terms: search.terms, row: row + 1, column: 4, width: width - 4, style: .plain, on: screen)
        }
    }

    /// `text` in at most `width` cells, with the first of `terms` it holds in view: cut at
    /// the end when the match fits there, else from the start too ("…words around it…").
    nonisolated static func cut(_ text: String, around terms: [String], to width: Int) -> String {
        guard DisplayWidth.of(text) > width else { return text }
        guard let match = terms.lazy.compactMap({ $0.isEmpty ? nil : text.range(of: $0, options: [.caseInsensitive, .diacriticInsensitive]) }).first,
            DisplayWidth.of(text[..<match.upperBound]) > width - 1
        else { return DisplayWidth.truncated(text, to: width) }
        // Start far enough in that the match and a word or so before it fit after "…".
        var start = text.startIndex
        while start < match.lowerBound, DisplayWidth.of(text[start..<match.upperBound]) + 1 > width - 1 - min(8, width / 4) {
            start = text.index(after: start)
        }
        return DisplayWidth.truncated("…" + text[start...], to: width)
    }
}
