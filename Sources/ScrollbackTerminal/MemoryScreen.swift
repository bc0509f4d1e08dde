import TerminalText

/// A screen in memory, cell by cell, for layout tests: `text` is what a terminal would show.
@MainActor
public final class MemoryScreen: Screen {
    public private(set) var width: Int
    public private(set) var height: Int
    /// Each cell holds a cluster, or "" when it is the right half of a wide one.
    private var cells: [[String]]
    private var styles: [[TextStyle]]
    public private(set) var cursor: (row: Int, column: Int)?

    public init(width: Int, height: Int) {
        self.width = max(width, 0)
        self.height = max(height, 0)
        cells = Array(repeating: Array(repeating: " ", count: max(width, 0)), count: max(height, 0))
        styles = Array(repeating: Array(repeating: .plain, count: max(width, 0)), count: max(height, 0))
    }

    public func resize(width: Int, height: Int) {
        self.width = max(width, 0)
        self.height = max(height, 0)
        clear()
    }

    public func clear() {
        cells = Array(repeating: Array(repeating: " ", count: width), count: height)
        styles = Array(repeating: Array(repeating: .plain, count: width), count: height)
    }

    public func draw(_ text: String, row: Int, column: Int, style: TextStyle) {
        guard (0..<height).contains(row), column >= 0 else { return }
        // The row is taken out, changed and put back: element by element through the class's
        // nested arrays would pay an exclusivity check and a uniqueness check per cell.
        var line: [String] = []
        var lineStyles: [TextStyle] = []
        swap(&line, &cells[row])
        swap(&lineStyles, &styles[row])
        defer {
            swap(&line, &cells[row])
            swap(&lineStyles, &styles[row])
        }
        var column = column
        for character in text {
            let cells = DisplayWidth.of(character)
            if cells == 0 {
                // A zero-width cluster joins the previous cell, as on a terminal.
                if column > 0 && column <= width { line[column - 1] += String(character) }
                continue
            }
            guard column + cells <= width else { break }
            line[column] = String(character)
            lineStyles[column] = style
            for extra in 1..<max(cells, 1) {
                line[column + extra] = ""
                lineStyles[column + extra] = style
            }
            column += cells
        }
    }

    public func placeCursor(row: Int, column: Int) { cursor = (row, column) }
    public func hideCursor() { cursor = nil }

    /// The screen as lines of text, trailing spaces removed.
    public var lines: [String] {
        cells.map { row in
            var line = row.joined()
            while line.last == " " { line.removeLast() }
            return line
        }
    }

    public var text: String { lines.joined(separator: "\n") }

    /// The style at a cell.
    public func style(row: Int, column: Int) -> TextStyle { styles[row][column] }

    /// Rows whose cells are drawn reversed (the selection, the header).
    public func isReversed(row: Int) -> Bool {
        (0..<width).contains { styles[row][$0].reverse }
    }

    /// Rows with cells drawn dimmed (what the person did not see, shown with z).
    public func isDimmed(row: Int) -> Bool {
        (0..<width).contains { styles[row][$0].dim }
    }
}
