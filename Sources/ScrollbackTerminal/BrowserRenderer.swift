import Foundation
import ScrollbackModel
import ScrollbackViewModels
import TerminalText

/// Draws the browser's state on a screen: a header row, the content, a footer row. Pure
/// drawing: the same state and size always give the same screen.
@MainActor
public enum BrowserRenderer {
    public static let minimumWidth = BrowserViewModel.minimumWidth
    public static let minimumHeight = BrowserViewModel.minimumHeight

    /// The styles of the palette's roles: the standard ones, or the config file's.
    public static var palette = Palette.standard

    static var header: TextStyle { palette[.header] }
    static var selection: TextStyle { palette[.selection] }
    static var marked: TextStyle { palette[.marked] }
    static var highlight: TextStyle { palette[.highlight] }
    static var hint: TextStyle { palette[.hint] }

    public static func render(_ browser: BrowserViewModel, on screen: any Screen) {
        screen.clear()
        screen.hideCursor()
        let width = screen.width
        let height = screen.height
        guard width >= minimumWidth, height >= minimumHeight else {
            drawTooSmall(on: screen)
            return
        }
        switch browser.mode {
        case .list: drawList(browser, on: screen)
        case .reader: drawReader(browser, on: screen)
        case .searchResults: drawSearch(browser, on: screen)
        case .outline: drawOutline(browser, on: screen)
        }
        drawFooter(browser, on: screen)
        if browser.showingHelp { drawHelp(browser, on: screen) }
    }

    private static func drawTooSmall(on screen: any Screen) {
        let note = ["Terminal too small", "need \(minimumWidth)×\(minimumHeight)"]
        for (row, line) in note.enumerated() where row < screen.height {
            screen.draw(DisplayWidth.truncated(line, to: screen.width, ellipsis: false), row: row, column: 0, style: .plain)
        }
    }

    // MARK: Header and footer

    private static func drawHeader(_ left: String, right: String, on screen: any Screen) {
        let width = screen.width
        var rightPart = right.isEmpty ? "" : " " + right + " "
        // The right part (read-only) stays while the left keeps a few words of its own;
        // narrower, it is said in short.
        if !right.isEmpty && DisplayWidth.of(rightPart) + min(DisplayWidth.of(" " + left), 11) > width { rightPart = " [ro] " }
        let fits = DisplayWidth.of(rightPart) + min(DisplayWidth.of(" " + left), 11) <= width
        let rightWidth = fits ? DisplayWidth.of(rightPart) : 0
        let leftPart = DisplayWidth.fitted(" " + left, to: width - rightWidth)
        screen.draw(leftPart + (rightWidth > 0 ? rightPart : ""), row: 0, column: 0, style: header)
    }

    private static func readOnlyLabel(_ browser: BrowserViewModel) -> String {
        guard browser.isReadOnly else { return "" }
        return browser.isSnapshot ? "[read-only snapshot]" : "[read-only]"
    }

