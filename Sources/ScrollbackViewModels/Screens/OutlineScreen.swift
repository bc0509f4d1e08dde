import Foundation
import ScrollbackModel
import TerminalText

/// The outline of the branches of the conversation read, over the reader: one line per
/// branch, to show one. Its keys and their handling.
@MainActor
public final class OutlineScreen: BrowserScreenModel {
    public internal(set) var outline: OutlineViewModel
    /// The reader under it, whose branch it shows.
    public let readerScreen: ReaderScreen
    unowned let browser: BrowserViewModel

    init(_ outline: OutlineViewModel, over readerScreen: ReaderScreen, browser: BrowserViewModel) {
        self.outline = outline
        self.readerScreen = readerScreen
        self.browser = browser
    }

    public var kind: BrowserScreen { .outline }

    public nonisolated static let title = "The outline of branches"

    public nonisolated static let bindings: [KeyBinding] =
        KeyBindings.moving(on: .outline, pages: KeyBindings.pages(on: .outline))
        + [
            KeyBinding(.open, [.enter], "Show the branch selected", hint: "show", on: [.outline]),
            KeyBinding(.back, [.escape, .character("h"), .left], "Back", hint: "back", on: [.outline]),
            KeyBinding(.quit, [.character("q")], "Back", on: [.outline]),
            KeyBinding(.outline, [.character("t")], "Back to the reader", on: [.outline]),
        ]

    public func perform(_ command: BrowserCommand) throws -> ScreenAnswer {
        let page = max(browser.contentHeight - 1, 1)
        switch command {
        case .down: outline.move(by: 1)
        case .up: outline.move(by: -1)
        case .pageDown, .halfPageDown: outline.move(by: page)
        case .pageUp, .halfPageUp: outline.move(by: -page)
        case .top: outline.move(by: -outline.entries.count)
        case .bottom: outline.move(by: outline.entries.count)
        case .open:
            let reader = readerScreen.reader
            if let entry = outline.selected, entry.leaf != reader.branch.leaf {
                let leaving = reader.focusedMessage.flatMap { focused in reader.branch.leaf.map { (focused.id, $0) } }
                try reader.showBranch(endingAt: entry.leaf, leaving: leaving)
                try reader.show(position: max(entry.place - 1, 0))
                browser.status =
                    "Branch \(NumberText.grouped(outline.selectedBranchNumber)) of \(NumberText.grouped(outline.branchCount))" + readerScreen.choiceNote()
            }
            browser.remove(self)
        case .back, .quit, .outline:
            browser.remove(self)
        default:
            return .unhandled
        }
        return .handled
    }

    public func wheel(by delta: Int) throws { outline.move(by: delta) }

    public func click(line: Int, open: Bool) throws {
        outline.move(by: outline.top + line - outline.selection)
        if open { _ = try perform(.open) }
    }

    public func footer(width: Int) -> ScreenFooter {
        ScreenFooter(
            left: "branch \(NumberText.grouped(outline.selectedBranchNumber)) of \(NumberText.grouped(outline.branchCount))", hints: [.open, .back])
    }

    public func resize(width: Int, contentHeight: Int) { outline.viewportHeight = contentHeight }
}
