import Foundation
import ScrollbackModel
import TerminalText

/// How an attachment is said on one line: the reader's line in its message, `show`, and
/// `attachment list` (`▣ plot.png  1024×768 PNG  245 kB`).
public enum AttachmentText {
    /// What kind of file, in a word or two: `PNG`, `JPEG`, `WAV audio`, `PDF`, from its MIME
    /// type, else its name's extension, else `file`.
    public static func type(of attachment: AttachmentDTO) -> String {
        if let mime = attachment.mime?.lowercased(), let slash = mime.firstIndex(of: "/") {
            let major = mime[..<slash]
            var minor = mime[mime.index(after: slash)...]
            if let cut = minor.firstIndex(where: { $0 == ";" || $0 == "+" }) { minor = minor[..<cut] }
            if minor.hasPrefix("x-") { minor = minor.dropFirst(2) }
            if minor.hasPrefix("vnd.") { minor = "" }
            let word = minor == "jpg" ? "JPEG" : minor == "mpeg" && major == "audio" ? "MP3" : minor.uppercased()
            if !word.isEmpty, word.count <= 8, word.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" }) {
                return major == "audio" || major == "video" ? "\(word) \(major)" : word
            }
        }
        let name = attachment.name
        if let dot = name.lastIndex(of: "."), name.index(after: dot) < name.endIndex {
            let suffix = name[name.index(after: dot)...].uppercased()
            if suffix.count <= 5, suffix.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
                return suffix == "JPG" ? "JPEG" : suffix
            }
        }
        return "file"
    }

    /// A file's size as file managers say it, in powers of 1,000: `812 B`, `9.4 kB`, `245 kB`,
    /// `1.2 MB`.
    public static func size(_ bytes: Int64) -> String {
        guard bytes >= 1000 else { return "\(max(bytes, 0)) B" }
        let units = ["kB", "MB", "GB", "TB", "PB"]
        var value = Double(bytes) / 1000
        var unit = 0
        while value >= 999.5 && unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return String(format: value < 9.95 ? "%.1f %@" : "%.0f %@", value, units[unit])
    }

    /// `1024×768 PNG  245 kB`, and what is wrong when its bytes are not here.
    public static func facts(of attachment: AttachmentDTO) -> String {
        var parts: [String] = []
        var kind = type(of: attachment)
        if let width = attachment.width, let height = attachment.height {
            kind = "\(width)×\(height) " + kind
        }
        parts.append(kind)
        if let size = attachment.size { parts.append(self.size(size)) }
        if !attachment.isStored {
            parts.append("not here: " + UntrustedText.sanitized(attachment.absence ?? "the export did not hold it"))
        }
        return parts.joined(separator: "  ")
    }

    /// The whole line, safe and cut to `width` cells: the name first, so that it shows at any
    /// width.
    public static func line(_ attachment: AttachmentDTO, width: Int) -> String {
        DisplayWidth.truncated("▣ " + UntrustedText.sanitized(attachment.name) + "  " + facts(of: attachment), to: max(width, 1))
    }
}