    private static func drawFooter(_ browser: BrowserViewModel, on screen: any Screen) {
        let row = screen.height - 1
        let width = screen.width
        if let prompt = browser.prompt {
            // While the typed search runs, the prompt says so (it stays open for more typing).
            drawPrompt(prompt, of: browser, note: browser.status ?? browser.searching.map { _ in "searching…" }, row: row, on: screen)
            return
        }
        var left: String
        let hints: String
        switch browser.mode {
        case .list:
            left = listPosition(browser.list)
            if !browser.list.marks.isEmpty { left += " · \(NumberText.grouped(browser.list.marks.count)) marked" }
            hints = browser.keymap.hints([.help, .search, .quit], on: .list)
        case .reader:
            let reader = browser.reader
            let position = (reader?.focus ?? 0) + 1
            left = "message \(NumberText.grouped(position)) of \(NumberText.grouped(reader?.branchCount ?? 0))"
            if let find = reader?.find {
                left += " · match \(NumberText.grouped(find.current + 1)) of \(NumberText.grouped(find.positions.count))"
            }
            let shown: [BrowserCommand] =
                reader?.find != nil ? [.nextMatch, .back]
                : reader?.focusedSiblings != nil ? [.previousVersion, .outline, .back]
                : [.search, .copyMessage, .back]
            hints = browser.keymap.hints(shown, on: .reader)
        case .outline:
            let outline = browser.outline
            left = "branch \(NumberText.grouped((outline?.selection ?? 0) + 1)) of \(NumberText.grouped(outline?.entries.count ?? 0))"
            hints = browser.keymap.hints([.open, .back], on: .outline)
        case .searchResults:
            let search = browser.search
            let count = search?.hits.count ?? 0
            left = count == 0 ? "no matches" : "\(NumberText.grouped((search?.selection ?? 0) + 1)) of \(NumberText.grouped(count))\(search?.isComplete == false ? "+" : "")"
            if let progress = browser.indexingProgress {
                // On a narrow screen the note comes first, so that it is never cut.
                let note = indexingText(progress)
                left = DisplayWidth.of(" \(left) · \(note)") <= width ? left + " · " + note : note + " · " + left
            }
            hints = browser.keymap.hints([.open, .nextMatch, .back], on: .results)
        }
        if browser.isReadOnly { left += " · read-only" }
        if let query = browser.searching {
            left = "Searching “\(UntrustedText.sanitized(query))”… (Esc cancels)"
        }
        if let status = browser.status { left = status + (browser.isReadOnly && !status.contains("read-only") ? " · read-only" : "") }
        // A search's own line ("Searching…", "Nothing matches") still says the index is
        // being built: that is why it is slower.
        if let progress = browser.indexingProgress, browser.searching != nil || (browser.status != nil && browser.mode == .searchResults) {
            left += " · " + indexingText(progress)
        }
        let leftWidth = DisplayWidth.of(left)
        if leftWidth + 2 + DisplayWidth.of(hints) <= width - 1 {
            screen.draw(DisplayWidth.fitted(" " + left, to: width - DisplayWidth.of(hints) - 1), row: row, column: 0, style: .plain)
            screen.draw(hints, row: row, column: width - DisplayWidth.of(hints) - 1, style: hint)
        } else {
            screen.draw(DisplayWidth.truncated(" " + left, to: width), row: row, column: 0, style: .plain)
        }
    }

    /// `123 of 1,000,000`; `~123 of 1,000,000` while the index is being counted, `~` before
    /// the total too while another process's change is being counted.
    static func listPosition(_ list: ConversationListViewModel) -> String {
        guard list.total > 0 else { return "0 conversations" }
        let index = (list.isIndexExact ? "" : "~") + NumberText.grouped(list.selection + 1)
        guard list.filter.isEmpty || list.isTotalExact else {
            // Filtered, not counted yet: what is loaded is a lower bound.
            return "\(index) of \(NumberText.grouped(list.total))+ (filtered)"
        }
        let total = (list.isTotalExact ? "" : "~") + NumberText.grouped(list.total)
        return "\(index) of \(total)\(list.filter.isEmpty ? "" : " (filtered)")"
    }

    /// `indexing 37%` (never 100% while it is not done).
    static func indexingText(_ progress: Double) -> String {
        "indexing \(SearchViewModel.indexingPercent(progress))%"
    }

