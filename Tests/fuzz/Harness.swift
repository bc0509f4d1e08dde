// libFuzzer entry points for the importers' readers: built by fuzz.sh with one of
// FUZZ_CHATGPT, FUZZ_CLAUDE, FUZZ_JSONL, FUZZ_ZIP, FUZZ_DATE defined. Any input may be
// rejected (errors are fine); a trap, crash or sanitizer report is the finding.
import Foundation

/// The input, written to a file of this process, for the readers, which read a file.
private func file(with bytes: UnsafeRawBufferPointer) -> String {
    let path = "/tmp/scrollback-fuzz-\(getpid()).input"
    let data = Data(bytes)
    _ = FileManager.default.createFile(atPath: path, contents: data)
    return path
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    FuzzTarget.run(bytes)
    return 0
}

enum FuzzTarget {
    static func run(_ bytes: UnsafeRawBufferPointer) {
        #if FUZZ_CHATGPT
        guard var reader = try? JSONArrayReader(path: file(with: bytes)) else { return }
        while let range = try? reader.nextRange() {
            _ = try? reader.withScanner { scanner throws(SkipReason) in try ChatGPTExport.conversation(in: range, of: scanner) }
        }
        #elseif FUZZ_CLAUDE
        guard var reader = try? JSONArrayReader(path: file(with: bytes)) else { return }
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
        #elseif FUZZ_JSONL
        try? JSONLines.forEachLine(path: file(with: bytes)) { line, _, _, _ in
            guard let line, let record = try? JSONDecoder().decode(ScrollbackRecord.self, from: line) else { return }
            _ = record.imported()
        }
        #elseif FUZZ_ZIP
        guard let archive = try? ZipArchive(path: file(with: bytes)) else { return }
        for entry in archive.entries.prefix(4) {
            guard let scratch = try? ScratchFile() else { return }
            try? archive.extract(entry, to: scratch, limit: UnzipLimit(bytes: 1 << 22), shouldStop: { false })
        }
        #elseif FUZZ_DATE
        let text = String(decoding: bytes, as: UTF8.self)
        _ = ImportTime.iso8601(text)
        _ = try? ImportTime.iso8601(text, field: "t")
        if bytes.count >= 8 {
            _ = try? ImportTime.seconds(Double(bitPattern: bytes.loadUnaligned(as: UInt64.self)), field: "t")
        }
        _ = try? ImportTime.seconds(Double(text), field: "t")
        _ = try? ImportTime.seconds(Double(text), field: "t")
        #endif
    }
}
