import ScrollbackModel

/// The help, over the screen it was opened from: that screen's keys, in a box. The moving
/// keys scroll it; any other key closes it.
@MainActor
public final class HelpScreen: BrowserScreenModel {
    /// The screen whose keys it lists.
    public let kind: BrowserScreen
    /// The first line shown (it scrolls when it does not fit).
    public private(set) var top = 0
    unowned let browser: BrowserViewModel

    init(keysOf kind: BrowserScreen, browser: BrowserViewModel) {
        self.kind = kind
        self.browser = browser
    }

    public var isOverlay: Bool { true }

    // The help is not a screen of its own keymap: it lists the one under it.
    public nonisolated static let title = "Help"
    public nonisolated static let bindings: [KeyBinding] = []

    /// The lines it lists, by the keys in use.
    public var lines: [String] { browser.keymap.helpLines(for: kind, wheelStep: browser.wheelStep) }

    /// A key: the moving ones scroll, the wheel too; any other closes the help.
    func take(_ key: Key) {
        let page = max(browser.contentHeight - 4, 1)
        let last = max(lines.count - page, 0)
        switch key == .wheelDown ? .down : key == .wheelUp ? .up : browser.keymap.command(for: key, on: kind) {
        case .down: top = min(top + (key == .wheelDown ? browser.wheelStep : 1), last)
        case .up: top = max(top - (key == .wheelUp ? browser.wheelStep : 1), 0)
        case .pageDown, .halfPageDown, .open: top = min(top + page, last)
        case .pageUp, .halfPageUp: top = max(top - page, 0)
        case .top: top = 0
        case .bottom: top = last
        default:
            browser.remove(self)
            if case .paste = key { browser.status = BrowserViewModel.pasteIgnored }
        }
    }

    /// Keys reach it whole (`take`), not as commands.
    public func perform(_ command: BrowserCommand) throws -> ScreenAnswer { .unhandled }

    public func footer(width: Int) -> ScreenFooter { browser.shownScreen.footer(width: width) }

    public func resize(width: Int, contentHeight: Int) {}
}
