import Foundation
import ScrollbackModel
import ScrollbackViewModels
import TerminalText

/// A browser screen's drawing (each screen's in a file of its own, `ListScreen+Drawing.swift`).
@MainActor
protocol ScreenDrawing {
    /// Draws the header and the content (the footer is drawn for every screen alike).
    func draw(_ browser: BrowserViewModel, on screen: any Screen)
}

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
        // The screen shown, its footer, then what is drawn over it (the help).
        let shown = browser.shownScreen
        (shown as? any ScreenDrawing)?.draw(browser, on: screen)
        drawFooter(browser, on: screen)
        for overlay in browser.screens.drop(while: { $0 !== shown }).dropFirst() { (overlay as? any ScreenDrawing)?.draw(browser, on: screen) }
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
        let shown = browser.shownScreen
        let footer = shown.footer(width: width)
        var left = footer.left
        let hints = browser.keymap.hints(footer.hints, on: shown.kind)
        if browser.isReadOnly { left += " · read-only" }
        if let note = browser.syncNote, footer.showsBackgroundNotes { left += " · " + note }
        if let note = browser.sourceNote, footer.showsBackgroundNotes { left += " · " + note }
        if let query = browser.searching {
            left = "Searching “\(UntrustedText.sanitized(query))”… (Esc cancels)"
        }
        if let status = browser.status { left = status + (browser.isReadOnly && !status.contains("read-only") ? " · read-only" : "") }
        // A search's own line ("Searching…", "Nothing matches") still says the index is
        // being built: that is why it is slower.
        if let progress = browser.indexingProgress, browser.searching != nil || (browser.status != nil && shown.kind == .results) {
            left += " · " + ResultsScreen.indexingText(progress)
        }
        let leftWidth = DisplayWidth.of(left)
        if leftWidth + 2 + DisplayWidth.of(hints) <= width - 1 {
            screen.draw(DisplayWidth.fitted(" " + left, to: width - DisplayWidth.of(hints) - 1), row: row, column: 0, style: .plain)
            screen.draw(hints, row: row, column: width - DisplayWidth.of(hints) - 1, style: hint)
        } else {
            screen.draw(DisplayWidth.truncated(" " + left, to: width), row: row, column: 0, style: .plain)
        }
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
            .export(_, let editor), .narrow(let editor, _, _, _), .saveAttachment(_, let editor):
            let label: String
            switch prompt {
            case .rename: label = " Rename: "
            case .find: label = " Find: "
            case .pipe: label = " Pipe to: "
            case .filter: label = " Filter: "
            case .narrow: label = " Narrow: "
            case .jump: label = " Go to date: "
            case .export(let ids, _): label = ids.count == 1 ? " Export to: " : " Export \(NumberText.grouped(ids.count)) to: "
            case .saveAttachment: label = " Save to: "
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
