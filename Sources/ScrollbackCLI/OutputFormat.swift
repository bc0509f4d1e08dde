import Foundation
import ScrollbackModel
import ScrollbackStorage
import ScrollbackViewModels
import TerminalText

/// The JSON shapes of the scripting commands. Documented in the README; change with care.
struct ConversationJSON: Encodable {
    let id: String
    let title: String
    let model: String?
    let source: String
    let sourceID: String?
    let createdAt: String
    let updatedAt: String
    /// The messages the person saw, on every branch.
    let messageCount: Int
    /// The messages kept but not shown by default (tool traffic, reasoning, …).
    let hiddenCount: Int
    let pinned: Bool
    /// A coding agent's session: the folder it ran in and its git branch.
    let project: String?
    let gitBranch: String?

    init(_ conversation: ConversationDTO) {
        id = conversation.publicID
        title = conversation.title
        model = conversation.model
        source = conversation.source
        sourceID = conversation.sourceID
        createdAt = conversation.createdAt.iso8601
        updatedAt = conversation.updatedAt.iso8601
        messageCount = conversation.seenCount
        hiddenCount = conversation.hiddenCount
        pinned = conversation.pinned
        project = conversation.project
        gitBranch = conversation.gitBranch
    }
}

struct MessageJSON: Encodable {
    let id: String
    /// The message's number along its branch, from 1: the `#4` of text output.
    var number: Int
    let role: String
    let content: String
    let createdAt: String
    let model: String?
    /// What it is to the person: text, document, tool (seen), reasoning, internal, unknown
    /// (hidden).
    let kind: String
    /// Its files, when it has any (absent otherwise).
    let attachments: [AttachmentJSON]?

    init(_ message: MessageDTO) {
        attachments = message.attachments.isEmpty ? nil : message.attachments.map { AttachmentJSON($0) }
        kind = message.kind.rawValue
        id = message.publicID
        number = message.position + 1
        role = message.role.rawValue
        content = message.content
        createdAt = message.createdAt.iso8601
        model = message.model
    }
}

/// A file of a message, in `attachment list --json` (with its message) and in each message of
/// `show --json` and `export --format json` (without).
struct AttachmentJSON: Encodable {
    /// The message's public id and its number (from 1) as `show` counts; only in `attachment list`.
    var message: String?
    var messageNumber: Int?
    let name: String
    let mime: String?
    /// In a word: PNG, JPEG, WAV audio, PDF…
    let type: String
    let size: Int64?
    let width: Int?
    let height: Int?
    /// The SHA-256 of the stored bytes (what `attachment get` takes); absent when they are
    /// not here.
    let sha256: String?
    /// Why the bytes are not here, when they are not.
    let missing: String?
    /// What the export pointed at (a file id, a path, a URL).
    let reference: String?
    /// Text the source drew out of the file (Claude's extracted content).
    let extracted: String?

    init(_ attachment: AttachmentDTO, message: String? = nil, number: Int? = nil) {
        self.message = message
        messageNumber = number
        name = attachment.name
        mime = attachment.mime
        type = AttachmentText.type(of: attachment)
        size = attachment.size
        width = attachment.width
        height = attachment.height
        // The hash `attachment get` takes: of the bytes here, or of those another machine holds.
        sha256 = attachment.sha256 ?? attachment.awaited
        missing = attachment.missingReason
        reference = attachment.reference
        extracted = attachment.extracted
    }
}

enum OutputFormat {
    /// Pretty JSON; for a terminal, with every control, bidi, zero-width and tag character
    /// escaped as `\uXXXX` (the same data to a parser, nothing raw to the terminal).
    static func json<T: Encodable>(_ value: T, for console: Console) throws -> String {
        if console.compactJSON { return try compactJSON(value) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(value)
        return forOutput(String(decoding: data, as: UTF8.self), json: true, console: console)
    }

    /// One line of JSON (for the MCP server, whose messages are lines): JSONEncoder escapes
    /// every control character, a newline in a string included.
    static func compactJSON<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // DEL and the line and paragraph separators too, as the server's own JSON does: a
        // reader that splits lines on them would cut a message. Outside strings JSON holds
        // none of them, so each one here is inside a string.
        return String(decoding: try encoder.encode(value), as: UTF8.self).replacingOccurrences(of: "\u{7F}", with: "\\u007f")
            .replacingOccurrences(of: "\u{2028}", with: "\\u2028").replacingOccurrences(of: "\u{2029}", with: "\\u2029")
    }

    /// Exact data for a pipe or a file; for a terminal, JSON escaped and text sanitized.
    static func forOutput(_ text: String, json: Bool, console: Console) -> String {
        guard console.outputIsTerminal else { return text }
        return json ? UntrustedText.terminalSafeJSON(text) : UntrustedText.sanitized(text, keepNewlines: true)
    }

    /// The first eight characters of a public id: enough to type, like git's short ids.
    /// Sanitized too: a database filled before ids were checked may hold anything there.
    static func shortID(_ publicID: String) -> String { UntrustedText.sanitized(String(publicID.prefix(8))) }

    /// The id as short as it can be and still name only this conversation (8 characters
    /// usually, more where several start alike): what `show`, `delete` and `export` accept.
    static func uniqueID(_ publicID: String, in store: Store) -> String {
        var length = 8
        while length < publicID.count {
            if (try? store.conversations.conversation(matching: String(publicID.prefix(length))))?.publicID == publicID { break }
            length += 4
        }
        return UntrustedText.sanitized(String(publicID.prefix(length)))
    }

    /// Untrusted text made safe for one line of terminal output.
    static func line(_ text: String) -> String { UntrustedText.sanitized(text) }

    /// A word of the command line quoted back in a message: made safe, and cut at 60
    /// characters (a 100,000-character value is not repeated whole).
    static func word(_ text: String) -> String {
        let safe = UntrustedText.sanitized(text)
        guard safe.count > 60 else { return safe }
        return String(safe.prefix(50)) + "… (\(NumberText.grouped(text.count)) characters)"
    }

    /// Words as a sentence lists them: `a, b or c` (`and` with `conjunction: "and"`).
    static func list(_ words: [String], conjunction: String = "or") -> String {
        guard let last = words.last, words.count > 1 else { return words.joined() }
        return words.dropLast().joined(separator: ", ") + " \(conjunction) " + last
    }

    /// Untrusted text made safe for terminal output, newlines kept.
    static func block(_ text: String) -> String { UntrustedText.sanitized(text, keepNewlines: true) }

    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }
}
