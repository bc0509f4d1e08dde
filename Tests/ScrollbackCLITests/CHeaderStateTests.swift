import Foundation
import Testing

/// A C header imported into Swift must hold no mutable state: a `static` variable there is
/// one per Swift module that uses it, and an optimized build that inlines across modules
/// then writes one copy and reads another. The browser's signal record lived in
/// CNcursesw's shim that way, and the release build ignored SIGTERM, SIGINT and SIGHUP
/// (the debug build, which the other tests run, did not show it).
@Suite("C headers")
struct CHeaderStateTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    @Test("no header under Sources declares a variable (constants aside)")
    func noStateInHeaders() throws {
        let files = FileManager.default.enumerator(at: Self.sources, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "h" } ?? []
        #expect(files.count >= 4)
        for file in files {
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
            for (number, line) in lines.enumerated() {
                let text = line.trimmingCharacters(in: .whitespaces)
                // A file-scope variable: `static` (or a plain declaration with `=`) that is
                // neither a function nor a constant.
                let isStatic = text.hasPrefix("static ") && !text.contains("(") && !text.contains(" const ")
                #expect(!isStatic, "\(file.lastPathComponent):\(number + 1): \(text)")
            }
        }
    }
}
