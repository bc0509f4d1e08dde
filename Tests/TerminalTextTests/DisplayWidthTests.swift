import Testing

@testable import TerminalText

@Suite("Display width")
struct DisplayWidthTests {
    @Test("cells per character: ASCII 1, CJK and emoji 2, combining marks 0")
    func widths() {
        #expect(DisplayWidth.of("hello") == 5)
        #expect(DisplayWidth.of("東京") == 4)
        #expect(DisplayWidth.of("한국어") == 6)
        #expect(DisplayWidth.of("ｱｲ") == 2)  // halfwidth katakana
        #expect(DisplayWidth.of("ＡＢ") == 4)  // fullwidth Latin
        #expect(DisplayWidth.of("😀") == 2)
        #expect(DisplayWidth.of("Cafe\u{301}") == 4)
        #expect(DisplayWidth.of(Character("e\u{301}\u{302}")) == 1)
        #expect(DisplayWidth.of("\u{200B}") == 0)
        #expect(DisplayWidth.of("␛") == 1)
        #expect(DisplayWidth.of("مرحبا") == 5)
    }

    @Test("truncation fits the width and never splits a cluster")
    func truncation() {
        #expect(DisplayWidth.truncated("hello world", to: 8) == "hello w…")
        #expect(DisplayWidth.truncated("hello", to: 5) == "hello")
        #expect(DisplayWidth.truncated("東京旅行の計画", to: 7) == "東京旅…")
        #expect(DisplayWidth.truncated("東京旅行の計画", to: 6, ellipsis: false) == "東京旅")
        #expect(DisplayWidth.truncated("東京旅行の計画", to: 5, ellipsis: false) == "東京")
        #expect(DisplayWidth.truncated("e\u{301}e\u{301}e\u{301}", to: 2, ellipsis: false) == "e\u{301}e\u{301}")
        #expect(DisplayWidth.truncated("abc", to: 0) == "")
        #expect(DisplayWidth.truncated("abc", to: 1) == "…")
        #expect(DisplayWidth.fitted("東京", to: 5) == "東京 ")
        #expect(DisplayWidth.fitted("東京x", to: 4) == "東… ")
        #expect(DisplayWidth.rightAligned("42", to: 5) == "   42")
        for width in 0..<20 {
            let text = "Emoji 😀😃😄 and 日本語 with e\u{301}"
            #expect(DisplayWidth.of(DisplayWidth.truncated(text, to: width)) <= width)
            #expect(DisplayWidth.of(DisplayWidth.fitted(text, to: width)) == width)
        }
    }

    @Test("wrapping breaks at spaces, splits only over-long words, keeps empty lines")
    func wrapping() {
        #expect(DisplayWidth.wrapped("the quick brown fox jumps", width: 10) == ["the quick", "brown fox", "jumps"])
        #expect(DisplayWidth.wrapped("abcdefghijkl", width: 5) == ["abcde", "fghij", "kl"])
        #expect(DisplayWidth.wrapped("one\n\ntwo", width: 10) == ["one", "", "two"])
        #expect(DisplayWidth.wrapped("", width: 10) == [""])
        #expect(DisplayWidth.wrapped("日本語のテキストです", width: 7) == ["日本語", "のテキ", "ストで", "す"])
        #expect(DisplayWidth.wrapped("    indented code", width: 40) == ["    indented code"])
        let text = "Zero-width joiners build 👨‍👩‍👧‍👦 from several code points, and Cafe\u{301} keeps its accent."
        let family = DisplayWidth.of("👨‍👩‍👧‍👦")
        for width in 1..<30 {
            let lines = DisplayWidth.wrapped(text, width: width)
            for line in lines {
                #expect(DisplayWidth.of(line) <= width, "\(width): \(line)")
            }
            // A cluster wider than the whole line cannot be shown whole nor split: it is `…`.
            let expected = width < family ? text.replacingOccurrences(of: "👨‍👩‍👧‍👦", with: "…") : text
            #expect(lines.joined().filter { $0 != " " } == expected.filter { $0 != " " })
        }
        #expect(DisplayWidth.wrapped("日本", width: 1) == ["…", "…"])
    }

    @Test("printable ASCII is wrapped on its bytes exactly as cluster by cluster: every width, runs of spaces, words longer than a line")
    func asciiWrapMatchesClusters() {
        // A fixed generator (SplitMix64): the same cases every run.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        let alphabet = Array("ab  c~ ")
        for _ in 0..<3_000 {
            let length = Int(next() % 40)
            let text = String((0..<length).map { _ in alphabet[Int(next() % UInt64(alphabet.count))] })
            let width = Int(next() % 12) + 1
            let fast = DisplayWidth.asciiWrapped(Substring(text), width: width)
            #expect(fast == DisplayWidth.clusterWrapped(Substring(text), width: width), "\(text.debugDescription) at \(width)")
        }
        // Not ASCII, or not printable: the cluster path.
        #expect(DisplayWidth.asciiWrapped("naïve", width: 3) == nil && DisplayWidth.asciiWrapped("a\tb", width: 3) == nil)
        #expect(DisplayWidth.wrapped("naïve café", width: 6) == ["naïve", "café"])
        for text in ["", "\n", "a\n\nb\n", "e\u{301}\n\u{301}x"] {
            #expect(DisplayWidth.lines(of: text) == text.split(separator: "\n", omittingEmptySubsequences: false), "\(text.debugDescription)")
        }
        // Every line feed, the one of a CR LF too (sanitized text has none).
        #expect(DisplayWidth.lines(of: "a\r\nb") == ["a\r", "b"])
    }

    @Test("sanitizing keeps clean text as it is, line breaks too, and still replaces what follows a line break")
    func sanitizedFastPaths() {
        #expect(UntrustedText.sanitized("one\ntwo", keepNewlines: true) == "one\ntwo")
        #expect(UntrustedText.sanitized("naïve\ncafé", keepNewlines: true) == "naïve\ncafé")
        #expect(UntrustedText.sanitized("one\ntwo") == "one␊two")
        #expect(UntrustedText.sanitized("a\n\u{1B}[2Jb", keepNewlines: true) == UntrustedText.sanitized("a", keepNewlines: true) + "\n" + UntrustedText.sanitized("\u{1B}[2Jb"))
        #expect(UntrustedText.sanitized("a\r\nb\tc", keepNewlines: true) == "a\nb    c")
    }
}
