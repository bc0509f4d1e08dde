import Foundation
import ScrollbackModel

/// One message of a ChatGPT export as the person saw it, or as what it is when they did not
/// see it (`MessageKind`).
///
/// Seen: the user's and the assistant's messages addressed to everyone, Code Interpreter
/// cells and their output, generated images (as placeholders), and the canvas documents
/// (`canmore.create_textdoc`, `canmore.update_textdoc`: the document in the panel beside the
/// chat, as a message of its own with its name). Kept hidden: reasoning (`thoughts`,
/// `reasoning_recap`, the o1 tool `a8km123`, thinking preambles), and what was addressed
/// to the model: every other tool call and its result (browsing, search, file search,
/// memory, image-generation instructions, canvas confirmations and comments), system and
/// context messages (custom instructions, memory), messages marked hidden. A content type
/// this version does not know is kept hidden with its raw JSON.
enum ChatGPTMessage {
    /// The canvas document as the conversation has it at a node: its name, type and text.
    struct Canvas: Equatable {
        var name: String
        var type: String
        var content: String
    }

    /// The content types read here; any other is kept as `unknown`, raw.
    static let knownContentTypes: Set<String> = [
        "text", "multimodal_text", "code", "execution_output", "thoughts", "reasoning_recap", "user_editable_context",
        "model_editable_context", "tether_browsing_display", "tether_quote", "system_error", "sonic_webpage", "app_pairing_content",
    ]

