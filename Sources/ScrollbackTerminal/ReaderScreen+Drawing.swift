import Foundation
import ScrollbackModel
import ScrollbackViewModels
import TerminalText

/// Drawing the reader screen.
extension ReaderScreen: ScreenDrawing {
    func draw(_ browser: BrowserViewModel, on screen: any Screen) { BrowserRenderer.drawReader(browser, on: screen) }
}

extension BrowserRenderer {
    static func drawReader(_ browser: BrowserViewModel, on screen: any Screen) {
        guard let reader = browser.reader else { return }
        let conversation = reader.conversation
        // A coding agent's session says where it ran: the folder's last part and the branch.
        var title = UntrustedText.sanitized(conversation.title)
        if let project = conversation.project {
            let folder = project.split(separator: "/").last.map(String.init) ?? project
            title += " · " + UntrustedText.sanitized(folder) + (conversation.gitBranch.map { " (" + UntrustedText.sanitized($0) + ")" } ?? "")
        }
        drawHeader(title, right: readOnlyLabel(browser, width: screen.width), on: screen)
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
            case .summary: style = palette[.fence]
            case .attachment: style = palette[.attachment]
            case .image: style = .plain
            }
            // What the person did not see, shown with z: dimmed (and marked in its header).
            if line.dimmed { style.dim = true }
            drawHighlighted(line.text, terms: reader.highlights, row: row, column: 0, width: screen.width, style: style, on: screen)
        }
    }
}
