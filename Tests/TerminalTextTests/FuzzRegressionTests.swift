import Foundation
import Testing

@testable import TerminalText

/// Inputs libFuzzer found (Tests/fuzz/fuzz-text.sh), replayed with the harness's checks: the
/// first byte is the width, the rest the text.
@Suite("Fuzz findings")
struct FuzzRegressionTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("FuzzFindings")

    @Test("every kept finding: nothing dangerous survives, no line is wider than its width")
    func replay() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).sorted()
        #expect(names.count >= 3)
        for name in names {
            let bytes = [UInt8](try Data(contentsOf: Self.folder.appendingPathComponent(name)))
            guard let first = bytes.first else { continue }
            let width = Int(first % 90)
            let text = String(decoding: bytes.dropFirst(), as: UTF8.self)
            for safe in [UntrustedText.sanitized(text), UntrustedText.sanitized(text, keepNewlines: true)] {
                for character in safe {
                    let scalars = Array(character.unicodeScalars)
                    let isFlag = scalars.count >= 3 && scalars[0].value == 0x1F3F4 && scalars[scalars.count - 1].value == 0xE007F
                    for (index, scalar) in scalars.enumerated() where scalar != "\n" && UntrustedText.needsAttention(scalar) {
                        let joins = scalar.value == 0x200D && index > 0 && index + 1 < scalars.count && scalars[index + 1].properties.isEmoji
                        let flagTag = isFlag && (0xE0020...0xE007F).contains(scalar.value)
                        #expect(joins || flagTag, "\(name): U+\(String(scalar.value, radix: 16)) survived")
                    }
                }
                #expect(DisplayWidth.of(DisplayWidth.truncated(safe, to: width)) <= width, "\(name)")
                if width > 0 {
                    for line in DisplayWidth.wrapped(safe, width: width) {
                        #expect(DisplayWidth.of(line) <= width, "\(name): \(line.debugDescription) at \(width)")
                    }
                }
            }
        }
    }
}