    /// - Parameter canvas: the document before this message (on its branch); the result says
    ///   what it is after.
    static func message(
        _ message: [String: Any], defaultModel: String?, fallbackTime: Timestamp?, canvas: inout Canvas?
    ) throws(SkipReason) -> ImportedMessage? {
        let metadata = message.object("metadata") ?? [:]
        guard let roleText = message.object("author")?.string("role"), var role = Role(rawValue: roleText) else { return nil }
        let author = message.object("author")?.string("name")
        let recipient = message.string("recipient") ?? "all"
        let content = message.object("content") ?? [:]
        let contentType = content.string("content_type") ?? "text"
        var kind = MessageKind.text
        var text: String
        // Images in the message (a tool's message with some is seen: the images it made).
        var toolImages = 0

        switch contentType {
        case "thoughts":
            kind = .reasoning
            text = (content.array("thoughts") ?? []).compactMap { item -> String? in
                guard let thought = item as? [String: Any] else { return nil }
                let parts = [thought.string("summary"), thought.string("content")].compactMap { $0 }.filter { !ImportText.isBlank($0) }
                return parts.isEmpty ? nil : parts.joined(separator: "\n")
            }.joined(separator: "\n\n")
        case "reasoning_recap":
            kind = .reasoning
            text = content.string("content") ?? ""
        case "user_editable_context":
            kind = .internal
            text = [content.string("user_profile"), content.string("user_instructions")].compactMap { $0 }
                .filter { !ImportText.isBlank($0) }.joined(separator: "\n\n")
        case "model_editable_context":
            kind = .internal
            text = content.string("model_set_context") ?? ""
        case "code":
            let language = content.string("language").flatMap { $0 == "unknown" ? nil : $0 } ?? ""
            text = ImportText.fenced(content.string("text") ?? "", language: language)
        case "execution_output":
            role = .tool
            // A plot or image the cell drew is this marker in the export.
            let output = (content.string("text") ?? "").replacingOccurrences(of: "<<ImageDisplayed>>", with: "[image]")
            text = ImportText.fenced(output)
        case "multimodal_text":
            let parts = content.array("parts") ?? []
            // Voice mode: the transcript is what was said; the audio itself is a placeholder
            // only where no transcript came with it.
            let transcribed = parts.contains { ($0 as? [String: Any])?.string("content_type") == "audio_transcription" }
            text = parts.compactMap { part -> String? in
                if let string = part as? String { return string.isEmpty ? nil : string }
                guard let object = part as? [String: Any] else { return nil }
                let type = object.string("content_type") ?? ""
                // A file the export points to is an attachment, shown as a line of its own:
                // the placeholder stays only where no pointer came with it.
                let attached = !ChatGPTAttachments.pointers(in: object).isEmpty
                if type.contains("audio") && type != "audio_transcription" { return transcribed || attached ? nil : "[voice message]" }
                if type.contains("image") {
                    toolImages += 1
                    return attached ? nil : "[image]"
                }
                if let inner = object.string("text") { return inner }
                return "[attachment]"
            }.joined(separator: "\n")
            // A tool's message is seen when it carries the images it made (DALL·E, GPT-4o).
        case "tether_quote":
            kind = .internal
            text = [content.string("title"), content.string("url"), content.string("text")].compactMap { $0 }
                .filter { !ImportText.isBlank($0) }.joined(separator: "\n")
        case "tether_browsing_display", "sonic_webpage", "system_error", "app_pairing_content":
            kind = .internal
            text = [content.string("result"), content.string("summary"), content.string("text"), content.string("name")]
                .compactMap { $0 }.filter { !ImportText.isBlank($0) }.joined(separator: "\n")
        case _ where !knownContentTypes.contains(contentType):
            kind = .unknown
            text = rawJSON(content)
        default:
            if let parts = content.array("parts") {
                text = parts.compactMap { $0 as? String }.joined(separator: "\n")
            } else {
                text = content.string("text") ?? content.string("result") ?? ""
            }
        }

        // Something this version could not read as text (thoughts that are not a list,
        // a recap that is not a string, parts that are all objects): kept, raw and hidden,
        // not dropped. (Files alone are read: they are its attachments.)
        let attachments = ChatGPTAttachments.of(content: content, metadata: metadata)
        if ImportText.isBlank(text) && kind != .unknown && attachments.isEmpty
            && content.contains(where: { $0.key != "content_type" && carries($0.value) })
        {
            kind = .unknown
            text = rawJSON(content)
        }

        // Who it was for, and what it is.
        if kind == .text {
            if (metadata["is_visually_hidden_from_conversation"] as? Bool) == true || role == .system
                || (metadata["is_user_system_message"] as? Bool) == true
            {
                kind = .internal
            } else if (metadata["is_thinking_preamble_message"] as? Bool) == true {
                kind = .reasoning
            } else if role == .assistant && recipient != "all" {
                if recipient == "python" && contentType == "code" {
                    // A Code Interpreter cell: seen, with its output.
                } else if recipient.hasPrefix("canmore."),
                    // Real exports send the call as `code` (language json), the JSON in `text`.
                    let document = self.canvas(
                        recipient, arguments: contentType == "code" ? content.string("text") ?? text : text, before: &canvas)
                {
                    kind = .document
                    text = document
                } else {
                    kind = .internal
                    text = "→ \(recipient)\n\(text)"
                }
            } else if role == .tool && contentType != "execution_output" && toolImages == 0 {
                // o1's reasoning came as a tool (`a8km123`) that says how long it thought.
                if author == "a8km123" || (metadata["finished_text"] != nil && author != "python") {
                    kind = .reasoning
                } else {
                    kind = .internal
                }
            }
        }
        if kind == .internal && role == .tool, let author, !author.isEmpty { text = "← \(author)\n\(text)" }
        if kind == .reasoning, ImportText.isBlank(text), let finished = metadata.string("finished_text") { text = finished }

        // Citation markers (private-use characters) as [1]-style references, sources listed.
        if role == .assistant && kind == .text {
            text = ChatGPTCitations.resolve(
                text, references: metadata.array("content_references") ?? [], citations: metadata.array("citations") ?? [])
        }
        // A message of files alone (an upload with no words) is kept for them.
        if ImportText.isBlank(text) {
            guard !attachments.isEmpty else { return nil }
            text = ""
        }
        let model = role == .assistant ? (metadata.string("model_slug") ?? defaultModel) : nil
        if message["create_time"] != nil && !(message["create_time"] is NSNull) && message.number("create_time") == nil {
            throw SkipReason("a message's create_time is not a number of seconds")
        }
        let time = try ImportTime.seconds(message.number("create_time"), field: "a message's create_time") ?? fallbackTime ?? Timestamp(milliseconds: 0)
        var imported = ImportedMessage(role: role, content: text, createdAt: time, model: model, kind: kind)
        imported.attachments = attachments
        return imported
    }

