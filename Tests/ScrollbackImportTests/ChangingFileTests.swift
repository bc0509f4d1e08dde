import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackImport
@testable import ScrollbackStorage
import TestSupport

/// An export is read, never memory-mapped: one that another program shortens while it is
/// read (a download being redone) made `import` die of SIGBUS. Now it is a clear error, the
/// database keeps nothing of that file, and records that cross the reader's chunks come out
/// whole.
@Suite("Import: files that change or are large")
struct ChangingFileTests {
    /// A ChatGPT export of `count` conversations whose single message is `text(index)`.
    static func export(_ count: Int, text: (Int) -> String) -> String {
        let records = (0..<count).map { index in
            """
            {"id":"c\(index)","title":"t\(index)","create_time":1700000000,"update_time":null,"current_node":"a",
             "mapping":{"a":{"id":"a","parent":null,"children":[],"message":{"id":"a","author":{"role":"user"},
             "content":{"content_type":"text","parts":["\(text(index))"]},"create_time":1700000000}}}}
            """
        }
        return "[" + records.joined(separator: ",\n") + "]"
    }

    /// Imports `path` into `store`, doing `change` to the file once, when the first records
    /// are in (at the first progress report).
    static func importing(_ path: String, into store: Store, changing change: () -> Void) -> ImportSummary {
        var changed = false
        let summary = withoutActuallyEscaping(change) { change in
            Importer(store: store).run(paths: [path], format: nil) { _ in
                if !changed {
                    changed = true
                    change()
                }
            }
        }
        #expect(changed)
        return summary
    }

    @Test("a file shortened while it is read: a clear error, no crash, nothing of it stored")
    func shortenedWhileRead() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("conversations.json")
        // About 3 MiB: the reader has read only its first chunk when the file is cut.
        try Self.export(1_000) { "message \($0) " + String(repeating: "x", count: 3_000) }
            .write(toFile: path, atomically: false, encoding: .utf8)
        let store = try Store.open(path: folder.file("s.sqlite"))
        let summary = Self.importing(path, into: store) { _ = truncate(path, 5_000) }
        #expect(summary.inserted == 0)
        #expect(summary.failed.count == 1)
        #expect(summary.failed.first?.problem.contains("became shorter while it was read") == true)
        #expect(try store.conversations.count() == 0)
    }

    @Test("a file written again in place while it is read (same size): a clear error, nothing of it stored", arguments: ["json", "jsonl"])
    func rewrittenInPlace(format: String) throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("conversations.\(format)")
        let text: String
        if format == "json" {
            text = Self.export(1_000) { "message \($0) " + String(repeating: "o", count: 3_000) }
        } else {
            text = (0..<1_000).map { index in
                #"{"format":"scrollback","version":1,"id":"c\#(index)","title":"t","source":"local","createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z","pinned":false,"messages":[{"id":"m\#(index)","role":"user","content":"\#(String(repeating: "o", count: 3_000))","createdAt":"2026-01-01T00:00:00.000Z"}]}"#
            }.joined(separator: "\n")
        }
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        let store = try Store.open(path: folder.file("s.sqlite"))
        let summary = Self.importing(path, into: store) {
            // `o` becomes `N` near the end, in place: the size stays, the content changes.
            let descriptor = open(path, O_WRONLY)
            defer { close(descriptor) }
            _ = "NNNN".withCString { pwrite(descriptor, $0, 4, off_t(text.utf8.count - 10_000)) }
        }
        #expect(summary.inserted == 0)
        #expect(summary.failed.first?.problem.contains("changed while it was read") == true, "\(summary.failed)")
        #expect(try store.conversations.count() == 0)
    }

    @Test("records across chunk boundaries and one larger than a chunk are read whole")
    func acrossChunks() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("conversations.json")
        func text(_ index: Int) -> String {
            index == 7 ? String(repeating: "long ", count: 600_000) : "message \(index) " + String(repeating: "é", count: index % 700)
        }
        // Wrapped in an object whose first member is larger than a chunk.
        let body = "{\"note\":\"" + String(repeating: "n", count: 1_500_000) + "\",\"conversations\":" + Self.export(3_000, text: text) + "}"
        try body.write(toFile: path, atomically: false, encoding: .utf8)
        let store = try Store.open(path: folder.file("s.sqlite"))
        let summary = Importer(store: store).run(paths: [path], format: nil)
        #expect(summary.failed.isEmpty)
        #expect(summary.skipped.isEmpty)
        #expect(summary.inserted == 3_000)
        var reader = try JSONArrayReader(path: path)
        var index = 0
        while let range = try reader.nextRange() {
            let conversation = try reader.withScanner { scanner throws(SkipReason) in try ChatGPTExport.conversation(in: range, of: scanner) }
            #expect(conversation.messages.map(\.content) == [text(index)])
            index += 1
        }
        #expect(index == 3_000)
    }

    @Test("gigabytes of spaces are skipped without being kept: memory is a chunk or two")
    func longWhitespace() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("conversations.json")
        let record = String(Self.export(1) { "message \($0)" }.dropFirst().dropLast())
        // 40 MiB of blanks before the array, between its records and after it.
        let blanks = String(repeating: " \n\t", count: 14_000_000)
        let text = blanks + "[" + blanks + record + blanks + "," + blanks + record.replacingOccurrences(of: "c0", with: "c1") + blanks + "]" + blanks
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        var reader = try JSONArrayReader(path: path)
        var count = 0
        var largest = reader.buffered
        while let range = try reader.nextRange() {
            _ = try reader.withScanner { scanner throws(SkipReason) in try ChatGPTExport.conversation(in: range, of: scanner) }
            largest = max(largest, reader.buffered)
            count += 1
        }
        largest = max(largest, reader.buffered)
        #expect(count == 2)
        #expect(largest <= 2 * FileReader.chunk)
        let store = try Store.open(path: folder.file("s.sqlite"))
        #expect(Importer(store: store).run(paths: [path], format: nil).inserted == 2)
    }

    @Test("a file without line breaks is not read whole to find its format")
    func noLineBreaks() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("blob.txt")
        try String(repeating: "x", count: 3 << 20).write(toFile: path, atomically: false, encoding: .utf8)
        #expect(throws: ImportError(
            path: path, problem: "not a chat export, or a JSON Lines backup whose first line is over 1 MiB (then import it with --format jsonl)")
        ) { try Importer.detect(path, longestLine: 1 << 20) }
    }

    @Test("a bad record's byte position is its place in the file, past the first chunk")
    func positionsAreFileOffsets() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("conversations.json")
        let good = Self.export(600) { "message \($0) " + String(repeating: "y", count: 2_000) }
        let broken = ",{\"id\":\"bad\",\"mapping\":{\"a\":{\"message\":{\"x\":\"\\ud800\"} ,]}}]"
        let text = String(good.dropLast()) + broken
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        let offset = Array(text.utf8).count - Array(broken.utf8).count
        #expect(offset > 1 << 20)
        let store = try Store.open(path: folder.file("s.sqlite"))
        let summary = Importer(store: store).run(paths: [path], format: nil)
        #expect(summary.inserted == 600)
        let reason = try #require(summary.skipped.first?.reason)
        // The byte named is inside the broken record, which starts after `offset`.
        let named = try #require(Int(reason.split(separator: "byte ").last?.prefix { $0.isNumber } ?? ""))
        #expect(named > offset && named <= Array(text.utf8).count)
    }
}
