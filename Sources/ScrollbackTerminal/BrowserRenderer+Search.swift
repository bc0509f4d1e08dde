import Foundation
import ScrollbackModel
import ScrollbackViewModels
import TerminalText

/// Drawing search results.
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
            let date = " " + TimeText.relative(hit.message?.createdAt ?? hit.conversation.createdAt, now: now) + " "
            let title =
                DisplayWidth.fitted(
                    "  " + UntrustedText.sanitized(hit.conversation.title) + "  · " + place, to: width - DisplayWidth.of(date))
                + date
            var titleStyle = TextStyle(bold: true)
            if item.index == search.selection { titleStyle.reverse = true }
            guard hit.message != nil else {
                // The title is what matched: its words are marked there.
                drawHighlighted(title, terms: search.terms, row: row, column: 0, width: width, style: titleStyle, on: screen)
                // The title above is what matched: no snippet repeating it.
                let count = hit.conversation.messageCount
                let note = "title match · \(NumberText.grouped(count)) message\(count == 1 ? "" : "s")"
                screen.draw(DisplayWidth.truncated(note, to: width - 4), row: row + 1, column: 4, style: hint)
                continue
            }
            screen.draw(title, row: row, column: 0, style: titleStyle)
            let snippet = DisplayWidth.truncated(UntrustedText.sanitized(hit.snippet), to: width - 4)
            drawHighlighted(snippet, terms: search.terms, row: row + 1, column: 4, width: width - 4, style: .plain, on: screen)
        }
    }
}
