import Foundation
import ScrollbackModel
import ScrollbackViewModels
import TerminalText

/// Drawing the help overlay: the keys of the screen it was opened from.
extension HelpScreen: ScreenDrawing {
    func draw(_ browser: BrowserViewModel, on screen: any Screen) { BrowserRenderer.drawHelp(browser, on: screen) }
}

extension BrowserRenderer {
    /// The keys of the screen the help was opened from, in a box; when they do not fit,
    /// they scroll (j k PgDn PgUp g G) and the box says where it is.
    static func drawHelp(_ browser: BrowserViewModel, on screen: any Screen) {
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
        // The keys that scroll it, as the keymap in use has them.
        let down = browser.keymap.keymap(for: browser.screen).first { $0.command == .down }?.keys.first?.description ?? "↓"
        let up = browser.keymap.keymap(for: browser.screen).first { $0.command == .up }?.keys.first?.description ?? "↑"
        let name = " \(browser.screen.title): keys — \(scrolls ? "\(down) \(up) scroll, " : "")any other key closes "
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
}
