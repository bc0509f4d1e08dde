import Foundation

/// What a search query means, as one set of rules shared by the index query, the check of
/// each candidate, the highlighting of matches and finding within a conversation.
///
/// The rules (README → Searching):
/// - The query is split at white space into terms; text in double quotes is one term (a
///   phrase), an unclosed quote runs to the end. Every term must occur in the same message
///   (or title). Every other character is text: nothing is query syntax.
/// - Letters are compared without case and, for Latin letters, without diacritics.
/// - A term that starts with a letter or digit must start where a word starts (so `go`
///   finds `goes` but not `Zalgo`); it may end anywhere (so `refactor` finds
///   `refactoring`). Characters of the scripts written without spaces (Han, Kana, Hangul,
///   Thai, Lao, Khmer, Myanmar) match anywhere.
/// - In a phrase, a run of white space matches any run of white space.
public struct SearchQuery: Sendable, Hashable {
    public struct Term: Sendable, Hashable {
        /// As typed (without the quotes of a phrase).
        public let text: String
        public let isPhrase: Bool
        /// Folded; in a phrase, each white space run is one " ".
        let pattern: [Unicode.Scalar]

        /// Whether the index can look the term up (it holds a letter, digit or CJK character).
        var hasWords: Bool { pattern.contains { SearchText.isWord($0) || SearchText.isCJK($0) } }
        var startsAtWord: Bool { pattern.first.map(SearchText.isWord) ?? false }
        var endsInWord: Bool { pattern.last.map(SearchText.isWord) ?? false }

        /// Whether the index finds it cheaply: not a prefix of three letters or fewer, which
        /// FTS5 answers by merging the lists of every word that starts so (`t*`: most words).
        var isSelective: Bool {
            guard hasWords else { return false }
            guard endsInWord else { return true }
            return pattern.reversed().prefix { SearchText.isWord($0) }.count > 3
        }

        /// This term as an FTS5 string: FTS5 tokenizes it into a phrase of its words; a
        /// prefix when it ends in a letter or digit.
        var indexString: String {
            let text = String(String.UnicodeScalarView(pattern))
            return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" + (endsInWord ? "*" : "")
        }
    }

    public let terms: [Term]

    public var isEmpty: Bool { terms.isEmpty }

    public init(_ query: String) {
        var terms: [Term] = []
        var current = ""
        var inQuotes = false
        func finish() {
            let pattern = SearchText.folded(current, phrase: inQuotes)
            // A phrase of one word is that word (`"brown"` is `brown`).
            let phrase = inQuotes && pattern.scalars.contains(" ")
            let text = inQuotes && !phrase ? current.trimmingCharacters(in: .whitespaces) : current
            // A term given twice is the same condition: it is kept once (a pasted paragraph
            // of repeated words costs one check per word, not one per repeat).
            if !pattern.scalars.isEmpty, !terms.contains(where: { $0.pattern == pattern.scalars && $0.isPhrase == phrase }) {
                terms.append(Term(text: text, isPhrase: phrase, pattern: pattern.scalars))
            }
            current = ""
        }
        for character in query {
            if character == "\"" {
                finish()
                inQuotes.toggle()
            } else if (character.isWhitespace || character.unicodeScalars.allSatisfy(SearchText.isGap)) && !inQuotes {
                // What shows nothing between words (a zero-width space) parts them as a space does.
                finish()
            } else {
                current.append(character)
            }
        }
        finish()
        self.terms = terms
    }

    /// Whether every term occurs in `text`.
    public func matches(_ text: String) -> Bool {
        firstMatch(in: text) != nil
    }

    /// Where the first match in `text` starts, in Characters, when every term occurs in it;
    /// nil when one does not.
    public func firstMatch(in text: String) -> Int? {
        guard !terms.isEmpty else { return nil }
        let folded = SearchText.folded(text, phrase: false)
        var first: Int?
        for term in terms {
            guard let occurrence = SearchText.occurrences(of: term, in: folded.scalars, first: true).first else { return nil }
            first = min(first ?? Int.max, folded.scalarIndex[occurrence.lowerBound])
        }
        return first.map { SearchText.Folded.characterOffset(of: $0, in: text) }
    }

