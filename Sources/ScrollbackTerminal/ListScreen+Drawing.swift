import Foundation
import ScrollbackModel
import ScrollbackViewModels
import TerminalText

/// Drawing the list screen: its header, rows and columns.
extension ListScreen: ScreenDrawing {
    func draw(_ browser: BrowserViewModel, on screen: any Screen) { BrowserRenderer.drawList(browser, on: screen) }
}

extension BrowserRenderer {
    static func drawList(_ browser: BrowserViewModel, on screen: any Screen) {
        let list = browser.list
        drawListHeader(browser, on: screen)
        guard list.total > 0 else {
            if list.filter.isEmpty {
                drawEmptyState(on: screen)
            } else {
                var rest = list.filter
                rest.title = nil
                let words = UntrustedText.sanitized(list.filter.title ?? "")
                let text =
                    list.filter.title == nil
                    ? "No conversation passes the filter: f changes it, Esc clears it"
                    : rest.isEmpty
                        ? "No title holds “\(words)”: \\ changes it, Esc clears it"
                        : "No title holds “\(words)” with \(UntrustedText.sanitized(rest.description)): \\ changes the words, f the filter"
                let note = DisplayWidth.truncated(text, to: screen.width - 2)
                screen.draw(note, row: 2, column: 1, style: TextStyle(bold: true))
            }
            return
        }
        let now = browser.now()
        let rows = list.visibleRows.prefix(max(screen.height - 2, 0))
        let terms = list.filter.title.map { SearchQuery($0).terms.map(\.text) } ?? []
        let layout = ListLayout(rows.map(\.conversation), order: list.order, width: screen.width, now: now, zone: browser.zone, terms: terms)
        for (offset, item) in rows.enumerated() {
            let line = layout.row(item.conversation, marked: list.marks.contains(item.conversation.id))
            var style = list.marks.contains(item.conversation.id) ? marked : .plain
            if item.index == list.selection {
                // The palette's selection role (reverse by default), bold when marked too.
                let marked = style.bold
                style = selection
                if marked { style.bold = true }
            }
            screen.draw(line, row: 1 + offset, column: 0, style: style)
            if let words = list.filter.title, screen.width > 3 {
                // Narrowed by title: what the words match is highlighted, as in search results.
                drawHighlighted(
                    layout.title(of: item.conversation), terms: [words], row: 1 + offset, column: 2, width: screen.width - 3, style: style,
                    on: screen)
            }
        }
    }

    /// `scrollback — PATH · by updated`, the path shortened first (from its start, keeping
    /// the file name) so that the order and the read-only label always show.
    static func drawListHeader(_ browser: BrowserViewModel, on screen: any Screen) {
        let filter = browser.list.filter.isEmpty ? "" : " · " + UntrustedText.sanitized(browser.list.filter.description)
        let order = " · by \(browser.list.order.rawValue)" + filter
        let right = readOnlyLabel(browser, width: screen.width)
        let rightWidth = right.isEmpty ? 0 : DisplayWidth.of(right) + 2
        let room = screen.width - rightWidth - DisplayWidth.of(" scrollback — " + order) - 1
        let path = shortenedPath(UntrustedText.sanitized(browser.databasePath), to: room)
        var left = (path.isEmpty ? "scrollback" : "scrollback — " + path) + order
        if DisplayWidth.of(" " + left) > screen.width - rightWidth {
            // Too narrow for the name: the order is what matters.
            left = "by \(browser.list.order.rawValue)" + filter
        }
        drawHeader(left, right: right, on: screen)
    }

    /// The path cut from the left (`…/scrollback/history.sqlite`) to fit `width` columns;
    /// empty when not even the ellipsis and a few characters of the name fit.
    static func shortenedPath(_ path: String, to width: Int) -> String {
        if DisplayWidth.of(path) <= width { return path }
        guard width >= 6 else { return "" }
        var kept: [Character] = []
        var used = 1
        for character in path.reversed() {
            let cells = DisplayWidth.of(character)
            if used + cells > width { break }
            kept.append(character)
            used += cells
        }
        return "…" + String(kept.reversed())
    }

