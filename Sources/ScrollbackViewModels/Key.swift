import TerminalText

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

extension Key {
    /// Names of keys that are not one character, as the config file writes them.
    private static let named: [(String, Key)] = [
        ("Up", .up), ("Down", .down), ("Left", .left), ("Right", .right), ("PgUp", .pageUp), ("PgDn", .pageDown),
        ("Home", .home), ("End", .end), ("Enter", .enter), ("Esc", .escape), ("Backspace", .backspace),
        ("Delete", .delete), ("Tab", .tab), ("Space", .character(" ")),
    ]

    /// The key's name in the config file: `j`, `Ctrl-D`, `Alt-x`, `Up`, `PgDn`, `Space`; nil
    /// for what is not a key (a paste, the mouse).
    public var configName: String? {
        if let name = Self.named.first(where: { $0.1 == self })?.0 { return name }
        switch self {
        case .character(let character): return String(character)
        case .control(let character): return "Ctrl-" + character.uppercased()
        case .alt(let character): return "Alt-" + String(character)
        default: return nil
        }
    }

    /// A key from its config name (any case for the named keys and Ctrl-; `PageDown`,
    /// `Escape`, `Return` and the arrows `↑ ↓ ← →` too).
    public init?(configName text: String) {
        let aliases: [String: Key] = ["pagedown": .pageDown, "pageup": .pageUp, "escape": .escape, "return": .enter, "↑": .up, "↓": .down, "←": .left, "→": .right]
        if let key = Self.named.first(where: { $0.0.lowercased() == text.lowercased() })?.1 ?? aliases[text.lowercased()] {
            self = key
            return
        }
        let lower = text.lowercased()
        if lower.hasPrefix("ctrl-"), text.count == 6, let letter = text.last, letter.isASCII, letter.isLetter {
            self = .control(Character(letter.lowercased()))
            return
        }
        if lower.hasPrefix("alt-"), text.count == 5, let character = text.last, !character.isWhitespace,
            character.unicodeScalars.allSatisfy({ $0.value >= 0x21 && $0.value < 0x7F })
        {
            self = .alt(character)
            return
        }
        // One printable character: one that shows as itself (no control, format, bidi or
        // zero-width character, no lone combining mark).
        guard text.count == 1, let character = text.first, !character.isWhitespace,
            UntrustedText.sanitized(String(character)) == String(character),
            !character.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || ($0.value >= 0x80 && $0.value < 0xA0) }),
            character.unicodeScalars.first.map({ $0.properties.generalCategory != .nonspacingMark && $0.properties.generalCategory != .format }) ?? false
        else { return nil }
        self = .character(character)
    }
}