    /// Where the terms occur in `text`, in Characters, sorted, overlaps merged.
    public func matchRanges(in text: String) -> [Range<Int>] {
        let folded = SearchText.folded(text, phrase: false)
        var ranges: [Range<Int>] = []
        for term in terms {
            for occurrence in SearchText.occurrences(of: term, in: folded.scalars, first: false) {
                let lower = SearchText.Folded.characterOffset(of: folded.scalarIndex[occurrence.lowerBound], in: text)
                let upper = SearchText.Folded.characterOffset(of: folded.scalarIndex[occurrence.upperBound - 1], in: text) + 1
                ranges.append(lower..<upper)
            }
        }
        ranges.sort { $0.lowerBound < $1.lowerBound }
        var merged: [Range<Int>] = []
        for range in ranges {
            if let last = merged.last, range.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }

    /// An FTS5 expression that every match also matches (the index narrows, `matches`
    /// decides): each term that has words as one quoted string (FTS5 tokenizes it into a
    /// phrase of its words), a prefix when it ends in a letter or digit. Nil when no term
    /// has words (the search then reads every row).
    public var indexExpression: String? {
        let parts = terms.filter(\.hasWords).map(\.indexString)
        return parts.isEmpty ? nil : parts.joined(separator: " AND ")
    }

    /// The same, of the selective terms only (the others are left to `matches`); nil when
    /// there is none, and the newest rows are then read first (a short prefix such as
    /// `the` matches most of them), before the index is asked.
    public var selectiveIndexExpression: String? {
        let parts = terms.filter(\.isSelective).map(\.indexString)
        return parts.isEmpty ? nil : parts.joined(separator: " AND ")
    }
}

/// Folding and character classes, the same as the `scrollback` tokenizer's (SearchTokenizer).
enum SearchText {
    struct Folded {
        var scalars: [Unicode.Scalar] = []
        /// For each folded scalar, the index of the scalar of the text it came from.
        var scalarIndex: [Int] = []

        /// The Characters (grapheme clusters) of `text` before the one holding scalar `offset`.
        static func characterOffset(of offset: Int, in text: String) -> Int {
            let scalars = text.unicodeScalars
            var index = scalars.index(scalars.startIndex, offsetBy: offset, limitedBy: scalars.endIndex) ?? scalars.endIndex
            // Back to the start of its Character.
            while index > scalars.startIndex, index.samePosition(in: text) == nil { index = scalars.index(before: index) }
            return text.distance(from: text.startIndex, to: index)
        }
    }

    /// Lower case (simple folding, as SQLite's unicode61), Latin diacritics removed;
    /// with `phrase`, white space runs become one " ".
    static func folded(_ text: String, phrase: Bool) -> Folded {
        var result = Folded()
        result.scalars.reserveCapacity(text.utf8.count)
        result.scalarIndex.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        for (index, scalar) in text.unicodeScalars.enumerated() {
            do {
                if phrase && isGap(scalar) {
                    pendingSpace = !result.scalars.isEmpty
                    continue
                }
                let value = scalar.value
                // The diacritics unicode61 removes join the letters around them; any other
                // combining mark ends a word there, for the index and so here (the strokes of
                // "t̶e̴x̵t" hold the words t, e, x and t).
                if isRemovedDiacritic(value) { continue }
                if pendingSpace {
                    result.scalars.append(" ")
                    result.scalarIndex.append(index)
                    pendingSpace = false
                }
                // The common cases without allocating: ASCII, and what has no case and no
                // diacritic to remove (CJK, most symbols).
                if value < 0x80 {
                    result.scalars.append(value >= 0x41 && value <= 0x5A ? Unicode.Scalar(UInt8(truncatingIfNeeded: value + 32)) : scalar)
                    result.scalarIndex.append(index)
                } else if (value >= 0x2E80 && value < 0xA640) || (value >= 0xAC00 && value < 0xD800)
                    || (value >= 0x250 && !(value >= 0x1E00 && value <= 0x1EFF) && exceptions[value] == nil
                        && !scalar.properties.changesWhenLowercased)
                {
                    result.scalars.append(scalar)
                    result.scalarIndex.append(index)
                } else {
                    for piece in fold(scalar) {
                        result.scalars.append(piece)
                        result.scalarIndex.append(index)
                    }
                }
            }
        }
        return result
    }

    /// The combining marks unicode61 removes with `remove_diacritics` (SQLite's
    /// `sqlite3Fts5UnicodeIsdiacritic`: 25 of U+0300–U+0331); the others separate tokens.
    static func isRemovedDiacritic(_ value: UInt32) -> Bool {
        guard value >= 0x300 && value <= 0x331 else { return false }
        let low: UInt32 = 0x0802_9FDF, high: UInt32 = 0x0003_61F8
        return value < 0x320 ? low & (1 << (value - 0x300)) != 0 : high & (1 << (value - 0x320)) != 0
    }

    /// Letters kept whole by unicode61's diacritic removal, and its foldings beyond lower case.
    private static let exceptions: [UInt32: String] = [
        0x1E0: "ǡ", 0x1E1: "ǡ", 0x1E2: "ǣ", 0x1E3: "ǣ", 0x1EE: "ǯ", 0x1EF: "ǯ", 0x1FC: "ǽ", 0x1FD: "ǽ", 0x1FE: "ǿ",
        0x1FF: "ǿ", 0x1E9B: "s", 0xB5: "μ", 0x17F: "s", 0x3C2: "σ", 0x3D0: "β", 0x3D1: "θ", 0x3D5: "φ", 0x3D6: "π",
        0x3F0: "κ", 0x3F1: "ρ", 0x3F5: "ε",
    ]

