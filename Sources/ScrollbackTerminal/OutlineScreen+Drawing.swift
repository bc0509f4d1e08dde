import Foundation
import ScrollbackModel
import ScrollbackViewModels
import TerminalText

/// Drawing the outline of branches.
extension OutlineScreen: ScreenDrawing {
    func draw(_ browser: BrowserViewModel, on screen: any Screen) { BrowserRenderer.drawOutline(browser, on: screen) }
}

extension BrowserRenderer {
    /// One line per branch, indented by its branch points (two cells each, at most a third of
    /// the width), `#place role: first line` (no role below 40 columns); the branch shown is
    /// marked `●`.
    static func drawOutline(_ browser: BrowserViewModel, on screen: any Screen) {
        guard let outline = browser.outline, let reader = browser.reader else { return }
        let count = outline.branchCount
        drawHeader(
            "\(NumberText.grouped(count)) branch\(count == 1 ? "" : "es") · " + UntrustedText.sanitized(reader.conversation.title),
            right: readOnlyLabel(browser, width: screen.width), on: screen)
        let width = screen.width
        for (offset, entry) in outline.visibleEntries.enumerated() {
            let row = 1 + offset
            guard row < screen.height - 1 else { break }
            let indent = String(repeating: " ", count: min(entry.level * 2, width / 3))
            // Narrow: the text matters more than the role.
            let role = width >= 40 ? "\(entry.role.rawValue): " : ""
            // Messages several branches share: their places, `#1–3`, above the branches.
            let place = entry.sharedThrough.map { $0 > entry.place ? "#\(entry.place)–\($0)" : "#\(entry.place)" } ?? "#\(entry.place)"
            let text = indent + (entry.isShown ? "● " : "  ") + place + " " + role + entry.firstLine
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
}
