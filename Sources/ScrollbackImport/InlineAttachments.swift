import Foundation
import ScrollbackModel

/// Images a session carries inline (Claude Code's `{"type":"image","source":{"type":"base64",…}}`,
/// Codex's `input_image` data URLs): decoded and kept as attachments of their message.
enum InlineAttachments {
    /// The largest inline file kept: 64 MB decoded (a session line that holds more is kept
    /// as its text, the file said missing).
    static let largest = 64 << 20

    /// The attachment for base64 `data` of `mime`, the `number`th of its message (from 1).
    static func attachment(mime: String?, base64 data: String, number: Int) -> ImportedAttachment {
        let mime = mime.flatMap { $0.isEmpty || $0.count > 100 ? nil : $0.lowercased() }
        let name = "image-\(number)" + (mime.flatMap(Self.fileExtension).map { "." + $0 } ?? "")
        guard data.utf8.count / 4 * 3 <= largest else {
            return ImportedAttachment(name: name, mime: mime, absence: "larger than \(largest >> 20) MB in the session file; not kept")
        }
        // Base64 as sessions write it: line breaks anywhere, the padding sometimes left out.
        var text = data.filter { !$0.isWhitespace }
        if text.utf8.count % 4 != 0 { text += String(repeating: "=", count: 4 - text.utf8.count % 4) }
        guard let bytes = Data(base64Encoded: text), !bytes.isEmpty else {
            return ImportedAttachment(name: name, mime: mime, absence: "its base64 in the session file is damaged")
        }
        return ImportedAttachment(name: name, mime: mime, size: Int64(bytes.count), data: Array(bytes))
    }

    /// The attachment a `data:` URL holds, or one referring to any other URL.
    static func attachment(url: String, number: Int) -> ImportedAttachment {
        if url.hasPrefix("data:"), let comma = url.firstIndex(of: ",") {
            let header = url[url.index(url.startIndex, offsetBy: 5)..<comma]
            let mime = header.split(separator: ";").first.map(String.init)
            guard header.hasSuffix(";base64") else {
                return ImportedAttachment(name: "image-\(number)", mime: mime, absence: "a data URL that is not base64; not kept")
            }
            return attachment(mime: mime, base64: String(url[url.index(after: comma)...]), number: number)
        }
        let shown = String(url.prefix(2_000))
        return ImportedAttachment(name: "image-\(number)", reference: shown, absence: "a link, not a file of the session")
    }

    /// `png` for `image/png`, `jpg` for `image/jpeg`.
    static func fileExtension(_ mime: String) -> String? {
        switch mime {
        case "image/png": "png"
        case "image/jpeg", "image/jpg": "jpg"
        case "image/gif": "gif"
        case "image/webp": "webp"
        case "application/pdf": "pdf"
        default: nil
        }
    }
}
