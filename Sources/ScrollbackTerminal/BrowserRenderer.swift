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

    static func drawTooSmall(on screen: any Screen) {
        let note = ["Terminal too small", "need \(minimumWidth)×\(minimumHeight)"]
        for (row, line) in note.enumerated() where row < screen.height {
            screen.draw(DisplayWidth.truncated(line, to: screen.width, ellipsis: false), row: row, column: 0, style: .plain)
        }
    }

    // MARK: Header and footer

    static func drawHeader(_ left: String, right: String, on screen: any Screen) {
        let width = screen.width
        let rightPart = right.isEmpty ? "" : " " + right + " "
        // The right part (read-only) stays while the left keeps a few words of its own.
        let fits = DisplayWidth.of(rightPart) + min(DisplayWidth.of(" " + left), 11) <= width
        let rightWidth = fits ? DisplayWidth.of(rightPart) : 0
        let leftPart = DisplayWidth.fitted(" " + left, to: width - rightWidth)
        screen.draw(leftPart + (rightWidth > 0 ? rightPart : ""), row: 0, column: 0, style: header)
    }

    /// `[read-only]` (or `[read-only snapshot]`), said in short (`[ro]`) on a screen too
    /// narrow for it beside a few words of the header.
    static func readOnlyLabel(_ browser: BrowserViewModel, width: Int) -> String {
        guard browser.isReadOnly else { return "" }
        let label = browser.isSnapshot ? "[read-only snapshot]" : "[read-only]"
        return DisplayWidth.of(label) + 2 + 11 <= width ? label : "[ro]"
    }

    static func drawFooter(_ browser: BrowserViewModel, on screen: any Screen) {
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
            let count = reader?.branchCount ?? 0
            if count == 0, let hidden = reader?.conversation.hiddenCount, hidden > 0 {
                // Every message of it is hidden (a conversation of only context or tool traffic).
                left = "no message you saw · z shows the \(NumberText.grouped(hidden)) hidden"
            } else {
                left = "message \(NumberText.grouped(min(position, max(count, 1)))) of \(NumberText.grouped(count))"
            }
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
            left = "branch \(NumberText.grouped(outline?.selectedBranchNumber ?? 0)) of \(NumberText.grouped(outline?.branchCount ?? 0))"
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
        if let note = browser.syncNote, browser.mode == .list || browser.mode == .reader { left += " · " + note }
        if let note = browser.sourceNote, browser.mode == .list || browser.mode == .reader { left += " · " + note }
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

    static func drawPrompt(
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
            } else if row > 1 {
                // Too long beside the editor: on the line above it, cut to fit, never dropped.
                screen.draw(DisplayWidth.fitted(shown, to: width), row: row - 1, column: 0, style: TextStyle(bold: true, color: .yellow))
            }
        }
        switch prompt {
        case .confirmDelete:
            let question = browser.deleteQuestion(width: max(width - 1, 1)) ?? ""
            screen.draw(DisplayWidth.truncated(" " + question, to: width), row: row, column: 0, style: TextStyle(bold: true))
        case .rename(_, let editor), .search(let editor), .find(let editor), .pipe(let editor), .filter(let editor), .jump(let editor),
            .export(_, let editor), .narrow(let editor, _, _, _):
            let label: String
            switch prompt {
            case .rename: label = " Rename: "
            case .find: label = " Find: "
            case .pipe: label = " Pipe to: "
            case .filter: label = " Filter: "
            case .narrow: label = " Narrow: "
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
