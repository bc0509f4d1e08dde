import Foundation

/// Hostile text for what reaches a terminal, and the test of what must never reach one.
public enum HostileText {
    /// Every kind of sequence a terminal acts on, and the invisible characters.
    public static let sample =
        "A\u{1B}[2J\u{1B}]0;PWN\u{07}\u{1B}]52;c;cm0gLXJmIH4=\u{07}\u{1B}]8;;http://x\u{1B}\\link\u{1B}]8;;\u{1B}\\"
        + "\u{1B}P+q\u{1B}\\\u{1B}_apc\u{1B}\\\u{9B}31m\u{85}\u{7F}\u{8}\r\u{0}\u{202E}evil\u{2066}\u{200B}\u{2028}\u{E0041}\u{E0042}Z"

    /// Bytes that must never reach a terminal from data: C0 but LF/CR, DEL, C1 (UTF-8
    /// C2 80–9F), bidi and zero-width and separators (E2 80 8B–8F, A8–AE, E2 81 A0–AF),
    /// tag characters (F3 A0 80–81 …).
    public static func dangerousBytes(in data: Data) -> [String] {
        let bytes = [UInt8](data)
        var found: [String] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if (byte < 0x20 && byte != 0x0A && byte != 0x0D) || byte == 0x7F {
                found.append(String(format: "%02x at %d", byte, index))
            } else if byte == 0xC2, index + 1 < bytes.count, (0x80...0x9F).contains(bytes[index + 1]) {
                found.append(String(format: "c2 %02x at %d", bytes[index + 1], index))
            } else if byte == 0xE2, index + 2 < bytes.count {
                let (b1, b2) = (bytes[index + 1], bytes[index + 2])
                if (b1 == 0x80 && ((0x8B...0x8F).contains(b2) || (0xA8...0xAE).contains(b2))) || (b1 == 0x81 && (0xA0...0xAF).contains(b2)) {
                    found.append(String(format: "e2 %02x %02x at %d", b1, b2, index))
                }
            } else if byte == 0xF3, index + 1 < bytes.count, bytes[index + 1] == 0xA0 {
                found.append("tag character at \(index)")
            }
            index += 1
        }
        return found
    }

    /// `text` quoted for a POSIX shell.
    public static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
}
