import Testing

@testable import ScrollbackTerminal
import ScrollbackViewModels

/// The sequences a terminal description may not list, decoded whole.
@Suite("Key decoding")
struct KeyDecodingTests {
    @Test("Home, End, Delete and paging as xterm, rxvt, the Linux console and tmux send them; modifiers ignored")
    func controlSequences() {
        let cases: [(String, Character, Key?)] = [
            ("1", "~", .home), ("7", "~", .home), ("4", "~", .end), ("8", "~", .end), ("3", "~", .delete),
            ("5", "~", .pageUp), ("6", "~", .pageDown), ("", "H", .home), ("", "F", .end), ("1;5", "A", .up),
            ("", "B", .down), ("1;3", "C", .right), ("", "D", .left), ("3;2", "~", .delete), ("2", "~", nil),
            ("15", "~", nil), ("", "Z", nil), ("?1;2", "c", nil),
        ]
        for (parameters, final, key) in cases {
            let value = final.unicodeScalars.first?.value ?? 0
            #expect(KeyDecoder.key(controlSequence: parameters, final: value) == key, "ESC[\(parameters)\(final)")
        }
    }
}
