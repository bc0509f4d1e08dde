import TerminalText

/// A one-line text editor: UTF-8 input, cursor keys, Home/End, Ctrl-A/Ctrl-E, Ctrl-W,
/// Ctrl-U, Backspace and Delete.
public struct LineEditor: Sendable, Equatable {
    public enum Outcome: Equatable, Sendable {
        case editing, submitted, cancelled
    }

    public private(set) var characters: [Character]
    /// The cursor, between characters: 0...characters.count.
    public private(set) var cursor: Int

    public init(text: String = "") {
        characters = Array(text)
        cursor = characters.count
    }

    public var text: String { String(characters) }

    public mutating func apply(_ key: Key) -> Outcome {
        switch key {
        case .enter: return .submitted
        case .escape, .control("c"), .control("g"): return .cancelled
        case .left: cursor = max(0, cursor - 1)
        case .right: cursor = min(characters.count, cursor + 1)
        case .home, .control("a"): cursor = 0
        case .end, .control("e"): cursor = characters.count
        case .backspace, .control("h"):
            if cursor > 0 {
                characters.remove(at: cursor - 1)
                cursor -= 1
            }
        case .delete, .control("d"):
            if cursor < characters.count { characters.remove(at: cursor) }
        case .control("u"):
            characters.removeFirst(cursor)
            cursor = 0
        case .control("k"):
            characters.removeLast(characters.count - cursor)
        case .control("w"):
            var start = cursor
            while start > 0 && characters[start - 1] == " " { start -= 1 }
            while start > 0 && characters[start - 1] != " " { start -= 1 }
            characters.removeSubrange(start..<cursor)
            cursor = start
        case .character(let character):
            // Controls never enter the text; a pasted line break becomes a space.
            let inserted: Character = character.isNewline ? " " : character
            guard UntrustedText.sanitized(String(inserted)) == String(inserted) else { return .editing }
            characters.insert(inserted, at: cursor)
            cursor += 1
        default:
            break
        }
        return .editing
    }

    /// What to show in `width` cells so that the cursor is visible: the text and the cell
    /// column of the cursor within it.
    public func visible(width: Int) -> (text: String, cursorColumn: Int) {
        guard width > 0 else { return ("", 0) }
        var start = 0
        var cellsBeforeCursor = DisplayWidth.of(String(characters[0..<cursor]))
        // Scroll right until the cursor (and one cell for it) fits.
        while cellsBeforeCursor >= width && start < cursor {
            cellsBeforeCursor -= DisplayWidth.of(characters[start])
            start += 1
        }
        let shown = DisplayWidth.truncated(String(characters[start...]), to: width, ellipsis: false)
        return (shown, cellsBeforeCursor)
    }
}
