import Foundation
@testable import ScrollbackExport
import Testing

@testable import ScrollbackImport
import ScrollbackModel
import TestSupport

/// Replays the inputs kept by `Tests/fuzz/fuzz.sh` (crashes found, under `regressions/`) and
/// its seeds through the same readers as the fuzz harness: each must end in a result or an
/// error, never a trap.
@Suite("Import: fuzz regressions")
struct FuzzRegressionTests {
    static let fuzz = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fuzz").path

    static func inputs(_ target: String) -> [String] {
        ["regressions", "seeds"].flatMap { folder -> [String] in
            let path = "\(fuzz)/\(folder)/\(target)"
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            return names.sorted().map { "\(path)/\($0)" }
        }
    }

    /// A parameterized test over no inputs runs nothing and passes: a seed folder gone or
    /// emptied (a bad checkout, a rename) must fail here instead.
    @Test("every reader has inputs to replay", arguments: ["chatgpt", "claude", "jsonl", "zip", "date"])
    func inputsExist(target: String) {
        #expect(!Self.inputs(target).isEmpty, "no seeds nor regressions for \(target) under \(Self.fuzz)")
    }

    @Test("ChatGPT reader", arguments: inputs("chatgpt"))
    func chatgpt(path: String) throws {
        guard var reader = try? JSONArrayReader(path: path) else { return }
        while let range = try? reader.nextRange() {
            _ = try? reader.withScanner { scanner throws(SkipReason) in try ChatGPTExport.conversation(in: range, of: scanner) }
        }
    }

    @Test("Claude reader", arguments: inputs("claude"))
    func claude(path: String) throws {
        guard var reader = try? JSONArrayReader(path: path) else { return }
        while true {
            do {
                guard let value = try reader.next() else { return }
                _ = try? ClaudeExport.conversation(from: value)
            } catch is SkipReason {
                continue
            } catch {
                return
            }
        }
    }

    @Test("JSON Lines reader", arguments: inputs("jsonl"))
    func jsonLines(path: String) throws {
        try? JSONLines.forEachLine(path: path) { line, _, _, _ in
            guard let line, let record = try? JSONDecoder().decode(ScrollbackRecord.self, from: line) else { return }
            _ = record.imported()
        }
    }

    @Test("ZIP reader", arguments: inputs("zip"))
    func zip(path: String) throws {
        guard let archive = try? ZipArchive(path: path) else { return }
        for entry in archive.entries.prefix(4) {
            let scratch = try ScratchFile()
            try? archive.extract(entry, to: scratch, limit: UnzipLimit(bytes: 1 << 22), shouldStop: { false })
        }
    }

    @Test("date parser", arguments: inputs("date"))
    func date(path: String) throws {
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
        _ = ImportTime.iso8601(text)
        _ = try? ImportTime.seconds(Double(text), field: "t")
    }
}
