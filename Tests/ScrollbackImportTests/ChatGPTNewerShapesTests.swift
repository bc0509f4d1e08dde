import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackImport
@testable import ScrollbackStorage
import TerminalText
import TestSupport

/// Newer ChatGPT shapes. Citation markers (private-use characters ChatGPT draws as source chips) become
/// `[1]`-style references with the sources listed under the answer; never raw.
@Suite("Import: newer ChatGPT shapes: citation markers, voice")
struct ChatGPTNewerShapesTests {
    static let open = "\u{E200}", separator = "\u{E202}", close = "\u{E201}"

    static func marker(_ kind: String, _ arguments: String...) -> String {
        open + kind + arguments.map { separator + $0 }.joined() + close
    }

    /// A one-answer export: `answer` with `references` as its metadata's content_references.
    static func export(answer: String, references: String, citations: String = "[]", in folder: TemporaryDirectory) throws -> String {
        let path = folder.file("conversations.json")
        func quoted(_ text: String) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: [text]), as: UTF8.self).dropFirst().dropLast().description
        }
        let record = """
            [{"id":"cite-1","title":"Sources","create_time":1750000000,"current_node":"a","mapping":{
              "u":{"id":"u","parent":null,"children":["a"],"message":{"id":"u","author":{"role":"user"},"create_time":1750000001,
                   "content":{"content_type":"text","parts":["what happened?"]}}},
              "a":{"id":"a","parent":"u","children":[],"message":{"id":"a","author":{"role":"assistant"},"recipient":"all",
                   "create_time":1750000002,"content":{"content_type":"text","parts":[\(try quoted(answer))]},
                   "metadata":{"content_references":\(references),"citations":\(citations)}}}}}]
            """
        try record.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    static func answer(_ store: Store) throws -> String {
        let conversation = try #require(try store.conversations.page(sort: .created, at: .first, limit: 1).items.first)
        return try #require(try store.messages.page(conversationID: conversation.id, at: .first, limit: 5).items.last?.content)
    }

    @Test("web, file and entity markers: numbered by first citation, a source listed once, an entity as its word, hidden ones gone")
    func resolved() throws {
        let folder = try TemporaryDirectory()
        let one = Self.marker("cite", "turn0search0"), two = Self.marker("cite", "turn0search0", "turn0search4")
        let file = Self.marker("filecite", "turn6file0", "L8-L13"), entity = Self.marker("entity", "[\"software\",\"uv\",0]")
        let hidden = Self.marker("cite", "turn9search9"), unnamed = Self.marker("navlist", "x")
        let answer = "Prices rose \(one). Both agree \(two). Your notes say so \(file). Use \(entity) here.\(hidden) End \(unnamed)."
        func reference(_ matched: String, _ rest: String) throws -> String {
            let quoted = String(decoding: try JSONSerialization.data(withJSONObject: [matched]), as: UTF8.self).dropFirst().dropLast()
            return "{\"matched_text\":\(quoted),\(rest)}"
        }
        let references = "[" + [
            try reference(two, #""type":"grouped_webpages","items":[{"title":"Reuters","url":"https://example.com/r"},{"title":"AP","url":"https://example.com/ap"}],"alt":"([Reuters](https://example.com/r))""#),
            try reference(one, #""type":"grouped_webpages","items":[{"title":"Reuters","url":"https://example.com/r"}]"#),
            try reference(file, #""type":"file","name":"notes.pdf","id":"file_1","source":"my_files""#),
            try reference(entity, #""type":"entity","alt":"uv""#),
            try reference(hidden, #""type":"hidden""#),
        ].joined(separator: ",") + "]"
        let store = try Store.open(path: folder.file("s.sqlite"))
        let summary = Importer(store: store).run(paths: [try Self.export(answer: answer, references: references, in: folder)], format: nil)
        #expect(summary.inserted == 1, "\(summary.failed) \(summary.skipped)")
        let stored = try Self.answer(store)
        #expect(stored == """
            Prices rose [1]. Both agree [1][2]. Your notes say so [3]. Use uv here. End .

            Sources:
            [1] Reuters — https://example.com/r
            [2] AP — https://example.com/ap
            [3] notes.pdf
            """, "\(stored.debugDescription)")
        #expect(!stored.unicodeScalars.contains { (0xE200...0xE2FF).contains($0.value) })
        // Found by search as the words it has.
        #expect(try store.search.search("Reuters", after: nil, limit: 5).items.count == 1)
    }

    @Test("an entity marker nothing names still shows its word; stray characters of the marker block are dropped, not drawn as boxes")
    func unnamedEntity() {
        let paris = Self.marker("entity", "[\"city\",\"Paris\",\"capital of France\"]")
        #expect(ChatGPTCitations.resolve("Visit \(paris) now.", references: []) == "Visit Paris now.")
        // A word with line breaks stays on its line; an argument that is no list names nothing.
        let broken = Self.marker("entity", "[\"x\",\"two\\nlines\"]"), garbage = Self.marker("entity", "not json")
        #expect(ChatGPTCitations.resolve("a \(broken) b \(garbage) c", references: []) == "a two lines b  c")
        #expect(ChatGPTCitations.resolve("odd \u{E205}\u{E2FF}\u{E203} end \u{F8FF}", references: []) == "odd  end \u{F8FF}")
    }

    @Test("older bracketed citations (2023-2025): named where they stand by metadata.citations or by their text; unnamed, misplaced or damaged ones stay as text")
    func bracketed() throws {
        let folder = try TemporaryDirectory()
        // Indices count Unicode scalars (the exporter's Python): an emoji before the first
        // marker counts once, not as two UTF-16 units.
        let answer = "😀 Rates rose【13†source】. Again【13†source】 and in your file【4:0†notes.pdf】, lines【31†L27-L35】. Typed: 【1†x】 and 【a†b】."
        let scalars = Array(answer.unicodeScalars)
        func at(_ marker: String, after: Int = 0) -> (Int, Int) {
            let needle = Array(marker.unicodeScalars)
            let start = (after...(scalars.count - needle.count)).first { Array(scalars[$0..<($0 + needle.count)]) == needle } ?? -1
            return (start, start + needle.count)
        }
        let first = at("【13†source】"), second = at("【13†source】", after: first.1), file = at("【4:0†notes.pdf】")
        let citations = """
            [{"start_ix":\(first.0),"end_ix":\(first.1),"citation_format_type":"tether_og",
              "metadata":{"type":"webpage","title":"Reuters","url":"https://example.com/r","text":"…","extra":{"cited_message_idx":3}}},
             {"start_ix":\(second.0),"end_ix":\(second.1),"citation_format_type":"tether_og",
              "metadata":{"type":"webpage","title":"Reuters","url":"https://example.com/r"}},
             {"start_ix":\(file.0),"end_ix":\(file.1),"citation_format_type":"berry_file_search",
              "metadata":{"type":"file","name":"notes.pdf","id":"file-1","text":""}},
             {"start_ix":1,"end_ix":4,"metadata":{"title":"misplaced: not a marker there"}},
             {"start_ix":-5,"end_ix":1e300,"metadata":{"title":"out of range"}},
             {"start_ix":2.5,"end_ix":9,"metadata":{"title":"not whole"}},
             {"start_ix":"7","metadata":{"title":"not numbers"}}, 7, null]
            """
        let references = """
            [{"matched_text":"【31†L27-L35】","type":"file","name":"report.md"}]
            """
        let summary = Importer(store: try Store.open(path: folder.file("s.sqlite"))).run(
            paths: [try Self.export(answer: answer, references: references, citations: citations, in: folder)], format: nil)
        #expect(summary.inserted == 1, "\(summary.failed) \(summary.skipped)")
        let stored = try Self.answer(try Store.open(path: folder.file("s.sqlite")))
        #expect(stored == """
            😀 Rates rose[1]. Again[1] and in your file[2], lines[3]. Typed: 【1†x】 and 【a†b】.

            Sources:
            [1] Reuters — https://example.com/r
            [2] notes.pdf
            [3] report.md
            """, "\(stored.debugDescription)")
        // Without any metadata the text is as it was.
        #expect(ChatGPTCitations.resolve(answer, references: [], citations: []) == answer)
        // A bracket never closed, one across a line break, one very long: text.
        let odd = "a【13†source b【2†x\ny】 c【3†\(String(repeating: "n", count: 150))】"
        #expect(ChatGPTCitations.resolve(odd, references: [["matched_text": "【13†source", "name": "x", "type": "file"]]) == odd)
    }

    @Test("markers without references, a marker cut short, stray marker characters: taken out, the words kept; other private-use text kept")
    func unnamed() {
        // A marker cut short (no end) loses only its marker characters; a line break ends a marker.
        let text = "a \(Self.marker("cite", "turn0search0")) b \u{E200}cite\u{E202}x c \u{E203}d \u{F8FF}"
        #expect(ChatGPTCitations.resolve(text, references: []) == "a  b citex c d \u{F8FF}")
        #expect(ChatGPTCitations.resolve("one \u{E200}cite\ntwo\u{E201} three", references: []) == "one cite\ntwo three")
        #expect(ChatGPTCitations.resolve("plain \u{F8FF} text", references: [["matched_text": "plain"]]) == "plain \u{F8FF} text")
    }

    @Test("hostile references: controls in titles stay data and are made safe on a terminal; thousands of references stay a linear pass")
    func hostile() throws {
        let one = Self.marker("cite", "turn0search0")
        let evil: [Any] = [["matched_text": one, "type": "grouped_webpages", "items": [["title": "evil \u{1B}]0;owned\u{07}\ntitle", "url": "javascript:\u{1B}[31m"]]]]
        let resolved = ChatGPTCitations.resolve("see \(one)", references: evil)
        #expect(resolved.hasPrefix("see [1]\n\nSources:\n[1] evil \u{1B}]0;owned\u{07} title — javascript:"), "\(resolved.debugDescription)")
        #expect(!UntrustedText.sanitized(resolved, keepNewlines: true).unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 })
        // 50,000 references and 3,000 markers: one pass; past the first 10,000 references none is read.
        let many: [Any] = (0..<50_000).map { ["matched_text": Self.marker("cite", "turn\($0)search0"), "type": "grouped_webpages", "items": [["url": "https://e/\($0)"]]] }
        let answer = ((0..<3_000).map { $0 } + [49_999]).map { "w \(Self.marker("cite", "turn\($0)search0"))" }.joined(separator: " ")
        let out = ChatGPTCitations.resolve(answer, references: many)
        #expect(out.contains("[3000] https://e/2999") && !out.contains("[3001]") && !out.unicodeScalars.contains { (0xE200...0xE204).contains($0.value) })
    }

    @Test("a database that stored the raw markers (an earlier version) gets the references at the next import of the same export, once")
    func reimport() throws {
        let folder = try TemporaryDirectory()
        let one = Self.marker("cite", "turn0search0")
        let raw = "Prices rose \(one)."
        let quoted = String(decoding: try JSONSerialization.data(withJSONObject: [one]), as: UTF8.self).dropFirst().dropLast()
        let references = "[{\"matched_text\":\(quoted),\"type\":\"grouped_webpages\",\"items\":[{\"title\":\"Reuters\",\"url\":\"https://example.com/r\"}]}]"
        let path = try Self.export(answer: raw, references: references, in: folder)
        let store = try Store.open(path: folder.file("s.sqlite"))
        #expect(Importer(store: store).run(paths: [path], format: nil).inserted == 1)
        // As the earlier version stored it.
        try store.database.run("UPDATE message SET content = ? WHERE role = 'assistant'", [.text(raw)])
        let again = Importer(store: store).run(paths: [path], format: nil)
        #expect(again.failed.isEmpty)
        #expect(try Self.answer(store) == "Prices rose [1].\n\nSources:\n[1] Reuters — https://example.com/r")
        #expect(try store.conversations.count() == 1)
        let conversation = try #require(try store.conversations.page(sort: .created, at: .first, limit: 1).items.first)
        #expect(conversation.messageCount == 2)
        #expect(try store.check().isHealthy)
    }

    @Test("voice mode: the transcript is the message; the recordings and images are attachments, no placeholders")
    func voice() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("conversations.json")
        let said = #"{"content_type":"audio_transcription","text":"What's a good local model?","direction":"in"}"#
        let audio = #"{"content_type":"real_time_user_audio_video_asset_pointer","audio_asset_pointer":{"content_type":"audio_asset_pointer","asset_pointer":"sediment://file_1","format":"wav"},"frames_asset_pointers":[]}"#
        let answerAudio = #"{"content_type":"audio_asset_pointer","asset_pointer":"sediment://file_2","format":"wav"}"#
        let image = #"{"content_type":"image_asset_pointer","asset_pointer":"sediment://file_3"}"#
        func node(_ id: String, _ parent: String?, _ child: String?, _ role: String, _ parts: String, _ time: Int) -> String {
            "\"\(id)\":{\"id\":\"\(id)\",\"parent\":\(parent.map { "\"\($0)\"" } ?? "null"),\"children\":[\(child.map { "\"\($0)\"" } ?? "")],"
                + "\"message\":{\"id\":\"\(id)\",\"author\":{\"role\":\"\(role)\"},\"create_time\":\(time),\"content\":{\"content_type\":\"multimodal_text\",\"parts\":[\(parts)]}}}"
        }
        let nodes = [
            node("u", nil, "a", "user", "\(said),\(audio)", 1_750_000_001),
            node("a", "u", "v", "assistant", #"{"content_type":"audio_transcription","text":"Try a small one.","direction":"out"},"# + answerAudio, 1_750_000_002),
            node("v", "a", nil, "user", "\(audio),\(image)", 1_750_000_003),
        ]
        try "[{\"id\":\"voice\",\"title\":\"Voice\",\"create_time\":1750000000,\"current_node\":\"v\",\"mapping\":{\(nodes.joined(separator: ","))}}]"
            .write(toFile: path, atomically: false, encoding: .utf8)
        let store = try Store.open(path: folder.file("s.sqlite"))
        #expect(Importer(store: store).run(paths: [path], format: nil).inserted == 1)
        #expect(try RealExportShapesTests.transcript(store) == [
            "user: What's a good local model?", "assistant: Try a small one.", "user: ",
        ])
        // The recordings and the image are attachments (missing: the export is a bare
        // conversations.json), the placeholders gone.
        let conversation = try #require(try store.conversations.page(sort: .created, at: .first, limit: 1).items.first)
        #expect(try store.attachments(conversation: conversation.id).map(\.reference) == [
            "sediment://file_1", "sediment://file_2", "sediment://file_1", "sediment://file_3",
        ])
    }
}