    private static func drawPrompt(
        _ prompt: BrowserViewModel.Prompt, of browser: BrowserViewModel, note: String?, row: Int, on screen: any Screen
    ) {
        var width = screen.width
        // A note (the text was cut, a title cannot be empty) on the right, if it leaves
        // room for the editor.
        var isEditor = true
        if case .confirmDelete = prompt { isEditor = false }
        if let note, isEditor {
            let shown = " " + note + " "
            if DisplayWidth.of(shown) <= width / 2 {
                width -= DisplayWidth.of(shown)
                screen.draw(shown, row: row, column: width, style: TextStyle(bold: true, color: .yellow))
            }
        }
        switch prompt {
        case .confirmDelete:
            let question = browser.deleteQuestion(width: max(width - 1, 1)) ?? ""
            screen.draw(DisplayWidth.truncated(" " + question, to: width), row: row, column: 0, style: TextStyle(bold: true))
        case .rename(_, let editor), .search(let editor), .find(let editor), .pipe(let editor), .filter(let editor), .jump(let editor),
            .export(_, let editor):
            let label: String
            switch prompt {
            case .rename: label = " Rename: "
            case .find: label = " Find: "
            case .pipe: label = " Pipe to: "
            case .filter: label = " Filter: "
            case .jump: label = " Go to date: "
            case .export(let ids, _): label = ids.count == 1 ? " Export to: " : " Export \(NumberText.grouped(ids.count)) to: "
            default: label = " /"
            }
            let labelWidth = DisplayWidth.of(label)
            screen.draw(label, row: row, column: 0, style: TextStyle(bold: true))
            let available = max(width - labelWidth - 1, 1)
            let (text, cursorColumn) = editor.visible(width: available)
            // Selected text (the last query, which typing replaces) is shown reversed.
            screen.draw(text, row: row, column: labelWidth, style: editor.isAllSelected ? selection : .plain)
            screen.placeCursor(row: row, column: labelWidth + cursorColumn)
        }
    }

    // MARK: List

    private static func drawList(_ browser: BrowserViewModel, on screen: any Screen) {
        let list = browser.list
        drawListHeader(browser, on: screen)
        guard list.total > 0 else {
            if list.filter.isEmpty {
                drawEmptyState(on: screen)
            } else {
                let note = DisplayWidth.truncated("No conversation passes the filter: f changes it, Esc clears it", to: screen.width - 2)
                screen.draw(note, row: 2, column: 1, style: TextStyle(bold: true))
            }
            return
        }
        let now = browser.now()
        let rows = list.visibleRows.prefix(max(screen.height - 2, 0))
        let layout = ListLayout(rows.map(\.conversation), order: list.order, width: screen.width, now: now)
        for (offset, item) in rows.enumerated() {
            let line = layout.row(item.conversation, marked: list.marks.contains(item.conversation.id))
            var style = list.marks.contains(item.conversation.id) ? marked : .plain
            if item.index == list.selection { style.reverse = true }
            screen.draw(line, row: 1 + offset, column: 0, style: style)
        }
    }

    /// `scrollback — PATH · by updated`, the path shortened first (from its start, keeping
    /// the file name) so that the order and the read-only label always show.
    private static func drawListHeader(_ browser: BrowserViewModel, on screen: any Screen) {
        let filter = browser.list.filter.isEmpty ? "" : " · " + UntrustedText.sanitized(browser.list.filter.description)
        let order = " · by \(browser.list.order.rawValue)" + filter
        let right = readOnlyLabel(browser)
        let rightWidth = right.isEmpty ? 0 : min(DisplayWidth.of(right) + 2, screen.width < 30 ? 6 : .max)
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
        let modelWidth: Int
        let countWidth: Int
        let timeWidth: Int

        init(_ conversations: [ConversationDTO], order: ConversationOrder, width: Int, now: Timestamp) {
            self.order = order
            self.width = width
            self.now = now
            let times = conversations.map { DisplayWidth.of(Self.time(of: $0, order: order, now: now)) }
            let counts = conversations.map { NumberText.grouped($0.messageCount).count }
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

        static func time(of conversation: ConversationDTO, order: ConversationOrder, now: Timestamp) -> String {
            TimeText.relative(order == .created ? conversation.createdAt : conversation.updatedAt, now: now)
        }

        /// The model, or `–` when the export did not say.
        static func model(of conversation: ConversationDTO) -> String {
            conversation.model.flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : UntrustedText.sanitized($0) } ?? "–"
        }

        /// One row, exactly `width` cells: mark, title, then model, message count and time
        /// as the layout has room for.
        func row(_ conversation: ConversationDTO, marked: Bool) -> String {
            var title = UntrustedText.sanitized(conversation.title)
            if conversation.pinned { title = "⚑ " + title }
            var columns: [String] = []
            if modelWidth > 0 { columns.append(DisplayWidth.fitted(Self.model(of: conversation), to: modelWidth)) }
            if countWidth > 0 { columns.append(DisplayWidth.rightAligned(NumberText.grouped(conversation.messageCount), to: countWidth)) }
            if timeWidth > 0 { columns.append(DisplayWidth.rightAligned(Self.time(of: conversation, order: order, now: now), to: timeWidth)) }
            let tail = columns.map { "  " + $0 }.joined()
            let titleWidth = width - 2 - DisplayWidth.of(tail) - 1
            return DisplayWidth.fitted((marked ? "*" : " ") + " " + DisplayWidth.fitted(title, to: max(titleWidth, 1)) + tail + " ", to: width)
        }
    }

