import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackImport
@testable import ScrollbackStorage
import TestSupport

/// JSON Lines files and ZIP archives are read, never memory-mapped (as `ChangingFileTests`
/// for ChatGPT and Claude exports): one that another program shortens while it is read made
/// `import` die of SIGBUS. Now it is a clear error and the database keeps nothing of it; lines
/// that cross the reader's chunks, or are longer than one, come out whole.
@Suite("Import: JSON Lines and ZIP files that change or are large")
struct ChangingLinesAndZipTests {
    /// A scrollback JSON Lines record (no newline) of one user message.
    static func line(_ index: Int, content: String) -> String {
        let time = "2026-01-01T00:00:00.000Z"
        let record: [String: Any] = [
            "format": "scrollback", "version": 1, "id": "conversation-\(index)", "title": "t\(index)", "source": "local",
            "createdAt": time, "updatedAt": time, "pinned": false,
            "messages": [["id": "m\(index)", "role": "user", "content": content, "createdAt": time]],
        ]
        let data = (try? JSONSerialization.data(withJSONObject: record, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// Each conversation's title and its messages' content, by title.
    static func contents(_ store: Store) throws -> [String: String] {
        let rows = try store.database.query(
            "SELECT c.title, group_concat(m.content, '|') FROM conversation c JOIN message m ON m.conversation_id = c.id GROUP BY c.id"
        ) { ($0.text(0), $0.text(1)) }
        return Dictionary(rows, uniquingKeysWith: { first, _ in first })
    }

    @Test("a JSON Lines file shortened while it is read: a clear error, no crash, nothing of it stored")
    func linesShortenedWhileRead() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("backup.jsonl")
        // About 3 MiB: the reader has read only its first chunk when the file is cut.
        let lines = (0..<1_000).map { Self.line($0, content: "message \($0) " + String(repeating: "x", count: 3_000)) }
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: false, encoding: .utf8)
        let store = try Store.open(path: folder.file("s.sqlite"))
        let summary = ChangingFileTests.importing(path, into: store) { _ = truncate(path, 5_000) }
        #expect(summary.inserted == 0)
        #expect(summary.failed.count == 1)
        let problem = try #require(summary.failed.first?.description)
        #expect(problem.hasPrefix("\(path): the file became shorter while it was read ("), "\(problem)")
        #expect(problem.hasSuffix("nothing of it was imported, import it again when it is complete"), "\(problem)")
        #expect(try store.conversations.count() == 0)
        #expect(try store.database.scalarInt("SELECT count(*) FROM message") == 0)
    }

    @Test("JSON Lines across chunk boundaries, one longer than a chunk, CRLF, blank lines and no last newline are read exactly")
    func linesAcrossChunks() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("backup.jsonl")
        var random = SeededRandom(seed: 7)
        var expected: [String: String] = [:]
        var file: [UInt8] = []
        // The chunk boundaries a line was made to end at.
        var aligned: [Int] = []
        for index in 0..<1_500 {
            // Lengths spread so that lines end on both sides of each 1 MiB boundary; one line
            // of 3 MiB, several chunks long.
            var content = index == 1_200 ? String(repeating: "long ", count: 600_000) : "m\(index) " + String(repeating: "é", count: random.below(2_000))
            var ending = ["\r\n", "\n\n", "\n \t\r\n", "\n", "\n"][index % 5]
            // Near a chunk boundary, a line of x's ends exactly at it: its newline the last
            // byte of a chunk, or the first of the next, or CR and LF on either side.
            let boundary = (file.count / FileReader.chunk + 1) * FileReader.chunk
            let room = boundary - file.count - Self.line(index, content: "").utf8.count
            if room >= 1 && room < 6_000 {
                let kind = aligned.count % 3
                content = String(repeating: "x", count: kind == 1 ? room : room - 1)
                ending = kind == 2 ? "\r\n" : "\n"
                aligned.append(boundary)
            }
            expected["t\(index)"] = content
            file += Array((Self.line(index, content: content) + ending).utf8)
        }
        #expect(aligned.count >= 3)
        for boundary in aligned {
            #expect(file[boundary - 1] == 0x0A || file[boundary] == 0x0A)
        }
        // A line that is not UTF-8, and a last line without a newline.
        var bytes = Data(file) + Data([0x7B, 0xFF, 0xFE, 0x7D, 0x0A])
        let last = Self.line(1_500, content: "the last line")
        expected["t1500"] = "the last line"
        bytes += Data(last.utf8)
        try bytes.write(to: URL(fileURLWithPath: path))
        #expect(bytes.count > 5 << 20)

        // Lines, numbers and bytes done are what splitting the whole file at each newline gives.
        var oracle: [(line: Data?, number: Int, done: Int)] = []
        var start = 0
        var number = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            number += 1
            let line = bytes[start..<end]
            if !line.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) {
                oracle.append((String(data: line, encoding: .utf8) != nil ? Data(line) : nil, number, end))
            }
            start = end + 1
        }
        var seen: [(line: Data?, number: Int, done: Int)] = []
        try JSONLines.forEachLine(path: path) { line, number, done, total in
            #expect(total == bytes.count)
            seen.append((line, number, done))
        }
        #expect(seen.count == oracle.count)
        let different = (0..<min(seen.count, oracle.count)).first {
            seen[$0].line != oracle[$0].line || seen[$0].number != oracle[$0].number || seen[$0].done != oracle[$0].done
        }
        #expect(different == nil, "from line \(different.map { oracle[$0].number } ?? 0) on")

        let store = try Store.open(path: folder.file("s.sqlite"))
        let summary = Importer(store: store).run(paths: [path], format: nil)
        #expect(summary.failed.isEmpty, "\(summary.failed)")
        #expect(summary.inserted == 1_501)
        #expect(summary.skipped.map { "\($0.record): \($0.reason)" } == ["line \(number - 1): not UTF-8 text"])
        #expect(try Self.contents(store) == expected)
    }

    /// A ChatGPT export of random letters that packs to about 60% of its size: its compressed
    /// data is several chunks long. Made once for the tests that use it.
    static let randomExport: (content: Data, texts: [String: String]) = {
        var random = SeededRandom(seed: 11)
        let letters = Array("abcdefghijklmnopqrstuvwxyz ".utf8)
        var texts: [String: String] = [:]
        let export = ChangingFileTests.export(300) { index in
            let text = String(decoding: (0..<10_000).map { _ in letters[random.below(letters.count)] }, as: UTF8.self)
            texts["t\(index)"] = text
            return text
        }
        return (Data(export.utf8), texts)
    }()

    @Test("a ZIP export, stored or deflated, is read in chunks: several chunks import exactly", arguments: [0, 8])
    func zipInChunks(method: Int) throws {
        let folder = try TemporaryDirectory()
        let (content, texts) = Self.randomExport
        let path = try ZipBombTests.archive(content: content, method: method, in: folder)
        let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        #expect(size > 3 * ZipArchive.chunkSize / 2)
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [path], format: nil)
        #expect(summary.failed.isEmpty, "\(summary.failed)")
        #expect(summary.inserted == 300)
        #expect(try Self.contents(store) == texts)
    }

    /// `progress` is not called while an archive is inflated (before any of it is imported);
    /// `shouldStop` is, between chunks.
    @Test("a ZIP export shortened while it is inflated: a clear error, no crash, nothing of it stored", arguments: [0, 8])
    func zipShortenedWhileRead(method: Int) throws {
        let folder = try TemporaryDirectory()
        let path = try ZipBombTests.archive(content: Self.randomExport.content, method: method, in: folder)
        let store = try Store.open(path: folder.file("s.sqlite"))
        var cut = false
        let summary = Importer(store: store).run(paths: [path], format: nil, shouldStop: {
            if !cut {
                cut = true
                _ = truncate(path, 5_000)
            }
            return false
        })
        #expect(cut)
        #expect(summary.inserted == 0 && !summary.interrupted)
        #expect(summary.failed.count == 1)
        let problem = try #require(summary.failed.first?.description)
        #expect(problem.hasPrefix("\(path): the file became shorter while it was read ("), "\(problem)")
        #expect(problem.hasSuffix(", now 5000): another program changed it; nothing of it was imported, import it again when it is complete"))
        #expect(try store.conversations.count() == 0)
    }
}
