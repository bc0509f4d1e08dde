/// Makes text from a database or an import safe to send to a terminal.
///
/// Nothing in the result can move the cursor, change colours, retitle the window or reorder
/// what follows it:
/// - C0 controls and DEL become their Unicode control pictures (ESC shows as `␛`);
///   a newline is kept only where `keepNewlines` is set, a tab becomes spaces there;
/// - C1 controls become `�`;
/// - bidi overrides, embeddings, isolates and marks, and zero-width characters standing
///   alone become `⍰`. A zero-width joiner inside an emoji sequence (👩‍💻) is kept, since it
///   is part of one visible character.
public enum UntrustedText {
    public static let formatPlaceholder: Character = "⍰"
    public static let c1Placeholder: Character = "\u{FFFD}"

    public static func sanitized(_ text: String, keepNewlines: Bool = false, tabWidth: Int = 4) -> String {
        // Fast path: most text has nothing to replace.
        if !text.unicodeScalars.contains(where: needsAttention) { return text }
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
                // Keep the joiners and selectors that make one emoji; still drop controls.
                var kept = String.UnicodeScalarView()
                for scalar in scalars {
                    if isControl(scalar) || isBidiControl(scalar) { continue }
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

    static func needsAttention(_ scalar: Unicode.Scalar) -> Bool {
        isControl(scalar) || isBidiControl(scalar) || isZeroWidth(scalar)
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
            if isBidiControl(scalar) || isZeroWidth(scalar) { return String(formatPlaceholder) }
            return String(Character(scalar))
        }
    }
}
