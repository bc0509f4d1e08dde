import Foundation
import ScrollbackModel
import ScrollbackStorage
import ScrollbackTerminal
import ScrollbackViewModels
import TerminalText
import TestSupport
import Testing

/// Each attachment is a line in its message: `▣ name  W×H TYPE  size`, or why its bytes are
/// not here; the name first, cut to the width, made safe.
@Suite("Reader: attachment lines")
@MainActor
struct AttachmentLineTests {
    static let time = Timestamp(milliseconds: 1_767_261_600_000)

    static func store() throws -> Store {
        let folder = try TemporaryDirectory()
        let store = try Store.open(path: ":memory:")
        let png = try TestFiles.image("png", width: 1024, height: 768, in: folder)
        var question = ImportedMessage(role: .user, content: "", createdAt: time, nodeID: "u")
        question.attachments = [
            ImportedAttachment(name: "plot.png", data: png),
            ImportedAttachment(name: "evil \u{1B}]0;pwned\u{07}\u{202E}name.pdf", mime: "application/pdf", size: 2_400_000, reference: "sediment://file_x"),
        ]
        var answer = ImportedMessage(role: .assistant, content: "A rising line.", createdAt: time, nodeID: "a", parent: .node("u"))
        answer.attachments = [ImportedAttachment(name: "voice.wav", mime: "audio/wav", data: TestFiles.bytes(245_000, seed: 1))]
        _ = try store.upsert(
            ImportedConversation(
                source: "chatgpt", sourceID: "att", title: "Plots", model: nil, createdAt: time, updatedAt: time, messages: [question, answer]))
        return store
    }

    @Test("the reader at 80 and 30 columns: a line per file after the text, a message of files alone has no blank text line; hostile names are inert")
    func lines() throws {
        let store = try Self.store()
        for width in [80, 30] {
            let browser = try LayoutTests.browser(store, width: width, height: 14)
            _ = try browser.handle(.enter)
            let screen = LayoutTests.render(browser, width: width, height: 14)
            let lines = screen.lines.map { $0.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression) }
            let user = try #require(lines.firstIndex { $0.contains("user ·") })
            #expect(lines[user + 1] == DisplayWidthCut.cut("▣ plot.png  1024×768 PNG  \(Self.size(try Self.pngBytes(store)))", width), "\(lines)")
            #expect(lines[user + 2].hasPrefix("▣ evil "), "\(lines)")
            #expect(!lines.joined().contains("\u{1B}") && !lines.joined().contains("\u{07}") && !lines.joined().contains("\u{202E}"))
            if width == 80 {
                #expect(lines[user + 2].hasSuffix("name.pdf  PDF  2.4 MB  not here: the export did not hold it"), "\(lines[user + 2])")
                let answer = try #require(lines.firstIndex { $0.contains("assistant ·") })
                #expect(lines[answer + 1] == "A rising line." && lines[answer + 2] == "▣ voice.wav  WAV audio  245 kB", "\(lines)")
            }
            #expect(lines[user + 3].isEmpty)
        }
    }

    static func pngBytes(_ store: Store) throws -> Int64 {
        let conversation = try #require(try store.conversations.page(sort: .created, filter: .none, at: .first, limit: 1).items.first)
        return try #require(try store.attachments(conversation: conversation.id).first?.size)
    }

    static func size(_ bytes: Int64) -> String { AttachmentText.size(bytes) }

    @Test("sizes in powers of 1,000 as file managers say them; types from the MIME type, else the name")
    func words() {
        #expect([0, 999, 1000, 9_949, 9_950, 245_123, 999_499, 999_500, 1_500_000, 3_000_000_000].map { AttachmentText.size($0) }
            == ["0 B", "999 B", "1.0 kB", "9.9 kB", "10 kB", "245 kB", "999 kB", "1.0 MB", "1.5 MB", "3.0 GB"])
        func type(_ name: String, _ mime: String?) -> String {
            AttachmentText.type(
                of: AttachmentDTO(
                    id: 1, messageID: 1, messagePosition: 0, position: 0, name: name, mime: mime, size: nil, width: nil, height: nil,
                    reference: nil, sha256: nil, extracted: nil, absence: nil))
        }
        #expect(type("a", "image/svg+xml") == "SVG" && type("a", "audio/x-wav") == "WAV audio" && type("a", "audio/mpeg") == "MP3 audio")
        #expect(type("report.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document") == "DOCX")
        #expect(type("photo.JPG", nil) == "JPEG" && type("noext", nil) == "file" && type("x.\u{1B}[31m", nil) == "file")
    }
}

/// What the screen shows of a line cut to a width (the renderer's own cut).
enum DisplayWidthCut {
    static func cut(_ text: String, _ width: Int) -> String {
        DisplayWidth.truncated(text, to: width)
    }
}
