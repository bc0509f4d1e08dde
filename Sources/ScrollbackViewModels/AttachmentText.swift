import Foundation
import ScrollbackModel
import TerminalText

/// How an attachment is said on one line: the reader's line in its message, `show`, and
/// `attachment list` (`▣ plot.png  1024×768 PNG  245 kB`).
public enum AttachmentText {
    /// What kind of file, in a word or two: `PNG`, `JPEG`, `WAV audio`, `PDF`, `file`.
    public static func type(of attachment: AttachmentDTO) -> String { attachment.typeWord }

    /// `812 B`, `9.4 kB`, `245 kB`, `1.2 MB`.
    public static func size(_ bytes: Int64) -> String { AttachmentDTO.sizeText(bytes) }

    /// `1024×768 PNG  245 kB`, and what is wrong when its bytes are not here.
    /// - Parameter note: what the browser knows of a fetch of awaited bytes (under way,
    ///   failed), said in place of the reason.
    public static func facts(of attachment: AttachmentDTO, note: String? = nil) -> String {
        var parts: [String] = []
        var kind = type(of: attachment)
        if let width = attachment.width, let height = attachment.height {
            kind = "\(width)×\(height) " + kind
        }
        parts.append(kind)
        if let size = attachment.size { parts.append(self.size(size)) }
        if attachment.awaited != nil && !attachment.isStored {
            parts.append(UntrustedText.sanitized(note.map { "not here yet: " + $0 } ?? AttachmentDTO.notHereYet))
        } else if let reason = attachment.missingReason {
            parts.append("not here: " + UntrustedText.sanitized(reason))
        }
        return parts.joined(separator: "  ")
    }

    /// The whole line, safe and cut to `width` cells: the name first, so that it shows at any
    /// width.
    /// A file name for the attachment, safe in any folder (`AttachmentDTO.safeFileName`).
    public static func fileName(_ attachment: AttachmentDTO) -> String { attachment.safeFileName }

    /// A long name is cut (to 120 cells at most) so that its facts still show.
    public static func line(_ attachment: AttachmentDTO, width: Int, note: String? = nil) -> String {
        let width = max(width, 1)
        let facts = facts(of: attachment, note: note)
        let room = min(max(width - DisplayWidth.of(facts) - 4, min(width - 2, 16)), 120)
        let name = DisplayWidth.truncated(UntrustedText.sanitized(attachment.name), to: max(room, 1))
        return DisplayWidth.truncated("▣ " + name + "  " + facts, to: width)
    }
}