    /// The slow path of `folded`: one scalar that may have case or a Latin diacritic.
    private static func fold(_ scalar: Unicode.Scalar) -> [Unicode.Scalar] {
        if let exception = exceptions[scalar.value] { return Array(exception.unicodeScalars) }
        var text = String(Character(scalar))
        if scalar.value < 0x250 || (scalar.value >= 0x1E00 && scalar.value <= 0x1EFF) {
            text = text.decomposedStringWithCanonicalMapping
        }
        return Array(text.lowercased().unicodeScalars.filter { !($0.value >= 0x300 && $0.value <= 0x36F) })
    }

    /// A letter, digit or private-use character of the alphabetic scripts, or another code
    /// point unicode61 keeps in tokens (`IndexWordCharacters`); CJK-class characters are not
    /// words: each stands alone.
    static func isWord(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value < 0x80 {
            let value = scalar.value
            return (value >= 0x30 && value <= 0x39) || (value >= 0x61 && value <= 0x7A) || (value >= 0x41 && value <= 0x5A)
        }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .decimalNumber,
            .letterNumber, .otherNumber, .privateUse:
            return !isCJK(scalar)
        default:
            // What the index keeps inside a word, as the index does.
            return IndexWordCharacters.contains(scalar.value) && !isCJK(scalar)
        }
    }

    /// The scripts written without spaces, which the tokenizer splits into single
    /// characters and pairs; the same table as SearchTokenizer's.
    static func isCJK(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0E00...0x0E3E, 0x0E40...0x0E4E, 0x0E5C...0x0E7F,  // Thai, without ฿, ๏, digits, ๚ ๛
            0x0E80...0x0ECF, 0x0EDA...0x0EFF,  // Lao, without digits
            0x1000...0x103F, 0x1050...0x108F, 0x109A...0x109F,  // Myanmar, without digits, punctuation
            0x1100...0x11FF,  // Hangul Jamo
            0x1780...0x17D3, 0x17D7...0x17D7, 0x17DC...0x17DF, 0x17EA...0x17EF, 0x17FA...0x17FF,  // Khmer
            0x19E0...0x19FF,  // Khmer symbols
            0x3005, 0x3007,  // 々 〇
            0x3040...0x309F, 0x30A1...0x30FA, 0x30FC...0x30FF,  // Hiragana, Katakana without ゠ ・
            0x3130...0x318F, 0x31F0...0x31FF,  // Hangul compatibility Jamo, Katakana extensions
            0x3400...0x4DBF, 0x4E00...0x9FFF,  // Han
            0xA960...0xA97F, 0xA9E0...0xA9EF, 0xA9FA...0xA9FF, 0xAA60...0xAA7F,  // Hangul, Myanmar extended
            0xAC00...0xD7AF, 0xD7B0...0xD7FF,  // Hangul
            0xF900...0xFAFF, 0xFF66...0xFF9F,  // compatibility ideographs, halfwidth Katakana
            0x20000...0x2A6DF, 0x2A700...0x2EE5F, 0x2F800...0x2FA1F, 0x30000...0x323AF:  // Han extensions
            return true
        default:
            return false
        }
    }

    /// Ranges (in folded scalars) where `term` occurs in `text` by the rules.
    static func occurrences(of term: SearchQuery.Term, in text: [Unicode.Scalar], first: Bool) -> [Range<Int>] {
        let pattern = term.pattern
        guard let head = pattern.first, !text.isEmpty else { return [] }
        let needsBoundary = term.startsAtWord
        var found: [Range<Int>] = []
        var start = 0
        while start < text.count {
            if text[start] == head, !needsBoundary || !continuesWord(text, before: start),
                let end = matchEnd(pattern, in: text, at: start)
            {
                found.append(start..<end)
                if first { return found }
                start = end
            } else {
                start += 1
            }
        }
        return found
    }

    /// Whether the text before `index` ends in a letter or digit, looking through combining
    /// marks (`निया` starts inside `दुनिया`, after a vowel sign on a letter).
    private static func continuesWord(_ text: [Unicode.Scalar], before index: Int) -> Bool {
        var position = index - 1
        while position >= 0 {
            let scalar = text[position]
            switch scalar.properties.generalCategory {
            case .nonspacingMark, .spacingMark, .enclosingMark:
                position -= 1
            default:
                return isWord(scalar)
            }
        }
        return false
    }

    /// White space, or what shows nothing and is no part of a word for the index either
    /// (U+200B, U+00AD, U+2060, U+FEFF…): between a phrase's words, one as good as another.
    static func isGap(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isWhitespace
            || (scalar.properties.isDefaultIgnorableCodePoint && !isWord(scalar) && !isRemovedDiacritic(scalar.value))
    }

    /// Where a match of `pattern` starting at `start` ends, or nil.
    private static func matchEnd(_ pattern: [Unicode.Scalar], in text: [Unicode.Scalar], at start: Int) -> Int? {
        var position = start
        for scalar in pattern {
            if scalar == " " {
                // A run of white space in a phrase matches any run of white space, and of
                // what shows nothing between words (a zero-width space, a soft hyphen).
                guard position < text.count, isGap(text[position]) else { return nil }
                while position < text.count, isGap(text[position]) { position += 1 }
            } else {
                guard position < text.count, text[position] == scalar else { return nil }
                position += 1
            }
        }
        return position
    }
}
