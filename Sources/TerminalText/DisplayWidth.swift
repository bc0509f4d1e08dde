/// How many terminal cells text takes, per grapheme cluster.
///
/// A cluster's width is the sum of its scalars' widths, as the terminal library and the
/// terminal count them (wcwidth): East Asian wide and fullwidth characters and emoji shown
/// as emoji take 2, combining marks and format characters 0, everything else 1. Layout that
/// agrees with the library never spills a row; cutting only between clusters never splits
/// a character from its marks.
public enum DisplayWidth {
    public static func of(_ scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        if value < 0x7F { return value < 0x20 ? 0 : 1 }
        if value < 0xA0 { return 0 }
        if value < 0x300 { return 1 }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format:
            return 0
        default:
            break
        }
        if (0x1160...0x11FF).contains(value) || (0xD7B0...0xD7FF).contains(value) { return 0 }
        if (0x1F1E6...0x1F1FF).contains(value) { return 1 }  // regional indicators: neutral width
        if scalar.properties.isEmojiPresentation { return 2 }
        return isWide(value) ? 2 : 1
    }

    public static func of(_ character: Character) -> Int {
        // Most text is printable ASCII: one cell, no Unicode property look-ups.
        if let ascii = character.asciiValue { return ascii >= 0x20 && ascii < 0x7F ? 1 : 0 }
        var width = 0
        for scalar in character.unicodeScalars { width += of(scalar) }
        return width
    }

    public static func of<S: StringProtocol>(_ text: S) -> Int {
        var width = 0
        var ascii = true
        for byte in text.utf8 {
            guard byte >= 0x20 && byte < 0x7F else {
                ascii = false
                break
            }
            width += 1
        }
        if ascii { return width }
        width = 0
        for scalar in text.unicodeScalars { width += of(scalar) }
        return width
    }

    /// The longest prefix of whole clusters that fits in `width` cells; with `ellipsis`, a
    /// cut line ends in `…` (which takes one of the cells).
    public static func truncated(_ text: String, to width: Int, ellipsis: Bool = true) -> String {
        guard width > 0 else { return "" }
        if of(text) <= width { return text }
        let budget = ellipsis ? width - 1 : width
        var result = ""
        var used = 0
        for character in text {
            let cells = of(character)
            if used + cells > budget { break }
            result.append(character)
            used += cells
        }
        return ellipsis ? result + "…" : result
    }

    /// `truncated` then padded with spaces to exactly `width` cells.
    public static func fitted(_ text: String, to width: Int, ellipsis: Bool = true) -> String {
        let cut = truncated(text, to: width, ellipsis: ellipsis)
        let used = of(cut)
        return used < width ? cut + String(repeating: " ", count: width - used) : cut
    }

    /// Text right-aligned in `width` cells.
    public static func rightAligned(_ text: String, to width: Int) -> String {
        let cut = truncated(text, to: width, ellipsis: false)
        let used = of(cut)
        return used < width ? String(repeating: " ", count: width - used) + cut : cut
    }

    /// Lines of at most `width` cells: broken at spaces where possible, inside a word only
    /// when it is longer than a line, never inside a cluster (a cluster wider than a whole
    /// line shows as `…`). Newlines start new lines; an empty line stays an empty line.
    public static func wrapped(_ text: String, width: Int) -> [String] {
        let width = max(width, 1)
        var lines: [String] = []
        for paragraph in Self.lines(of: text) {
            // Most text is printable ASCII: one cell a byte, wrapped on its bytes (an 8 MB
            // answer took seconds to open otherwise).
            lines += asciiWrapped(paragraph, width: width) ?? clusterWrapped(paragraph, width: width)
        }
        return lines
    }

    /// The lines of `text`, split at each line feed (an empty line stays one; a CR LF ends a
    /// line too, its CR left on it), on its bytes:
    /// a line feed is always a cluster of its own, and splitting by clusters is slow on
    /// megabytes.
    public static func lines(of text: String) -> [Substring] {
        text.utf8.split(separator: 0x0A, omittingEmptySubsequences: false).map { Substring($0) }
    }

    /// `wrapped`'s lines of one paragraph, cluster by cluster.
    static func clusterWrapped(_ paragraph: Substring, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        var lineWidth = 0
        var word = ""
        var wordWidth = 0
        func flushWord() {
            guard !word.isEmpty else { return }
            if lineWidth + wordWidth <= width {
                line += word
                lineWidth += wordWidth
            } else {
                if !line.isEmpty {
                    // Trailing spaces at a break are dropped.
                    while line.last == " " { line.removeLast() }
                    lines.append(line)
                    line = ""
                    lineWidth = 0
                    // A word that starts a new line loses its leading space.
                    while word.first == " " {
                        word.removeFirst()
                        wordWidth -= 1
                    }
                }
                for original in word {
                    // A cluster wider than a whole line (a 2-cell character at width 1,
                    // a long emoji ZWJ chain) cannot be shown whole, and cutting it would
                    // split it: it stands as `…`.
                    let tooWide = of(original) > width
                    let character: Character = tooWide ? "…" : original
                    let cells = tooWide ? 1 : of(original)
                    if lineWidth + cells > width && !line.isEmpty {
                        lines.append(line)
                        line = ""
                        lineWidth = 0
                    }
                    line.append(character)
                    lineWidth += cells
                }
            }
            word = ""
            wordWidth = 0
        }
        for character in paragraph {
            if character == " " && !word.isEmpty && word.last != " " {
                flushWord()
            }
            word.append(character)
            wordWidth += of(character)
        }
        flushWord()
        lines.append(line)
        return lines
    }

    /// `wrapped`'s lines of one paragraph of only printable ASCII, computed on its bytes by
    /// the same rule: words are spaces then what is not a space; a word that does not fit
    /// starts a new line (the line loses its trailing spaces, the word its leading ones) and
    /// is cut only where it is longer than a line. Nil for any other text.
    static func asciiWrapped(_ paragraph: Substring, width: Int) -> [String]? {
        let result = paragraph.utf8.withContiguousStorageIfAvailable { bytes -> [String]? in
            guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
            let space: UInt8 = 0x20
            var lines: [String] = []
            var line: [UInt8] = []
            line.reserveCapacity(width)
            var index = 0
            while index < bytes.count {
                // One word: spaces, then what is not a space.
                var end = index
                while end < bytes.count && bytes[end] == space { end += 1 }
                while end < bytes.count && bytes[end] != space { end += 1 }
                var start = index
                index = end
                if line.count + (end - start) <= width {
                    line.append(contentsOf: bytes[start..<end])
                    continue
                }
                if !line.isEmpty {
                    while line.last == space { line.removeLast() }
                    lines.append(String(decoding: line, as: UTF8.self))
                    line.removeAll(keepingCapacity: true)
                    while start < end && bytes[start] == space { start += 1 }
                }
                while start < end {
                    if line.count == width {
                        lines.append(String(decoding: line, as: UTF8.self))
                        line.removeAll(keepingCapacity: true)
                    }
                    let take = min(end - start, width - line.count)
                    line.append(contentsOf: bytes[start..<(start + take)])
                    start += take
                }
            }
            lines.append(String(decoding: line, as: UTF8.self))
            return lines
        }
        return result ?? nil
    }

    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F,
            0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x16FE0...0x16FE4, 0x17000...0x18CFF, 0x1AFF0...0x1B2FF,
            0x1F200...0x1F2FF, 0x20000...0x2FFFD, 0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }
}