    private static func drawEmptyState(on screen: any Screen) {
        let lines = [
            "No conversations yet.", "",
            "Bring in your history: scrollback import PATH",
            "or make sample data:   scrollback demo",
        ]
        let first = max(1, (screen.height - lines.count) / 2)
        for (offset, line) in lines.enumerated() where first + offset < screen.height - 1 {
            let text = DisplayWidth.truncated(line, to: screen.width - 2)
            let column = max(0, (screen.width - DisplayWidth.of(text)) / 2)
            screen.draw(text, row: first + offset, column: column, style: offset == 0 ? TextStyle(bold: true) : .plain)
        }
    }

    // MARK: Reader

    private static func drawReader(_ browser: BrowserViewModel, on screen: any Screen) {
        guard let reader = browser.reader else { return }
        let conversation = reader.conversation
        drawHeader(UntrustedText.sanitized(conversation.title), right: readOnlyLabel(browser), on: screen)
        for (offset, line) in reader.visibleLines.enumerated() {
            let row = 1 + offset
            guard row < screen.height - 1 else { break }
            var style: TextStyle
            switch line.style {
            case .header(let role):
                style = roleStyle(role)
                // The focused message's header stands out (in reverse, so without colour too).
                if line.position == reader.focus { style.reverse = true }
            case .code: style = palette[.code]
            case .fence: style = palette[.fence]
            case .text, .blank: style = .plain
            }
            drawHighlighted(line.text, terms: reader.highlights, row: row, column: 0, width: screen.width, style: style, on: screen)
        }
    }

    // MARK: Outline

    /// One line per branch, indented by its branch points (two cells each, at most a third of
    /// the width), `#place role: first line` (no role below 40 columns); the branch shown is
    /// marked `●`.
    private static func drawOutline(_ browser: BrowserViewModel, on screen: any Screen) {
        guard let outline = browser.outline, let reader = browser.reader else { return }
        let count = outline.entries.count
        drawHeader(
            "\(NumberText.grouped(count)) branch\(count == 1 ? "" : "es") · " + UntrustedText.sanitized(reader.conversation.title),
            right: readOnlyLabel(browser), on: screen)
        let width = screen.width
        for (offset, entry) in outline.visibleEntries.enumerated() {
            let row = 1 + offset
            guard row < screen.height - 1 else { break }
            let indent = String(repeating: " ", count: min(entry.level * 2, width / 3))
            // Narrow: the text matters more than the role.
            let role = width >= 40 ? "\(entry.role.rawValue): " : ""
            let text = indent + (entry.isShown ? "● " : "  ") + "#\(entry.place) " + role + entry.firstLine
            var style = TextStyle(bold: entry.isShown)
            if outline.top + offset == outline.selection { style.reverse = true }
            screen.draw(DisplayWidth.fitted(text, to: width), row: row, column: 0, style: style)
        }
    }

