import CNcursesw
import TerminalText

/// The real terminal, through ncursesw.
@MainActor
final class CursesScreen: Screen {
    private let useColor: Bool
    private var cursor: (row: Int, column: Int)?

    init(useColor: Bool) {
        self.useColor = useColor
        if useColor {
            start_color()
            use_default_colors()
            let colors: [(TextStyle.Color, Int16)] = [
                (.red, Int16(COLOR_RED)), (.green, Int16(COLOR_GREEN)), (.yellow, Int16(COLOR_YELLOW)),
                (.blue, Int16(COLOR_BLUE)), (.magenta, Int16(COLOR_MAGENTA)), (.cyan, Int16(COLOR_CYAN)),
            ]
            for (color, code) in colors {
                init_pair(Int16(color.rawValue), code, -1)
            }
        }
    }

    var width: Int { Int(scrollback_cols()) }
    var height: Int { Int(scrollback_lines()) }

    func clear() { werase(scrollback_stdscr()) }

    func draw(_ text: String, row: Int, column: Int, style: TextStyle) {
        guard row >= 0, row < height, column >= 0, column < width else { return }
        // Cut to what fits, by cells, so nothing wraps onto the next row.
        let fitted = DisplayWidth.truncated(text, to: width - column, ellipsis: false)
        guard !fitted.isEmpty else { return }
        var characters = fitted.unicodeScalars.map { wchar_t(bitPattern: $0.value) }
        characters.append(0)
        var attributes: attr_t = 0
        if style.bold { attributes |= scrollback_a_bold() }
        if style.reverse { attributes |= scrollback_a_reverse() }
        if style.dim { attributes |= scrollback_a_dim() }
        if style.underline { attributes |= scrollback_a_underline() }
        let pair: Int16 = useColor ? Int16(style.color?.rawValue ?? 0) : 0
        _ = scrollback_draw(
            Int32(row), Int32(column), characters, Int32(characters.count - 1), Int32(DisplayWidth.of(fitted)), attributes, pair)
    }

    func placeCursor(row: Int, column: Int) { cursor = (row, column) }
    func hideCursor() { cursor = nil }

    /// Sends the frame to the terminal.
    func present() {
        if let cursor, cursor.row < height, cursor.column < width {
            wmove(scrollback_stdscr(), Int32(cursor.row), Int32(cursor.column))
            curs_set(1)
        } else {
            curs_set(0)
        }
        wrefresh(scrollback_stdscr())
    }
}
