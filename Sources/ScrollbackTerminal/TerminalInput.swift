import CNcursesw
import ScrollbackViewModels

/// Reads the terminal's input and turns it into whole keys: ncurses decodes the sequences
/// its terminal description knows; this adds bracketed paste, Alt+key (ESC and a key sent
/// together) and the cursor-key sequences that a description may lack (Home as `ESC[1~`
/// under TERM=xterm inside tmux), so that no sequence ever arrives as Esc and loose letters.
@MainActor
final class TerminalInput {
    enum Event: Equatable {
        case key(Key)
        case resize
        /// Something was read that means nothing here (a stray marker, a mouse event).
        case ignored
        /// A key scrollback has no name for (F5, Shift-Tab, Ctrl-]): it does nothing, and says so.
        case unknownKey
    }

    /// Key codes for the bracketed paste markers, which no terminal description lists.
    static let pasteStart = KEY_MAX + 1
    static let pasteEnd = KEY_MAX + 2
    /// A paste is kept up to this many characters; an editor cuts it shorter anyway.
    static let pasteLimit = 100_000

    private let window: UnsafeMutablePointer<WINDOW>?

    init() {
        window = scrollback_stdscr()
        define_key("\u{1B}[200~", Self.pasteStart)
        define_key("\u{1B}[201~", Self.pasteEnd)
    }

    /// The next event, waiting up to `milliseconds` for one; nil when none came.
    func next(waiting milliseconds: Int32) -> Event? {
        guard let (result, value) = read(waiting: milliseconds) else { return nil }
        return decode(result: result, value: value)
    }

    private func read(waiting milliseconds: Int32) -> (Int32, UInt32)? {
        wtimeout(window, milliseconds)
        var value: wint_t = 0
        let result = wget_wch(window, &value)
        guard result != ERR else { return nil }
        return (result, UInt32(value))
    }

    private func decode(result: Int32, value: UInt32) -> Event {
        if result == KEY_CODE_YES {
            guard let code = Int32(exactly: value) else { return .ignored }
            switch code {
            case KEY_RESIZE: return .resize
            case KEY_MOUSE:
                var event = MEVENT()
                guard getmouse(&event) == OK else { return .ignored }
                if scrollback_is_wheel_up(event.bstate) != 0 { return .key(.wheelUp) }
                if scrollback_is_wheel_down(event.bstate) != 0 { return .key(.wheelDown) }
                let (row, column) = (Int(event.y), Int(event.x))
                if scrollback_is_double_click(event.bstate) != 0 { return .key(.doubleClick(row: row, column: column)) }
                if scrollback_is_click(event.bstate) != 0 { return .key(.click(row: row, column: column)) }
                return .ignored
            case Self.pasteStart: return readPaste()
            case Self.pasteEnd: return .ignored
            default: return KeyDecoder.key(code: code).map(Event.key) ?? .unknownKey
            }
        }
        if value == 27 { return afterEscape() }
        return KeyDecoder.key(character: value).map(Event.key) ?? .unknownKey
    }

    /// ncurses hands over an ESC alone once its escape delay has passed or what followed
    /// matched no key it knows. Whatever is already there belongs to the same key.
    private func afterEscape() -> Event {
        guard let (result, value) = read(waiting: 0) else { return .key(.escape) }
        if result == KEY_CODE_YES {
            // ESC before a decoded key (Alt+arrow in some terminals): the key itself.
            return decode(result: result, value: value)
        }
        switch value {
        case 27:
            // Esc pressed twice: two keys.
            unget_wch(wchar_t(27))
            return .key(.escape)
        case 0x5B:  // [
            return readControlSequence()
        case 0x5F:  // _: an APC; `ESC _ G` is kitty's answer to the image query, come late
            guard let (_, next) = read(waiting: 0) else { return .key(.alt("_")) }
            guard next == 0x47 else {
                unget_wch(wchar_t(bitPattern: next))
                return .key(.alt("_"))
            }
            return skipStringSequence()
        case 0x4F:  // O
            guard let (_, final) = read(waiting: 0) else { return .key(.alt("O")) }
            return KeyDecoder.key(controlSequence: "", final: final).map(Event.key) ?? .unknownKey
        default:
            guard value >= 0x20, value != 0x7F, let scalar = Unicode.Scalar(value) else { return .ignored }
            return .key(.alt(Character(scalar)))
        }
    }

    /// The rest of `ESC [`: parameter and intermediate bytes, then one final byte. The
    /// whole sequence is one key or nothing.
    private func readControlSequence() -> Event {
        var parameters = ""
        while parameters.utf8.count < 32, let (result, value) = read(waiting: 0) {
            guard result != KEY_CODE_YES else { return .ignored }
            switch value {
            case 0x20...0x3F:
                guard let scalar = Unicode.Scalar(value) else { return .ignored }
                parameters.unicodeScalars.append(scalar)
            case 0x40...0x7E:
                if parameters == "200", value == 0x7E { return readPaste() }
                // A terminal's answer (device attributes `ESC [ ? 62 ; 4 c`, the cell size
                // `ESC [ 6 ; 20 ; 10 t`) that came after the start-up stopped waiting: no key.
                if parameters.hasPrefix("?") || parameters.hasPrefix(">") || (value == 0x74 && parameters.hasPrefix("6;")) { return .ignored }
                return KeyDecoder.key(controlSequence: parameters, final: value).map(Event.key) ?? .unknownKey
            default:
                return .ignored
            }
        }
        return .ignored
    }

    /// The rest of a string sequence, up to its `ESC \`: dropped.
    private func skipStringSequence() -> Event {
        var count = 0
        var afterEscape = false
        while count < 65_536, let (_, value) = read(waiting: 50) {
            count += 1
            if afterEscape && value == 0x5C { break }
            afterEscape = value == 27
        }
        return .ignored
    }

    /// Everything up to the end marker is text. Keys decoded inside it (a pasted escape
    /// sequence) are dropped; if the end marker never comes, the paste ends when input
    /// pauses.
    private func readPaste() -> Event {
        var text = ""
        var kept = 0
        while let (result, value) = read(waiting: 100) {
            if result == KEY_CODE_YES {
                if Int32(exactly: value) == Self.pasteEnd { break }
                continue
            }
            guard kept < Self.pasteLimit, let scalar = Unicode.Scalar(value) else { continue }
            text.unicodeScalars.append(scalar)
            kept += 1
        }
        return .key(.paste(text))
    }
}