    static func roleStyle(_ role: Role) -> TextStyle {
        switch role {
        case .user: palette[.user]
        case .assistant: palette[.assistant]
        case .system: palette[.system]
        case .tool: palette[.tool]
        }
    }

    // MARK: Search

    private static func drawSearch(_ browser: BrowserViewModel, on screen: any Screen) {
        guard let search = browser.search else { return }
        let more = search.isComplete ? "" : "+"
        drawHeader(
            "search “\(UntrustedText.sanitized(search.query))” · \(NumberText.grouped(search.hits.count))\(more) match\(search.hits.count == 1 && more.isEmpty ? "" : "es")",
            right: readOnlyLabel(browser), on: screen)
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

    // MARK: Help

    /// The keys of the screen the help was opened from, in a box; when they do not fit,
    /// they scroll (j k PgDn PgUp g G) and the box says where it is.
    private static func drawHelp(_ browser: BrowserViewModel, on screen: any Screen) {
        let lines = browser.keymap.helpLines(for: browser.screen, wheelStep: browser.wheelStep)
        let boxWidth = min(screen.width - 2, (lines.map { DisplayWidth.of($0) }.max() ?? 0) + 4)
        let boxHeight = min(screen.height - 2, lines.count + 2)
        guard boxWidth >= 6, boxHeight >= 3 else { return }
        let left = (screen.width - boxWidth) / 2
        let top = (screen.height - boxHeight) / 2
        let inner = boxWidth - 2
        let visible = boxHeight - 2
        let first = min(browser.helpTop, max(lines.count - visible, 0))
        let scrolls = lines.count > visible
        let name = " \(browser.screen.title): keys — \(scrolls ? "j k scroll, " : "")any other key closes "
        let title = DisplayWidth.truncated(name, to: inner, ellipsis: false)
        let topBorder = "┌" + title + String(repeating: "─", count: inner - DisplayWidth.of(title)) + "┐"
        screen.draw(topBorder, row: top, column: left, style: TextStyle(bold: true))
        for index in 0..<visible {
            let line = first + index
            let text = line < lines.count ? lines[line] : ""
            screen.draw("│" + DisplayWidth.fitted(" " + text, to: inner) + "│", row: top + 1 + index, column: left, style: .plain)
        }
        var bottom = String(repeating: "─", count: inner)
        if scrolls {
            let place = DisplayWidth.truncated(" \(first + 1)–\(first + visible) of \(lines.count) ", to: inner, ellipsis: false)
            bottom = String(repeating: "─", count: max(inner - DisplayWidth.of(place), 0)) + place
        }
        screen.draw("└" + bottom + "┘", row: top + boxHeight - 1, column: left, style: TextStyle(bold: true))
    }

    // MARK: Helpers

    /// Draws `text` with what the query of `terms` matches highlighted, by the search's own
    /// rules (`SearchQuery`: word starts, folded case and accents, phrases).
    static func drawHighlighted(
        _ text: String, terms: [String], row: Int, column: Int, width: Int, style: TextStyle, on screen: any Screen
    ) {
        let ranges = SearchQuery(terms.joined(separator: " ")).matchRanges(in: text)
        guard !ranges.isEmpty else {
            screen.draw(text, row: row, column: column, style: style)
            return
        }
        let characters = Array(text)
        var offset = 0
        var cell = column
        var highlighted = highlight
        highlighted.reverse = style.reverse
        for range in ranges {
            let before = String(characters[offset..<range.lowerBound])
            screen.draw(before, row: row, column: cell, style: style)
            cell += DisplayWidth.of(before)
            let match = String(characters[range])
            screen.draw(match, row: row, column: cell, style: highlighted)
            cell += DisplayWidth.of(match)
            offset = range.upperBound
        }
        screen.draw(String(characters[offset...]), row: row, column: cell, style: style)
    }
}