    /// The canvas document a `canmore` call shows, as a message's text (its name in bold,
    /// then the document; code fenced in its language), and the document after it; nil when
    /// the call cannot be read (then it is kept as the call it is, hidden).
    ///
    /// An update that rewrites the whole document (the pattern `.*`, as ChatGPT sends for a
    /// rewrite) gives the new document; one that replaces passages shows the passages, as
    /// the export holds no result of it. Patterns are never run: they come from a file, and a
    /// regular expression can take exponential time.
    static func canvas(_ recipient: String, arguments: String, before canvas: inout Canvas?) -> String? {
        guard let data = arguments.data(using: .utf8),
            let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        else { return nil }
        if recipient == "canmore.create_textdoc" {
            guard let body = object.string("content") else { return nil }
            let name = object.string("name").flatMap { ImportText.isBlank($0) ? nil : $0 } ?? "Untitled document"
            let created = Canvas(name: name, type: object.string("type") ?? "document", content: body)
            canvas = created
            return render(created, note: nil)
        }
        guard let updates = object.array("updates")?.compactMap({ $0 as? [String: Any] }), !updates.isEmpty else { return nil }
        let wholeRewrites: Set<String> = [".*", "^.*$", "(?s).*", "^(.*)$", "[\\s\\S]*", "^[\\s\\S]*$"]
        var passages: [String] = []
        var current = canvas
        for update in updates {
            guard let replacement = update.string("replacement") else { return nil }
            if let pattern = update.string("pattern"), wholeRewrites.contains(pattern) {
                current = Canvas(name: current?.name ?? "Untitled document", type: current?.type ?? "document", content: replacement)
                passages = []
            } else {
                passages.append(replacement)
            }
        }
        // Passages of code are fenced as the document is (of a document this conversation
        // never showed, as code too: nothing says they are Markdown).
        func shown(_ passages: [String], type: String?) -> String {
            guard let type, !type.hasPrefix("code/") else {
                let language = type.map { String($0.dropFirst(5)) } ?? ""
                return passages.map { ImportText.fenced($0, language: language) }.joined(separator: "\n\n…\n\n")
            }
            return passages.joined(separator: "\n\n…\n\n")
        }
        guard let document = current else {
            return passages.isEmpty ? nil : "**Untitled document** (edited)\n\n" + shown(passages, type: nil)
        }
        canvas = document
        guard passages.isEmpty else {
            let count = passages.count
            return "**\(ImportText.oneLine(document.name))** (edited: \(count) passage\(count == 1 ? "" : "s"))\n\n" + shown(passages, type: document.type)
        }
        return render(document, note: "rewritten")
    }

    private static func render(_ canvas: Canvas, note: String?) -> String {
        let heading = "**\(ImportText.oneLine(canvas.name))**" + (note.map { " (\($0))" } ?? "")
        if canvas.type.hasPrefix("code/") {
            return "\(heading)\n\n" + ImportText.fenced(canvas.content, language: String(canvas.type.dropFirst(5)))
        }
        return "\(heading)\n\n\(canvas.content)"
    }

    /// Whether a JSON value holds anything: not null, not blank text, not an empty list or
    /// object, not a list or object of such (looked into 8 deep, then taken as holding).
    static func carries(_ value: Any, depth: Int = 0) -> Bool {
        guard depth < 8 else { return true }
        switch value {
        case is NSNull: return false
        case let text as String: return !ImportText.isBlank(text)
        case let list as [Any]: return list.contains { carries($0, depth: depth + 1) }
        case let object as [String: Any]: return object.values.contains { carries($0, depth: depth + 1) }
        default: return true
        }
    }

    /// The object as compact JSON with sorted keys (what is kept of a block not known yet).
    static func rawJSON(_ object: Any) -> String {
        guard JSONSerialization.isValidJSONObject(object),
            let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return "" }
        return String(decoding: data, as: UTF8.self)
    }
}
