import Foundation
import ScrollbackModel
import TestSupport
import Testing

/// Images drawn in the reader, in a real tmux, as a person's terminal receives them
/// (`pipe-pane`): kitty's and sixel's bytes wrapped for tmux's passthrough and declaring the
/// image's size in pixels, block art as text on the screen, nothing with `none`; a hostile
/// image says why it cannot be shown.
@Suite("Images in the reader, through tmux")
struct ImageDrawingTests {
    /// A database with one conversation: a question with a 320 × 200 PNG, and an answer with
    /// a broken "PNG" that declares 100,000 × 100,000 pixels and the real PNG cut after 300
    /// bytes (libpng fails on it, saying nothing to the terminal).
    static func database(in runner: BinaryRunner) throws {
        let png = try TestFiles.image("png", width: 320, height: 200, in: runner.folder)
        var broken: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
        broken += [0x00, 0x01, 0x86, 0xA0, 0x00, 0x01, 0x86, 0xA0, 8, 6, 0, 0, 0, 0, 0, 0, 0]
        let conversations = """
            [{"id": "i1", "title": "Plot", "create_time": 1767261600, "update_time": 1767261700, "current_node": "a1",
              "mapping": {
                "u1": {"id": "u1", "parent": null, "children": ["a1"], "message": {"id": "u1", "author": {"role": "user"}, "create_time": 1767261600,
                  "content": {"content_type": "multimodal_text", "parts": [
                    {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-Plot1"}, "What does this show?"]},
                  "metadata": {"attachments": [{"id": "file-Plot1", "name": "plot.png", "mime_type": "image/png"}]}}},
                "a1": {"id": "a1", "parent": "u1", "children": [], "message": {"id": "a1", "author": {"role": "assistant"}, "create_time": 1767261650,
                  "content": {"content_type": "multimodal_text", "parts": [
                    {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-Bad2"},
                    {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-Cut3"}, "A line that rises."]},
                  "metadata": {"attachments": [{"id": "file-Bad2", "name": "huge.png", "mime_type": "image/png"},
                                               {"id": "file-Cut3", "name": "cut.png", "mime_type": "image/png"}]}}}}}]
            """
        let zip = try TestFiles.zip(
            ["conversations.json": Array(conversations.utf8), "file-Plot1-plot.png": png, "file-Bad2-huge.png": broken,
             "file-Cut3-cut.png": Array(png.prefix(300))], in: runner.folder)
        let imported = try runner.run(["import", zip, "--quiet"])
        #expect(imported.status == 0, "\(imported.error)")
    }

