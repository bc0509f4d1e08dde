/// The rule for a title a person sets, wherever it is set (`rename`, the browser's editor):
/// the storage layer applies it, and the editor keeps to it as it is typed, so that both say
/// the same. Imported titles are the export's, kept as they are (the screen makes them safe).
public enum ConversationTitle {
    public static let maximumLength = 1_000

    /// The title `text` sets: line breaks and tabs become spaces and the ends are trimmed;
    /// empty, too long, or holding a control character or a bidi override is refused.
    public static func normalized(_ text: String) throws(StorageError) -> String {
        var title = ""
        for character in text {
            if character.isNewline || character == "\t" {
                title.append(" ")
            } else if character.unicodeScalars.contains(where: isRefused) && !isTagFlag(character) {
                throw .titleHasControls
            } else {
                title.append(character)
            }
        }
        title = title.trimmingWhitespace()
        // Nothing that shows (a soft hyphen, zero-width spaces, a blank braille cell) is blank.
        guard title.unicodeScalars.contains(where: { !isInvisible($0) }) else { throw .invalidTitle }
        guard title.count <= maximumLength else { throw .titleTooLong(characters: title.count) }
        // A character may be a letter with any number of marks on it: code points count too.
        let scalars = title.unicodeScalars.count
        guard scalars <= 4 * maximumLength else { throw .titleTooManyCodePoints(scalars) }
        if let first = title.unicodeScalars.first, [.nonspacingMark, .spacingMark, .enclosingMark].contains(first.properties.generalCategory) {
            throw .titleStartsWithMark
        }
        return title
    }

    /// `text` without what `normalized` refuses (line breaks and tabs stay: they become
    /// spaces there), and how many scalars went: for an editor that started from a stored
    /// title holding some (an export's), where a person cannot type them.
    public static func withoutRefused(_ text: String) -> (text: String, removed: Int) {
        var kept = String.UnicodeScalarView()
        var removed = 0
        for character in text {
            if isTagFlag(character) {
                kept.append(contentsOf: character.unicodeScalars)
                continue
            }
            for scalar in character.unicodeScalars {
                if isRefused(scalar) && !["\n", "\r", "\t", "\u{0B}", "\u{0C}", "\u{85}"].contains(scalar) {
                    removed += 1
                } else {
                    kept.append(scalar)
                }
            }
        }
        return (String(kept), removed)
    }

    /// 🏴, two to six lower-case tag letters or digits, and CANCEL TAG: a subdivision flag
    /// (England, Scotland, Wales), the one place tag characters belong: the screen's rule
    /// (`UntrustedText.isTagFlag`, which a test holds this one to).
    public static func isTagFlag(_ character: Character) -> Bool {
        let scalars = Array(character.unicodeScalars)
        guard (4...8).contains(scalars.count), scalars[0].value == 0x1F3F4, scalars[scalars.count - 1].value == 0xE007F else {
            return false
        }
        return scalars.dropFirst().dropLast().allSatisfy(isSubdivisionTag)
    }

    /// A flag being typed: 🏴 and up to six tag letters or digits, its CANCEL TAG still to come.
    public static func isPartialTagFlag(_ character: Character) -> Bool {
        let scalars = Array(character.unicodeScalars)
        guard let first = scalars.first, first.value == 0x1F3F4, scalars.count <= 7 else { return false }
        return scalars.dropFirst().allSatisfy(isSubdivisionTag)
    }

    private static func isSubdivisionTag(_ scalar: Unicode.Scalar) -> Bool {
        (0xE0061...0xE007A).contains(scalar.value) || (0xE0030...0xE0039).contains(scalar.value)
    }

    /// A scalar no title may hold: C0 and C1 controls (ESC among them), DEL, the bidi
    /// embeddings, overrides and isolates that reorder what follows them, the bidi marks
    /// (LRM, RLM, ALM: invisible, they move what is around them), and the tag characters
    /// (invisible text that some programs read), and the format marks that change the
    /// characters next to them: the prepended concatenation marks (U+0600, U+06DD, U+070F:
    /// drawn under the digits after them) and the interlinear annotation marks (U+FFF9–FFFB).
    public static func isRefused(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return scalar.properties.generalCategory == .control || (0x202A...0x202E).contains(value)
            || (0x2066...0x2069).contains(value) || [0x200E, 0x200F, 0x061C].contains(value)
            || (0xE0000...0xE007F).contains(value)
            || (0x0600...0x0605).contains(value) || [0x06DD, 0x070F, 0x08E2, 0x110BD, 0x110CD].contains(value)
            || (0x0890...0x0891).contains(value) || (0xFFF9...0xFFFB).contains(value)
    }

    /// A scalar that shows nothing: white space, what Unicode says may be ignored in display
    /// (a soft hyphen, zero-width spaces and joiners, a byte-order mark), the fillers and the
    /// blank braille cell.
    static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isWhitespace || scalar.properties.isDefaultIgnorableCodePoint
            || [0x2800, 0x3164, 0x115F, 0x1160, 0xFFA0].contains(scalar.value)
    }
}

extension String {
    /// Without the spaces (any Unicode space) at either end.
    fileprivate func trimmingWhitespace() -> String {
        var characters = Substring(self)
        while let first = characters.first, first.isWhitespace { characters.removeFirst() }
        while let last = characters.last, last.isWhitespace { characters.removeLast() }
        return String(characters)
    }
}
