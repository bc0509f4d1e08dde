import ScrollbackModel

/// One screen of the browser (the list, the reader, search results, the outline, the help
/// over them): its state, its bindings, how it takes its commands, the wheel and clicks, and
/// what its footer says. The browser keeps a stack of them; the one on top takes the keys,
/// and what it does not handle falls through to the browser's shared handler. Its drawing is
/// in the terminal target, one file per screen.
@MainActor
public protocol BrowserScreenModel: AnyObject {
    /// Which screen this is: the keymap its keys go by, and its help.
    var kind: BrowserScreen { get }
    /// How the man page and help name it.
    nonisolated static var title: String { get }
    /// Its own bindings, in the order help lists them.
    nonisolated static var bindings: [KeyBinding] { get }
    /// What its help says after the keys and the mouse.
    nonisolated static var helpNotes: [String] { get }
    /// True for what is drawn over the screen below it (the help): the screen below is
    /// drawn, with its footer, then this.
    var isOverlay: Bool { get }
    /// Does `command`; `.unhandled` for what the shared handler does (help, suspend).
    func perform(_ command: BrowserCommand) throws -> ScreenAnswer
    /// `command` `times` times at once (`5j` moves five rows in one step), for a command
    /// whose binding repeats; false to have it done `times` times one by one.
    func perform(_ command: BrowserCommand, times: Int) throws -> Bool
    /// The wheel: `delta` rows down (up when negative).
    func wheel(by delta: Int) throws
    /// A click on line `line` of the content (0 is the row under the header); `open` for a
    /// double click.
    func click(line: Int, open: Bool) throws
    /// The footer's left part and the commands whose hints it shows, on `width` columns.
    func footer(width: Int) -> ScreenFooter
    /// The rows between the header and the footer, and the columns, changed.
    func resize(width: Int, contentHeight: Int)
    /// Takes in what its background work finished; true when the screen changed.
    func poll() -> Bool
    /// It left the stack: what it still has running stops.
    func leave()
    /// Another process changed the data (the list reloads; a screen showing counts counts again).
    func dataChanged() throws
}

extension BrowserScreenModel {
    public var isOverlay: Bool { false }
    public func perform(_ command: BrowserCommand, times: Int) throws -> Bool { false }
    public func wheel(by delta: Int) throws {}
    public func click(line: Int, open: Bool) throws {}
    public func poll() -> Bool { false }
    public func leave() {}
    public func dataChanged() throws {}
    public nonisolated static var helpNotes: [String] { [] }
}

/// What a screen did with a command.
public enum ScreenAnswer: Equatable, Sendable {
    case handled
    /// Not this screen's: the browser's shared handler takes it.
    case unhandled
    /// The browser should quit.
    case quit
}

/// What a screen's footer says: the left part, and the commands whose hints go on the right.
public struct ScreenFooter: Equatable, Sendable {
    public var left: String
    public var hints: [BrowserCommand]
    /// Whether the notes of background work (sync, followed sessions) follow the left part.
    public var showsBackgroundNotes: Bool

    public init(left: String, hints: [BrowserCommand], showsBackgroundNotes: Bool = false) {
        self.left = left
        self.hints = hints
        self.showsBackgroundNotes = showsBackgroundNotes
    }
}

/// Why a binding cannot act now, from conditions the screens share (lazygit's disabled
/// reasons): said in the footer instead of acting.
public enum BindingCondition: Hashable, Sendable {
    /// It writes to the database, which `--readonly` does not (`verb` says what it would do).
    case writes(verb: String)
    /// It acts on what is on screen, which a search on its way is about to replace (a query
    /// pasted with a line break and a `d` after it deleted the list's selection).
    case actsOnShown
}

extension BrowserViewModel {
    /// Why `binding` cannot act now, when it cannot.
    public func disabledReason(_ binding: KeyBinding) -> String? {
        for condition in binding.conditions {
            switch condition {
            case .writes(let verb) where isReadOnly:
                return "read-only: cannot \(verb)"
            case .actsOnShown where pendingSearch != nil && prompt == nil:
                return "Searching… the results come first (Esc cancels)"
            default:
                continue
            }
        }
        return nil
    }
}
