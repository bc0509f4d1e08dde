import ScrollbackModel
import TerminalText

/// A one-line text editor: UTF-8 input, cursor keys, Home/End, Ctrl-A/Ctrl-E, Ctrl-W,
/// Ctrl-U, Backspace and Delete, and pastes.
///
/// The text it starts with is kept exactly as it was, control characters included, until
/// it is edited; it is shown with visible placeholders (`UntrustedText`). What is typed or
/// pasted never brings a control character in. Every edit costs time in proportion to the
/// text it moves, so a long paste is one linear insertion.
public struct LineEditor: Sendable, Equatable {
    public enum Outcome: Equatable, Sendable {
        case editing, submitted, cancelled
    }

    /// Typing and pasting stop at this many characters (a text that starts longer is kept
    /// whole, but cannot grow).
    public static let defaultLimit = 1_000

    public private(set) var characters: [Character]
    /// The cursor, between characters: 0...characters.count.
    public private(set) var cursor: Int
    /// True once a key changed the text.
    public private(set) var isEdited = false
    /// True when the last typed or pasted text did not all fit under `limit`.
    public private(set) var wasCut = false
    /// True while the whole text is selected (as the search prompt opens with the last
    /// query): typing or pasting replaces it, Backspace clears it, and a movement key
    /// keeps it for editing.
    public private(set) var isAllSelected = false
    /// How many characters the last typed or pasted text had that were left out (controls,
    /// bidi marks, invisible marks; for a title, what no title may hold).
    public private(set) var dropped = 0
    public let limit: Int
    /// A title's editor: it keeps to the title rule (`ConversationTitle`) as it is typed.
    public let isTitle: Bool

    public init(text: String = "", limit: Int = LineEditor.defaultLimit, selected: Bool = false, title: Bool = false) {
        characters = Array(text)
        cursor = characters.count
        self.limit = max(limit, 1)
        isAllSelected = selected && !characters.isEmpty
        isTitle = title
    }

    public var text: String { String(characters) }

    public mutating func apply(_ key: Key) -> Outcome {
        wasCut = false
        dropped = 0
        if isAllSelected {
            isAllSelected = false
            switch key {
            case .character, .paste, .backspace, .delete, .control("h"), .control("d"), .control("u"), .control("k"),
                .control("w"):
                // Replaces (or clears) the selected text.
                characters.removeAll()
                cursor = 0
                isEdited = true
                if case .character = key {} else if case .paste = key {} else { return .editing }
            default:
                break
            }
        }
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
                isEdited = true
            }
        case .delete, .control("d"):
            if cursor < characters.count {
                characters.remove(at: cursor)
                isEdited = true
            }
        case .control("u"):
            if cursor > 0 { isEdited = true }
            characters.removeFirst(cursor)
            cursor = 0
        case .control("k"):
            if cursor < characters.count { isEdited = true }
            characters.removeLast(characters.count - cursor)
        case .control("w"):
            let start = wordStart(before: cursor)
            if start < cursor { isEdited = true }
            characters.removeSubrange(start..<cursor)
            cursor = start
        case .alt("b"): cursor = wordStart(before: cursor)
        case .alt("f"):
            var end = cursor
            while end < characters.count && characters[end] == " " { end += 1 }
            while end < characters.count && characters[end] != " " { end += 1 }
            cursor = end
        case .character(let character):
            insert(String(character))
        case .paste(let text):
            insert(text)
        default:
            break
        }
        return .editing
    }

    /// Inserts text at the cursor: line breaks and tabs become spaces, other control
    /// characters are left out, and whatever would pass `limit` is cut (`wasCut`).
    private mutating func insert(_ text: String) {
        // A flag typed key by key (🏴, then its tag letters, one at a time): each joins the
        // flag before the cursor.
        if isTitle, text.unicodeScalars.count == 1, let tag = text.unicodeScalars.first, (0xE0020...0xE007F).contains(tag.value),
            cursor > 0, ConversationTitle.isPartialTagFlag(characters[cursor - 1])
        {
            let joined = String(characters[cursor - 1]) + text
            if joined.count == 1, let flag = joined.first {
                characters[cursor - 1] = flag
                isEdited = true
                return
            }
        }
        let room = max(limit - characters.count, 0)
        var inserted: [Character] = []
        var afterBreak = false
        // What no title may hold goes scalar by scalar (U+0600 joins the digit after it into
        // one character: the digit stays).
        var text = text
        if isTitle {
            let cleaned = ConversationTitle.withoutRefused(text)
            text = cleaned.text
            dropped += cleaned.removed
        }
        for character in text {
            // A run of line breaks (a pasted CRLF, a blank line) is one space.
            if character.isNewline {
                if afterBreak { continue }
                afterBreak = true
            } else {
                afterBreak = false
            }
            let kept: Character = character.isNewline || character == "\t" ? " " : character
            // (A subdivision flag is safe as it is: it stays.)
            guard UntrustedText.sanitized(String(kept)) == String(kept) else {
                dropped += 1
                continue
            }
            guard inserted.count < room else {
                wasCut = true
                break
            }
            inserted.append(kept)
        }
        guard !inserted.isEmpty else { return }
        characters.insert(contentsOf: inserted, at: cursor)
        cursor += inserted.count
        isEdited = true
    }

    private func wordStart(before index: Int) -> Int {
        var start = index
        while start > 0 && characters[start - 1] == " " { start -= 1 }
        while start > 0 && characters[start - 1] != " " { start -= 1 }
        return start
    }

    /// How a character of the text is shown: itself, or a visible placeholder.
    static func shown(_ character: Character) -> String {
        UntrustedText.sanitized(String(character))
    }

    /// What to show in `width` cells so that the cursor is visible: the text (safe for a
    /// terminal) and the cell column of the cursor within it. Costs time in proportion to
    /// `width`, not to the length of the text.
    public func visible(width: Int) -> (text: String, cursorColumn: Int) {
        guard width > 0 else { return ("", 0) }
        // From the cursor back, as far as fits with one cell left for the cursor itself.
        var start = cursor
        var cellsBeforeCursor = 0
        while start > 0 {
            let cells = DisplayWidth.of(Self.shown(characters[start - 1]))
            if cellsBeforeCursor + cells >= width { break }
            cellsBeforeCursor += cells
            start -= 1
        }
        var shown = ""
        var used = 0
        var index = start
        while index < characters.count {
            let piece = Self.shown(characters[index])
            let cells = DisplayWidth.of(piece)
            if used + cells > width { break }
            shown += piece
            used += cells
            index += 1
        }
        return (shown, cellsBeforeCursor)
    }
}
