// libFuzzer harness: the sanitizer and the layout by display cells (TerminalText). Built by
// Tests/fuzz/fuzz-text.sh. Any input: nothing dangerous survives sanitizing, truncation and
// wrapping never exceed their width, and terminal-safe JSON of an encoded string decodes to
// the same string.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTerminalText(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let width = Int(data[0] % 90)
    let text = String(decoding: UnsafeBufferPointer(start: data + 1, count: size - 1), as: UTF8.self)
    let safe = UntrustedText.sanitized(text)
    checkNothingDangerous(safe)
    checkNothingDangerous(UntrustedText.sanitized(text, keepNewlines: true), newlines: true)
    let truncated = DisplayWidth.truncated(safe, to: width)
    if DisplayWidth.of(truncated) > width { fatalError("truncated to \(width) is \(DisplayWidth.of(truncated)) wide") }
    let fitted = DisplayWidth.fitted(safe, to: width)
    if DisplayWidth.of(fitted) > width { fatalError("fitted to \(width) is \(DisplayWidth.of(fitted)) wide") }
    if width > 0 {
        for line in DisplayWidth.wrapped(safe, width: width) where DisplayWidth.of(line) > width {
            fatalError("a wrapped line is \(DisplayWidth.of(line)) wide at \(width)")
        }
    }
    if let encoded = try? JSONEncoder().encode([text]) {
        let json = UntrustedText.terminalSafeJSON(String(decoding: encoded, as: UTF8.self))
        guard let back = try? JSONDecoder().decode([String].self, from: Data(json.utf8)), back == [text] else {
            fatalError("terminal-safe JSON changed the data")
        }
    }
    return 0
}

/// Only a joiner inside an emoji sequence and the tag letters of a flag (🏴 … U+E007F) may
/// remain of the characters the sanitizer watches for.
func checkNothingDangerous(_ text: String, newlines: Bool = false) {
    for character in text {
        let scalars = Array(character.unicodeScalars)
        let isEmoji = scalars.count > 1 && scalars.contains { $0.properties.isEmojiPresentation || $0.value == 0xFE0F }
        let isFlag = scalars.count >= 3 && scalars[0].value == 0x1F3F4 && scalars[scalars.count - 1].value == 0xE007F
        for scalar in scalars where UntrustedText.needsAttention(scalar) {
            if newlines && scalar == "\n" { continue }
            if scalar.value == 0x200D && isEmoji { continue }
            if (0xE0020...0xE007F).contains(scalar.value) && isFlag { continue }
            fatalError("U+\(String(scalar.value, radix: 16)) survived sanitizing")
        }
    }
}
