/// A key press, decoded from the terminal; what view models react to.
public enum Key: Hashable, Sendable {
    case character(Character)
    case control(Character)  // Ctrl-A is .control("a")
    /// Alt (Meta) with a character: the terminal sends ESC and the character together.
    case alt(Character)
    /// Text the terminal marked as pasted (bracketed paste): text for an editor, never keys.
    case paste(String)
    case up, down, left, right
    case pageUp, pageDown, home, end
    case enter, escape, backspace, delete, tab
    case wheelUp, wheelDown
    /// The first mouse button clicked, or double-clicked, at a cell of the screen.
    case click(row: Int, column: Int)
    case doubleClick(row: Int, column: Int)
}

extension Key: CustomStringConvertible {
    /// How help shows the key: `j`, `Ctrl-D`, `PgDn`.
    public var description: String {
        switch self {
        case .character(" "): "Space"
        case .character(let character): String(character)
        case .control(let character): "Ctrl-" + character.uppercased()
        case .alt(let character): "Alt-" + String(character)
        case .paste: "a paste"
        case .up: "↑"
        case .down: "↓"
        case .left: "←"
        case .right: "→"
        case .pageUp: "PgUp"
        case .pageDown: "PgDn"
        case .home: "Home"
        case .end: "End"
        case .enter: "Enter"
        case .escape: "Esc"
        case .backspace: "Backspace"
        case .delete: "Delete"
        case .tab: "Tab"
        case .wheelUp: "wheel up"
        case .wheelDown: "wheel down"
        case .click: "click"
        case .doubleClick: "double click"
        }
    }
}
