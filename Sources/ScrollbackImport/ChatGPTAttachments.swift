import Foundation
import ScrollbackModel

/// The files a ChatGPT message points to: images (uploaded, DALL·E and GPT-4o
/// generations) and voice recordings as asset pointers among its parts, Code Interpreter's
/// plots in its metadata, uploaded files in `metadata.attachments`. Each one once, in the
/// order the message has them; what the pointer and the metadata say of the same file id
/// are one attachment.
enum ChatGPTAttachments {
    /// The attachments of a message with this content and metadata.
    static func of(content: [String: Any], metadata: [String: Any]) -> [ImportedAttachment] {
        var found: [ImportedAttachment] = []
        var byFile: [String: Int] = [:]
        func add(_ attachment: ImportedAttachment) {
            guard let file = attachment.reference.flatMap(fileID(of:)) else {
                found.append(attachment)
                return
            }
            if let at = byFile[file] {
                // The same file named twice: what each says of it, together.
                var merged = found[at]
                if merged.name == file && attachment.name != file { merged.name = attachment.name }
                merged.mime = merged.mime ?? attachment.mime
                merged.size = merged.size ?? attachment.size
                merged.width = merged.width ?? attachment.width
                merged.height = merged.height ?? attachment.height
                found[at] = merged
                return
            }
            byFile[file] = found.count
            found.append(attachment)
        }
        for part in content.array("parts") ?? [] {
            guard let object = part as? [String: Any] else { continue }
            for pointer in pointers(in: object) { add(pointer) }
        }
        // Code Interpreter's plots: the cell's output names the images it showed.
        for message in metadata.object("aggregate_result")?.array("messages") ?? [] {
            guard let object = message as? [String: Any], object.string("message_type") == "image",
                let url = object.string("image_url"), fileID(of: url) != nil
            else { continue }
            add(ImportedAttachment(
                name: fileID(of: url) ?? url, mime: nil, width: whole(object["width"]), height: whole(object["height"]), reference: url))
        }
        // Files the person uploaded, with their names.
        for item in metadata.array("attachments") ?? [] {
            guard let object = item as? [String: Any], let id = object.string("id"), !id.isEmpty else { continue }
            let name = object.string("name").flatMap { ImportText.isBlank($0) ? nil : $0 } ?? id
            add(ImportedAttachment(
                name: name, mime: object.string("mime_type"), size: whole(object["size"]).map { Int64($0) },
                width: whole(object["width"]), height: whole(object["height"]), reference: reference(forFile: id)))
        }
        return found
    }

    /// The asset pointers in a part: an image's or a recording's, and those inside a voice
    /// or video part (`real_time_user_audio_video_asset_pointer` holds an audio pointer and
    /// frames).
    static func pointers(in part: [String: Any], depth: Int = 0) -> [ImportedAttachment] {
        guard depth < 4 else { return [] }
        var found: [ImportedAttachment] = []
        let type = part.string("content_type") ?? ""
        if let pointer = part.string("asset_pointer"), let file = fileID(of: pointer) {
            let isAudio = type.contains("audio")
            let format = part.string("format")
            found.append(
                ImportedAttachment(
                    name: file, mime: isAudio ? format.map { "audio/\($0)" } : nil, size: whole(part["size_bytes"]).map { Int64($0) },
                    width: whole(part["width"]), height: whole(part["height"]), reference: pointer))
        }
        for key in ["audio_asset_pointer", "video_container_asset_pointer"] {
            if let inner = part.object(key) { found += pointers(in: inner, depth: depth + 1) }
        }
        for frame in part.array("frames_asset_pointers") ?? [] {
            if let inner = frame as? [String: Any] { found += pointers(in: inner, depth: depth + 1) }
        }
        return found
    }

    /// The file id a pointer names (`file-service://file-Ab12` → `file-Ab12`,
    /// `sediment://file_00ab` → `file_00ab`); nil for anything else.
    static func fileID(of pointer: String) -> String? {
        for scheme in ["file-service://", "sediment://"] where pointer.hasPrefix(scheme) {
            let id = String(pointer.dropFirst(scheme.count))
            return isFileID(id) ? id : nil
        }
        return nil
    }

    /// `file-` or `file_` and letters, digits (ChatGPT's file ids).
    static func isFileID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        guard bytes.count > 5, bytes.count <= 100, id.hasPrefix("file-") || id.hasPrefix("file_") else { return false }
        return bytes.dropFirst(5).allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) }
    }

    /// The pointer for a file id as the message's parts would give it.
    static func reference(forFile id: String) -> String {
        id.hasPrefix("file_") ? "sediment://\(id)" : "file-service://\(id)"
    }

    /// A whole number from JSON within 0…2^40 (a size, a width); nil for anything else.
    static func whole(_ value: Any?) -> Int? {
        guard let number = value as? NSNumber, !(value is Bool) else { return nil }
        let double = number.doubleValue
        guard double.isFinite, double >= 0, double <= 1_099_511_627_776, double == double.rounded() else { return nil }
        return Int(double)
    }

    /// The file id an export's file is named for: `file-Ab12-photo.jpg`, `file_00ab-3f2e….png`,
    /// `file-Ab12.webp` (the id, then `-`, `.` or the end); nil for other names.
    static func fileID(ofEntryName name: String) -> String? {
        let base = PathText.lastComponent(of: name)
        guard base.hasPrefix("file-") || base.hasPrefix("file_") else { return nil }
        let bytes = Array(base.utf8)
        var end = 5
        while end < bytes.count {
            let byte = bytes[end]
            guard (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) else { break }
            end += 1
        }
        guard end > 5 else { return nil }
        return String(decoding: bytes[0..<end], as: UTF8.self)
    }

    /// The name to show for a file the export holds: what follows its id in the file's name
    /// (`file-Ab12-photo.jpg` → `photo.jpg`), or the whole name when nothing does but an
    /// extension or a generated id.
    static func shownName(ofEntry name: String, fileID: String) -> String {
        let base = PathText.lastComponent(of: name)
        var rest = String(base.dropFirst(fileID.count))
        if rest.hasPrefix("-") { rest.removeFirst() }
        // `file_00ab-3f2e8c1a-…-….png`: a generated id, not a name; the whole name says more.
        let stem = rest.split(separator: ".").first.map(String.init) ?? ""
        let looksGenerated = stem.count == 36 && stem.filter { $0 == "-" }.count == 4
        return rest.isEmpty || rest.hasPrefix(".") || looksGenerated ? base : rest
    }
}