    /// The list's columns for the rows on screen: each as wide as what those rows need
    /// (the model column up to a third of the screen), the title taking the rest.
    struct ListLayout {
        let order: ConversationOrder
        let width: Int
        let now: Timestamp
        let zone: LocalZone
        let modelWidth: Int
        let countWidth: Int
        let timeWidth: Int
        /// The words the list is narrowed by: a long title is cut around them, so that what
        /// matched shows.
        let terms: [String]

        init(_ conversations: [ConversationDTO], order: ConversationOrder, width: Int, now: Timestamp, zone: LocalZone, terms: [String] = []) {
            self.order = order
            self.terms = terms
            self.width = width
            self.now = now
            self.zone = zone
            let times = conversations.map { DisplayWidth.of(Self.time(of: $0, order: order, now: now, zone: zone)) }
            let counts = conversations.map { NumberText.grouped($0.seenCount).count }
            let models = conversations.map { DisplayWidth.of(Self.model(of: $0)) }
            let time = max(times.max() ?? 0, 3)
            let count = max(counts.max() ?? 0, 1)
            if width >= 80 {
                (modelWidth, countWidth, timeWidth) = (min(max(models.max() ?? 1, 1), max(width / 3, 16)), count, time)
            } else if width >= 46 {
                (modelWidth, countWidth, timeWidth) = (0, count, time)
            } else if width >= 32 {
                (modelWidth, countWidth, timeWidth) = (0, 0, time)
            } else {
                (modelWidth, countWidth, timeWidth) = (0, 0, 0)
            }
        }

        static func time(of conversation: ConversationDTO, order: ConversationOrder, now: Timestamp, zone: LocalZone) -> String {
            TimeText.relative(order == .created ? conversation.createdAt : conversation.updatedAt, now: now, zone: zone)
        }

        /// The model, or `–` when the export did not say.
        static func model(of conversation: ConversationDTO) -> String {
            conversation.model.flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : UntrustedText.sanitized($0) } ?? "–"
        }

        /// One row, exactly `width` cells: mark, title, then model, message count and time
        /// as the layout has room for.
        func row(_ conversation: ConversationDTO, marked: Bool) -> String {
            DisplayWidth.fitted((marked ? "*" : " ") + " " + title(of: conversation) + tail(of: conversation) + " ", to: width)
        }

        /// The title as the row shows it from its third cell: the pin, the title cut to fit.
        func title(of conversation: ConversationDTO) -> String {
            var title = UntrustedText.sanitized(conversation.title)
            if conversation.pinned { title = "⚑ " + title }
            let titleWidth = max(width - 2 - DisplayWidth.of(tail(of: conversation)) - 1, 1)
            guard !terms.isEmpty else { return DisplayWidth.fitted(title, to: titleWidth) }
            return DisplayWidth.fitted(BrowserRenderer.cut(title, around: terms, to: titleWidth), to: titleWidth)
        }

        private func tail(of conversation: ConversationDTO) -> String {
            var columns: [String] = []
            if modelWidth > 0 { columns.append(DisplayWidth.fitted(Self.model(of: conversation), to: modelWidth)) }
            if countWidth > 0 { columns.append(DisplayWidth.rightAligned(NumberText.grouped(conversation.seenCount), to: countWidth)) }
            if timeWidth > 0 { columns.append(DisplayWidth.rightAligned(Self.time(of: conversation, order: order, now: now, zone: zone), to: timeWidth)) }
            return columns.map { "  " + $0 }.joined()
        }
    }

    static func drawEmptyState(on screen: any Screen) {
        let lines = [
            "No conversations yet.", "",
            "Bring in your history: scrollback import PATH",
            "or try sample data:    scrollback --demo",
        ]
        let first = max(1, (screen.height - lines.count) / 2)
        for (offset, line) in lines.enumerated() where first + offset < screen.height - 1 {
            let text = DisplayWidth.truncated(line, to: screen.width - 2)
            let column = max(0, (screen.width - DisplayWidth.of(text)) / 2)
            screen.draw(text, row: first + offset, column: column, style: offset == 0 ? TextStyle(bold: true) : .plain)
        }
    }
}
