/// Makes text from a database or an import safe to send to a terminal.
///
/// Nothing in the result can move the cursor, change colours, retitle the window or reorder
/// what follows it:
/// - C0 controls and DEL become their Unicode control pictures (ESC shows as `␛`);
///   a newline is kept only where `keepNewlines` is set, a tab becomes spaces there;
/// - C1 controls become `�`;
/// - bidi overrides, embeddings, isolates and marks, zero-width characters standing alone,
///   line and paragraph separators (U+2028/2029), interlinear annotation marks
///   (U+FFF9–FFFB), the deprecated format characters U+206A–206F, the other format marks a
///   terminal draws its own way (`isInvisibleFormat`: a soft hyphen, U+0600), noncharacters
///   and Unicode tag characters (U+E0000–E007F, which can smuggle invisible text) become `⍰`. A zero-width
///   joiner inside an emoji sequence (👩‍💻) is kept, since it is part of one visible
///   character, and so are the tag characters of an emoji flag (🏴󠁧󠁢󠁳󠁣󠁴󠁿).
public enum UntrustedText {
    public static let formatPlaceholder: Character = "⍰"
    public static let c1Placeholder: Character = "\u{FFFD}"

    public static func sanitized(_ text: String, keepNewlines: Bool = false, tabWidth: Int = 4) -> String {
        // Fast paths: most text has nothing to replace (kept line breaks and all).
        if keepNewlines, isPrintableASCII(text, newlines: true) { return text }
        if !text.unicodeScalars.contains(where: { needsAttention($0) && !(keepNewlines && $0 == "\n") }) { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text {
            let scalars = character.unicodeScalars
            if !scalars.contains(where: needsAttention) {
                result.append(character)
                continue
            }
            if character == "\n" || character == "\r\n" {
                result.append(keepNewlines ? "\n" : "␊")
                continue
            }
            if character == "\t" && keepNewlines {
                result.append(String(repeating: " ", count: max(1, tabWidth)))
                continue
            }
            if isEmojiSequence(character) {
                // Keep the joiners and selectors that make one emoji; still drop controls,
                // and show tag characters unless they spell a flag.
                let flag = isTagFlag(character)
                let all = Array(scalars)
                var kept = String.UnicodeScalarView()
                for (index, scalar) in all.enumerated() {
                    if isControl(scalar) || isBidiControl(scalar) { continue }
                    // A joiner joins two emoji (👩‍💻); anywhere else it hides.
                    let joins =
                        scalar.value == 0x200D && index > 0 && index + 1 < all.count
                        && (all[index - 1].properties.isEmoji || all[index - 1].value == 0xFE0F) && all[index + 1].properties.isEmoji
                    let strayZeroWidth = isZeroWidth(scalar) && !joins
                    if strayZeroWidth || isInvisibleFormat(scalar) || (isTag(scalar) && !flag) {
                        kept.append(contentsOf: String(formatPlaceholder).unicodeScalars)
                        continue
                    }
                    kept.append(scalar)
                }
                result.append(String(kept))
                continue
            }
            for scalar in scalars {
                result.append(contentsOf: replacement(for: scalar))
            }
        }
        return result
    }

    /// Whether `text` is only printable ASCII (and line feeds, when `newlines`), read on its
    /// bytes: nothing in it needs a look at its scalars.
    static func isPrintableASCII(_ text: String, newlines: Bool) -> Bool {
        var text = text
        return text.withUTF8 { bytes in bytes.allSatisfy { ($0 >= 0x20 && $0 < 0x7F) || (newlines && $0 == 0x0A) } }
    }

    static func needsAttention(_ scalar: Unicode.Scalar) -> Bool {
        isControl(scalar) || isBidiControl(scalar) || isZeroWidth(scalar) || isInvisibleFormat(scalar) || isTag(scalar)
    }

    /// Separators and format characters that terminals draw as nothing, draw in a width of
    /// their own choosing, or act on: the line and paragraph separators, the deprecated
    /// format characters, the annotation marks, the soft hyphen, the prepended
    /// concatenation marks (U+0600…, U+06DD, U+070F: drawn under the digits after them),
    /// the hieroglyph and musical format controls, and the noncharacters (U+FDD0, U+FFFE).
    static func isInvisibleFormat(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        switch value {
        case 0x2028, 0x2029, 0x206A...0x206F, 0xFFF9...0xFFFB, 0x00AD, 0x0600...0x0605, 0x06DD, 0x070F, 0x0890...0x0891, 0x08E2,
            0x110BD, 0x110CD, 0x13430...0x1345F, 0x1BCA0...0x1BCA3, 0x1D173...0x1D17A, 0xFDD0...0xFDEF,
            // The Hangul fillers: letters that show nothing (blank names are made of them).
            0x115F, 0x1160, 0x3164, 0xFFA0:
            return true
        default:
            // The last two code points of every plane are noncharacters too.
            return value & 0xFFFE == 0xFFFE
        }
    }

    static func isTag(_ scalar: Unicode.Scalar) -> Bool {
        (0xE0000...0xE007F).contains(scalar.value)
    }

    /// 🏴, two to six lower-case tag letters or digits (a subdivision's code: gbsct), and
    /// CANCEL TAG: a subdivision flag (England, Scotland…). Any other run of tags is text
    /// smuggled past the eye, whatever it hangs on.
    public static func isTagFlag(_ character: Character) -> Bool {
        let scalars = Array(character.unicodeScalars)
        guard (4...8).contains(scalars.count), scalars[0].value == 0x1F3F4, scalars[scalars.count - 1].value == 0xE007F else {
            return false
        }
        return scalars.dropFirst().dropLast().allSatisfy(isSubdivisionTag)
    }

    /// A tag letter a–z or digit 0–9, as a subdivision flag spells its code.
    private static func isSubdivisionTag(_ scalar: Unicode.Scalar) -> Bool {
        (0xE0061...0xE007A).contains(scalar.value) || (0xE0030...0xE0039).contains(scalar.value)
    }

    /// JSON text made safe for a terminal while staying exact: every control, format and tag
    /// character outside the JSON's own line breaks becomes a `\uXXXX` escape (a surrogate
    /// pair above U+FFFF). Such characters can only stand inside JSON strings, where the
    /// escape means the same character, so a parser reads the very same data.
    public static func terminalSafeJSON(_ json: String) -> String {
        if !json.unicodeScalars.contains(where: { $0 != "\n" && needsAttention($0) }) { return json }
        var result = String.UnicodeScalarView()
        for scalar in json.unicodeScalars {
            guard scalar != "\n", needsAttention(scalar) else {
                result.append(scalar)
                continue
            }
            let units = scalar.value > 0xFFFF ? Array(String(scalar).utf16) : [UInt16(truncatingIfNeeded: scalar.value)]
            for unit in units {
                let hex = String(unit, radix: 16)
                result.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).unicodeScalars)
            }
        }
        return String(result)
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    static func isZeroWidth(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x200B, 0x200C, 0x200D, 0x2060...0x2064, 0xFEFF, 0x180E: true
        default: false
        }
    }

    private static func isEmojiSequence(_ character: Character) -> Bool {
        let scalars = character.unicodeScalars
        guard scalars.count > 1 else { return false }
        return scalars.contains { $0.properties.isEmojiPresentation || $0.value == 0xFE0F }
    }

    private static func replacement(for scalar: Unicode.Scalar) -> String {
        switch scalar.value {
        case 0x00..<0x20:
            return String(Unicode.Scalar(0x2400 + scalar.value).map(Character.init) ?? c1Placeholder)
        case 0x7F:
            return "␡"
        case 0x80...0x9F:
            return String(c1Placeholder)
        default:
            if isBidiControl(scalar) || isZeroWidth(scalar) || isInvisibleFormat(scalar) || isTag(scalar) {
                return String(formatPlaceholder)
            }
            return String(Character(scalar))
        }
    }
}
