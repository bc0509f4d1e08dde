/// A conversation as Markdown: the export's format, and what the browser copies, pipes
/// and pages. Text as it is stored (callers that draw it on a terminal sanitize it).
public enum MarkdownTranscript {
    public struct OtherBranch: Equatable, Sendable {
        /// The place along the branch where it leaves the exported one (1-based).
        public var number: Int
        public var role: Role
        public var firstLine: String
        /// How many branches (leaves) go on from there.
        public var branches: Int
    }

    /// - Parameter shown: the ids of the exported branch, in order.
    public static func otherBranches(_ messages: [MessageDTO], tree: ConversationTree, shown: [Int64]) -> [OtherBranch] {
        var byID: [Int64: MessageDTO] = [:]
        for message in messages { byID[message.id] = message }
        let onBranch = Set(shown)
        var result: [OtherBranch] = []
        for (place, parent) in ([nil] + shown.map(Optional.some)).enumerated() {
            for child in tree.children(of: parent) where !onBranch.contains(child) {
                guard let start = byID[child] else { continue }
                let line = start.content.split(separator: "\n").first { !$0.trimmingCharacters(in: .whitespaces).isEmpty } ?? ""
                result.append(OtherBranch(number: place + 1, role: start.role, firstLine: oneLine(String(line.prefix(120))), branches: tree.leafCount(under: child)))
            }
        }
        return result
    }

    /// Title, facts, then each message of the current branch under a role heading; message
    /// text as it is, so code fences survive. Tool traffic and what was hidden (a web page,
    /// a file, a command's output: text from anywhere) is fenced as code, unless it is one
    /// fenced block already, so that no heading in it reads as a message of its own. The
    /// other branches are listed at the end by their first lines.
    ///
    /// Each attachment is a line after its message's text: a link to its file where the
    /// export wrote it (`files`, by SHA-256: an image as `![name](link)`, else
    /// `[name](link)`), else `▣ name (PNG, 245 kB)` or why its bytes are not here.
    public static func render(
        _ conversation: ConversationDTO, _ messages: [MessageDTO], otherBranches: [OtherBranch] = [], files: [String: String] = [:]
    ) -> String {
        // Names from files stay on their line: a line break in one would start a heading.
        var text = "# \(oneLine(conversation.title))\n\n"
        text += "- id: \(conversation.publicID)\n"
        text += "- created: \(conversation.createdAt.iso8601)\n"
        text += "- updated: \(conversation.updatedAt.iso8601)\n"
        if let model = conversation.model { text += "- model: \(oneLine(model))\n" }
        text += "- source: \(oneLine(conversation.source))\(conversation.sourceID.map { " (\(oneLine($0)))" } ?? "")\n"
        for message in messages {
            let role = message.role.rawValue.prefix(1).uppercased() + message.role.rawValue.dropFirst()
            let kind = message.kind == .text ? "" : message.kind.isSeen ? " · \(message.kind.rawValue)" : " · hidden \(message.kind.rawValue)"
            text += "\n## \(role) · \(message.createdAt.iso8601)\(message.model.map { " · \(oneLine($0))" } ?? "")\(kind)\n\n"
            let fenced = message.kind == .text || message.kind == .document || CodeFence.isOneBlock(message.content)
            text += (fenced ? message.content : CodeFence.fenced(message.content)) + "\n"
            if !message.attachments.isEmpty {
                text += "\n" + message.attachments.map { attachmentLine($0, link: $0.sha256.flatMap { files[$0] }) }.joined(separator: "\n") + "\n"
            }
        }
        if !otherBranches.isEmpty {
            let count = otherBranches.reduce(0) { $0 + $1.branches }
            text += "\n---\n\n\(count) other branch\(count == 1 ? "" : "es") (`scrollback show \(conversation.publicID.prefix(8)) --all-branches`):\n\n"
            for branch in otherBranches {
                let more = branch.branches > 1 ? " (\(branch.branches) branches)" : ""
                text += "- at message \(branch.number), \(branch.role.rawValue)\(more): \(branch.firstLine)\n"
            }
        }
        return text
    }

    /// An attachment's line: a link where its file was written, else its name and facts.
    static func attachmentLine(_ attachment: AttachmentDTO, link: String?) -> String {
        // The name is link text: brackets and backslashes escaped, on one line.
        var name = ""
        for character in visible(oneLine(attachment.name)) {
            if character == "[" || character == "]" || character == "\\" { name.append("\\") }
            name.append(character)
        }
        if let link {
            let target = linkTarget(link)
            return (attachment.mime?.hasPrefix("image/") == true ? "!" : "") + "[\(name)](\(target))"
        }
        var facts = [attachment.typeWord]
        if let width = attachment.width, let height = attachment.height { facts[0] = "\(width)×\(height) " + facts[0] }
        if let size = attachment.size { facts.append(AttachmentDTO.sizeText(size)) }
        if let reason = attachment.missingReason { facts.append((attachment.awaited != nil ? "" : "not here: ") + visible(oneLine(reason))) }
        return "▣ \(name) (\(facts.joined(separator: ", ")))"
    }

    /// A path as a link's target: spaces, parentheses, angle brackets and anything not ASCII
    /// percent-encoded, so that every Markdown reader takes it whole.
    static func linkTarget(_ path: String) -> String {
        var target = ""
        for byte in path.utf8 {
            let safe = byte > 0x20 && byte < 0x7F && !"()<>%\\[]\"'".utf8.contains(byte)
            target += safe ? String(UnicodeScalar(byte)) : "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
        }
        return target
    }

    /// `text` with its control characters (C0 but tab, DEL, C1) as visible pictures: a file
    /// name from an export is not a terminal's command when the Markdown is printed.
    static func visible(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        return String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { scalar in
                    guard isControl(scalar) else { return scalar }
                    return scalar.value < 0x20 ? Unicode.Scalar(0x2400 + scalar.value) ?? "\u{FFFD}" : scalar.value == 0x7F ? "\u{2421}" : "\u{FFFD}"
                }))
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.value < 0x20 && scalar != "\t") || (0x7F...0x9F).contains(scalar.value)
    }

    /// `text` with every line break (CR, LF, NEL, U+2028, U+2029) as a space.
    static func oneLine(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isBreak) else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { isBreak($0) ? " " : $0 }))
    }

    private static func isBreak(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\n" || scalar == "\r" || scalar.value == 0x85 || scalar.value == 0x2028 || scalar.value == 0x2029
    }

    /// The fenced code blocks of `text` (`CodeFence`), each exactly as written, without its
    /// fences. A block left open runs to the end, as the reader shows it.
    public static func codeBlocks(in text: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        var fence = CodeFence()
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            switch fence.step(line) {
            case .opens: current = []
            case .closes:
                blocks.append((current ?? []).joined(separator: "\n"))
                current = nil
            case .code: current?.append(line)
            case .text: break
            }
        }
        if let open = current { blocks.append(open.joined(separator: "\n")) }
        return blocks
    }
}
