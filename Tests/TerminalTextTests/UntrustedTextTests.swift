import Testing

import TerminalText

@Suite("Untrusted text")
struct UntrustedTextTests {
    @Test("plain text, CJK, emoji and combining marks pass unchanged")
    func plain() {
        for text in ["hello", "東京旅行の計画", "👩‍💻 pair", "🇯🇵", "Cafe\u{301}", "مرحبا", ""] {
            #expect(UntrustedText.sanitized(text) == text)
        }
    }

    @Test("escape sequences and controls become visible placeholders")
    func controls() {
        #expect(UntrustedText.sanitized("\u{1B}[31mred\u{1B}[0m") == "␛[31mred␛[0m")
        #expect(UntrustedText.sanitized("\u{1B}]0;owned\u{07}") == "␛]0;owned␇")
        #expect(UntrustedText.sanitized("a\u{0}b\u{7F}c") == "a␀b␡c")
        #expect(UntrustedText.sanitized("x\u{9B}31m") == "x\u{FFFD}31m")
        #expect(UntrustedText.sanitized("line\r\nnext\rback") == "line␊next␍back")
        #expect(UntrustedText.sanitized("tab\there") == "tab␉here")
    }

    @Test("newlines and tabs are kept as layout where asked")
    func keepNewlines() {
        #expect(UntrustedText.sanitized("a\nb\tc\u{1B}", keepNewlines: true, tabWidth: 2) == "a\nb  c␛")
    }

    @Test("bidi overrides and lone zero-width characters are shown, emoji joiners kept")
    func formatCharacters() {
        #expect(UntrustedText.sanitized("abc\u{202E}fed") == "abc⍰fed")
        #expect(UntrustedText.sanitized("\u{2066}x\u{2069}") == "⍰x⍰")
        #expect(UntrustedText.sanitized("zero\u{200B}width") == "zero⍰width")
        #expect(UntrustedText.sanitized("\u{FEFF}bom") == "⍰bom")
        #expect(UntrustedText.sanitized("👨‍👩‍👧‍👦 family") == "👨‍👩‍👧‍👦 family")
        #expect(UntrustedText.sanitized("e\u{301}\u{1B}") == "e\u{301}␛")
        #expect(UntrustedText.sanitized("1\u{200D}2") == "1⍰2")
        #expect(UntrustedText.sanitized("👩\u{200D}\u{1B}💻") == "👩\u{200D}␛💻")
    }

    @Test("nothing that reaches the terminal is a control or format character")
    func exhaustive() {
        var all = ""
        for value in UInt32(0)...0x2100 {
            if let scalar = Unicode.Scalar(value) { all.unicodeScalars.append(scalar) }
        }
        let safe = UntrustedText.sanitized(all)
        for scalar in safe.unicodeScalars {
            #expect(!(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)), "\(scalar.value)")
            #expect(![0x200B, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069].contains(scalar.value))
        }
    }
}