    /// Opens the conversation with `SCROLLBACK_IMAGES=kind` inside tmux and returns what the
    /// terminal received from the moment it opened, and the screen.
    static func shown(_ kind: String, runner: BinaryRunner) throws -> (bytes: String, screen: [String], tmux: TmuxSession) {
        let tmux = try TmuxSession(
            width: 100, height: 40, arguments: ["--db", runner.databasePath], environment: ["SCROLLBACK_IMAGES": kind], insideTmux: true)
        _ = try tmux.waitFor(text: "Plot")
        let capture = runner.folder.file("\(kind).bytes")
        try tmux.tmux(["pipe-pane", "-o", "-t", "main", "cat >> '\(capture)'"])
        try tmux.send("Enter")
        // The whole frame: the second message's line too, and the reader's footer.
        let screen = try tmux.waitFor("the reader") { lines in
            lines.contains { $0.contains("▣ plot.png") } && lines.contains { $0.contains("▣ huge.png") } && lines.last?.contains("message") == true
        }
        // The image follows the frame: waited for, up to a few seconds.
        var bytes = ""
        for _ in 0..<50 {
            bytes = String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: capture))) ?? Data(), as: UTF8.self)
            if bytes.contains("cannot be shown: damaged") { break }
            usleep(100_000)
        }
        return (bytes, screen, tmux)
    }

    /// The sequences inside tmux's passthrough wrapping, unwrapped.
    static func unwrapped(_ bytes: String) -> String {
        bytes.replacingOccurrences(of: "\u{1B}Ptmux;", with: "").replacingOccurrences(of: "\u{1B}\u{1B}", with: "\u{1B}")
    }

    /// The fields of kitty's first transmission (`a=T,f=32,s=…,v=…,c=…,r=…`).
    static func kittyFields(_ bytes: String) -> [String: Int] {
        let plain = Self.unwrapped(bytes)
        guard let start = plain.range(of: "\u{1B}_Ga=T") else { return [:] }
        let control = plain[start.lowerBound...].dropFirst(3).prefix { $0 != ";" && $0 != "\u{1B}" }
        var fields: [String: Int] = [:]
        for pair in control.split(separator: ",") {
            let parts = pair.split(separator: "=")
            if parts.count == 2, let value = Int(parts[1]) { fields[String(parts[0])] = value }
        }
        return fields
    }

    @Test("kitty: wrapped for tmux, the image's aspect in the cells kept for it (as many rows as are blank under its line); the broken one says it is too large; a resize deletes and places again")
    func kitty() throws {
        let runner = try BinaryRunner()
        try Self.database(in: runner)
        let (bytes, screen, tmux) = try Self.shown("kitty", runner: runner)
        #expect(bytes.contains("\u{1B}Ptmux;\u{1B}\u{1B}_G"), "wrapped for the passthrough")
        let fields = Self.kittyFields(bytes)
        let width = try #require(fields["s"]), height = try #require(fields["v"]), columns = try #require(fields["c"]), rows = try #require(fields["r"])
        // 320 × 200 is 1.6: the pixels sent keep it, to a row's rounding.
        #expect(abs(Double(width) / Double(height) - 1.6) < 0.1, "\(fields)")
        #expect(width % columns == 0 && height % rows == 0 && columns <= 100, "whole cells: \(fields)")
        #expect(bytes.contains("(cannot be shown: too large)") && bytes.contains("(cannot be shown: damaged or cut short)"), "the broken ones")
        // libpng's own words never reach the terminal (they scrolled the screen).
        #expect(!bytes.contains("libpng") && screen.first?.contains("Plot") == true, "\(screen)")
        // Every kitty sequence goes through tmux's passthrough, the deletes too.
        let wrappedDeletes = bytes.replacingOccurrences(of: "\u{1B}Ptmux;\u{1B}\u{1B}_Ga=d,d=A\u{1B}\u{1B}\\\u{1B}\\", with: "")
        #expect(!wrappedDeletes.contains("\u{1B}_Ga=d"), "a delete not wrapped for tmux")
        // The rows under the line are kept blank for it, then the next message.
        let line = try #require(screen.firstIndex { $0.contains("▣ plot.png") })
        let blank = screen[(line + 1)...].prefix { $0.trimmingCharacters(in: .whitespaces).isEmpty }.count
        #expect(blank == rows + 1 || blank == rows + 2, "\(rows) rows of image, then one blank line: \(screen)")
        #expect(screen[line - 1].contains("What does this show?") && screen[line + blank + 1].contains("assistant"), "\(screen)")
        // A resize: the placement is deleted, the image drawn again.
        let capture = runner.folder.file("kitty.bytes")
        let before = (try? Data(contentsOf: URL(fileURLWithPath: capture)).count) ?? 0
        try tmux.resize(width: 90, height: 40)
        var after = ""
        for _ in 0..<50 {
            let data = (try? Data(contentsOf: URL(fileURLWithPath: capture))) ?? Data()
            after = Self.unwrapped(String(decoding: data.dropFirst(before), as: UTF8.self))
            if after.contains("\u{1B}_Ga=T") { break }
            usleep(100_000)
        }
        #expect(after.contains("\u{1B}_Ga=d,d=A") && after.contains("\u{1B}_Ga=T"), "deleted and placed again")
        // The focus on the next message: the plot, in a message not focused, is a thumbnail
        // in block art (its pixels deleted); back on it, pixels again.
        let moved = (try? Data(contentsOf: URL(fileURLWithPath: capture)).count) ?? 0
        try tmux.send("}")
        let thumbnail = try tmux.waitFor("the plot as block art") { lines in
            guard let at = lines.firstIndex(where: { $0.contains("▣ plot.png") }), at + 2 < lines.count else { return false }
            return !lines[at + 1].trimmingCharacters(in: .whitespaces).isEmpty
        }
        let art = Self.unwrapped(String(decoding: ((try? Data(contentsOf: URL(fileURLWithPath: capture))) ?? Data()).dropFirst(moved), as: UTF8.self))
        #expect(art.contains("\u{1B}_Ga=d,d=A") && !art.contains("\u{1B}_Ga=T"), "no pixels for a message not focused")
        let plotLine = try #require(thumbnail.firstIndex { $0.contains("▣ plot.png") })
        #expect(thumbnail[plotLine + 1].contains { "▀▄█▌▐░▒▓".contains($0) || ("\u{2580}"..."\u{259F}").contains($0) || ("\u{2800}"..."\u{28FF}").contains($0) } || thumbnail[plotLine + 1].count > 10, "\(thumbnail)")
        let back = (try? Data(contentsOf: URL(fileURLWithPath: capture)).count) ?? 0
        try tmux.send("{")
        var again = ""
        for _ in 0..<50 {
            again = Self.unwrapped(String(decoding: ((try? Data(contentsOf: URL(fileURLWithPath: capture))) ?? Data()).dropFirst(back), as: UTF8.self))
            if again.contains("\u{1B}_Ga=T") { break }
            usleep(100_000)
        }
        #expect(again.contains("\u{1B}_Ga=T"), "pixels again for the focused message")
        try tmux.send("q")
        try tmux.send("q")
        #expect(try tmux.waitForExit() == 0)
    }

    @Test("sixel: wrapped for tmux, the raster of 320 × 200 pixels (rounded to sixel rows); none: no image bytes at all")
    func sixel() throws {
        let runner = try BinaryRunner()
        try Self.database(in: runner)
        let (bytes, _, tmux) = try Self.shown("sixel", runner: runner)
        let plain = Self.unwrapped(bytes)
        let start = try #require(plain.range(of: "q\""), "a sixel image with its raster attributes")
        let fields = plain[start.upperBound...].prefix { $0.isNumber || $0 == ";" }.split(separator: ";").compactMap { Int($0) }
        // The raster keeps 320 × 200's aspect, to a row of six pixels.
        #expect(fields.count >= 4 && abs(Double(fields[2]) / Double(max(fields[3], 1)) - 1.6) < 0.15, "\(fields)")
        #expect(bytes.contains("\u{1B}Ptmux;\u{1B}\u{1B}P"))
        try tmux.send("q")
        try tmux.send("q")
        #expect(try tmux.waitForExit() == 0)

        let (none, screen, quiet) = try Self.shown("none", runner: runner)
        #expect(!none.contains("_G") && !none.contains("\u{1B}P") && !none.contains("cannot be shown"))
        let line = try #require(screen.firstIndex { $0.contains("▣ plot.png") })
        #expect(screen[line + 2].contains("assistant"), "no rows kept: \(screen)")
        try quiet.send("q")
        try quiet.send("q")
        #expect(try quiet.waitForExit() == 0)
    }

    @Test("symbols: block art on the screen itself, in the rows kept for it, not wrapped")
    func symbols() throws {
        let runner = try BinaryRunner()
        try Self.database(in: runner)
        let (bytes, _, tmux) = try Self.shown("symbols", runner: runner)
        #expect(!bytes.contains("\u{1B}Ptmux;"))
        let screen = try tmux.waitFor("block art") { lines in
            guard let line = lines.firstIndex(where: { $0.contains("▣ plot.png") }), line + 3 < lines.count else { return false }
            return !lines[line + 2].trimmingCharacters(in: .whitespaces).isEmpty
        }
        let line = try #require(screen.firstIndex { $0.contains("▣ plot.png") })
        #expect(screen[line + 1].trimmingCharacters(in: .whitespaces).count > 10 && !screen[line + 1].contains("assistant"), "\(screen)")
        // Each row of the art starts at the first column (no staircase), and the next
        // message's header is whole.
        let art = screen[(line + 1)...].prefix { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        #expect(art.count >= 2 && art.allSatisfy { $0.first.map { $0 != " " } == true }, "\(screen)")
        #expect(screen.contains { $0.hasPrefix("assistant · 2026-01-01 10:00") }, "\(screen)")
        try tmux.send("q")
        try tmux.send("q")
        #expect(try tmux.waitForExit() == 0)
    }

    @Test("a terminal's answer that comes late (kitty's, the device attributes, the cell size) is no key: nothing moves, nothing is said")
    func lateAnswers() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["demo", "--count", "50"]).status == 0)
        let tmux = try TmuxSession(width: 100, height: 30, arguments: ["--db", runner.databasePath], environment: ["SCROLLBACK_IMAGES": "none"])
        let before = try tmux.waitFor(text: "1 of 50")
        for answer in ["1b 5f 47 69 3d 33 31 3b 4f 4b 1b 5c", "1b 5b 3f 36 32 3b 34 3b 32 32 63", "1b 5b 36 3b 32 30 3b 31 30 74"] {
            _ = try tmux.tmux(["send-keys", "-t", "main", "-H"] + answer.split(separator: " ").map(String.init))
        }
        // A key after them, to know they were read: j moves one row.
        try tmux.send("j")
        let after = try tmux.waitFor(text: "2 of 50")
        #expect(!after.joined().contains("does nothing"), "\(after)")
        #expect(before.count == after.count)
        try tmux.send("q")
        #expect(try tmux.waitForExit() == 0)
    }
}
