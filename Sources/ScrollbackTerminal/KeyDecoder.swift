import CNcursesw
import ScrollbackViewModels

/// Turns what `wget_wch` returned into a `Key`.
enum KeyDecoder {
    /// A character (not a key code).
    static func key(character value: UInt32) -> Key? {
        switch value {
        case 10, 13: return .enter
        case 27: return .escape
        case 9: return .tab
        case 8, 127: return .backspace
        case 1...26:
            guard let scalar = Unicode.Scalar(value + 96) else { return nil }
            return .control(Character(scalar))
        case 0..<32: return nil
        default:
            guard let scalar = Unicode.Scalar(value) else { return nil }
            return .character(Character(scalar))
        }
    }

    /// A key code (`KEY_UP`, …).
    static func key(code: Int32) -> Key? {
        switch code {
        case KEY_UP: return .up
        case KEY_DOWN: return .down
        case KEY_LEFT: return .left
        case KEY_RIGHT: return .right
        case KEY_NPAGE: return .pageDown
        case KEY_PPAGE: return .pageUp
        case KEY_HOME, KEY_BEG: return .home
        case KEY_END, KEY_LL: return .end
        case KEY_ENTER: return .enter
        case KEY_BACKSPACE: return .backspace
        case KEY_DC: return .delete
        default: return nil
        }
    }

    /// A control sequence that the terminal description did not know: `ESC [ parameters
    /// final` (or `ESC O final`, with no parameters). Cursor and editing keys in the forms
    /// xterm, rxvt, the Linux console and tmux send; modifiers are ignored.
    static func key(controlSequence parameters: String, final: UInt32) -> Key? {
        let first = parameters.split(separator: ";").first.map(String.init) ?? ""
        switch final {
        case 0x41: return .up  // A
        case 0x42: return .down  // B
        case 0x43: return .right  // C
        case 0x44: return .left  // D
        case 0x48: return .home  // H
        case 0x46: return .end  // F
        case 0x7E:  // ~
            switch first {
            case "1", "7": return .home
            case "4", "8": return .end
            case "3": return .delete
            case "5": return .pageUp
            case "6": return .pageDown
            default: return nil
            }
        default: return nil
        }
    }
}
