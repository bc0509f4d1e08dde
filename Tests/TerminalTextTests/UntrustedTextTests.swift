import Foundation
import Testing

@testable import TerminalText

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
        // A joiner left dangling (the ESC ends the cluster) joins nothing: it is shown.
        #expect(UntrustedText.sanitized("👩\u{200D}\u{1B}💻") == "👩⍰␛💻")
        #expect(UntrustedText.sanitized("👩\u{200C}💻") == "👩⍰💻")
    }

    @Test("format marks a terminal draws its own way, and noncharacters, are shown (from the fifth hostile round)")
    func formatMarks() {
        let marks: [UInt32] = [0xAD, 0x0600, 0x06DD, 0x070F, 0x1D173, 0x13430, 0xFDD0, 0xFFFE, 0x1FFFF]
        for value in marks {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = "ab" + String(Character(scalar)) + "12"
            #expect(UntrustedText.sanitized(text) == "ab⍰12", "\(String(value, radix: 16))")
        }
        // Scotland's flag keeps its tags; the same tags after a letter do not.
        let scotland = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}"
        #expect(UntrustedText.sanitized(scotland + " flag") == scotland + " flag")
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

    @Test("tag characters, line and paragraph separators, annotation and deprecated format characters are shown")
    func hiddenCharacters() {
        // Tag letters smuggle invisible text ("hi" here) after any character.
        #expect(UntrustedText.sanitized("ok\u{E0068}\u{E0069}") == "ok⍰⍰")
        #expect(UntrustedText.sanitized("a\u{2028}b\u{2029}c") == "a⍰b⍰c")
        #expect(UntrustedText.sanitized("\u{FFF9}x\u{FFFA}y\u{FFFB}") == "⍰x⍰y⍰")
        for value in UInt32(0x206A)...0x206F {
            guard let scalar = Unicode.Scalar(value) else { continue }
            #expect(UntrustedText.sanitized("a" + String(Character(scalar)) + "b") == "a⍰b")
        }
        // An emoji followed by tags that do not spell a flag still shows them.
        #expect(UntrustedText.sanitized("😀\u{E0041}\u{E0042}") == "😀⍰⍰")
        #expect(UntrustedText.sanitized("🏴\u{E0041}") == "🏴⍰")
    }

    @Test("the tag characters of a subdivision flag are kept")
    func flagTags() {
        let scotland = "🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}"
        #expect(UntrustedText.sanitized(scotland + " Scotland") == scotland + " Scotland")
    }

    @Test("JSON for a terminal: every dangerous character escaped, the same data to a parser")
    func terminalJSON() throws {
        let hostile = "a\u{1B}]52;c;eA==\u{07}\u{7F}\u{85}\u{9B}\u{202E}\u{200B}\u{2028}\u{E0041}🏴\u{E0067}\u{E007F}z 東京 👩‍💻"
        let json = "{\n  \"t\" : \"" + hostile.replacingOccurrences(of: "\u{1B}", with: "\\u001b").replacingOccurrences(of: "\u{07}", with: "\\u0007") + "\"\n}"
        let safe = UntrustedText.terminalSafeJSON(json)
        for scalar in safe.unicodeScalars where scalar != "\n" {
            #expect(!(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)), "\(scalar.value)")
            #expect(![0x200B, 0x200D, 0x202E, 0x2028].contains(scalar.value) && !(0xE0000...0xE007F).contains(scalar.value), "\(scalar.value)")
        }
        #expect(safe.contains("\\u007f") && safe.contains("\\udb40\\udc41"))
        let parsed = try JSONSerialization.jsonObject(with: Data(safe.utf8)) as? [String: String]
        #expect(parsed?["t"] == hostile)
        #expect(UntrustedText.terminalSafeJSON("{\"plain\" : \"東京\"}") == "{\"plain\" : \"東京\"}")
    }

    @Test("every scalar of the planes in use: nothing dangerous survives")
    func exhaustiveAllPlanes() {
        var all = ""
        for value in UInt32(0)...0xE01EF where !(0xD800...0xDFFF).contains(value) {
            if let scalar = Unicode.Scalar(value) { all.unicodeScalars.append(scalar) }
        }
        let safe = UntrustedText.sanitized(all)
        for scalar in safe.unicodeScalars {
            let value = scalar.value
            let dangerous =
                value < 0x20 || (0x7F...0x9F).contains(value) || [0x061C, 0x200B, 0x200E, 0x200F, 0x2028, 0x2029, 0xFEFF].contains(value)
                || (0x202A...0x202E).contains(value) || (0x2066...0x206F).contains(value) || (0xFFF9...0xFFFB).contains(value)
                || (0xE0000...0xE007F).contains(value)
            #expect(!dangerous, "\(value)")
        }
    }
}
