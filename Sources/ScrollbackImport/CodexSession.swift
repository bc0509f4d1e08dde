import Foundation
import ScrollbackModel

/// A Codex CLI session (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`): one
/// conversation, one chain (Codex keeps no tree; a fork, `forked_from_id`, is a session and
/// a conversation of its own), keyed by the session id in the file's name.
///
/// Seen: the prompts, the answers, and each tool call (`shell`, `apply_patch`, web search)
/// and its output, collapsed. Hidden: the reasoning summaries (`reasoning`; the encrypted
/// reasoning is dropped: nothing can read it), the context Codex sends the model
/// (`<environment_context>`, `<user_instructions>`, AGENTS.md, developer and system
/// messages) and compactions (`internal`), and any line or item this version does not know
/// (`unknown`, raw JSON). The `event_msg` lines repeat the messages for the screen and are
/// not stored twice; their token counts go on the answer they follow.
enum CodexSession {
    static let source = "codex"

    static func conversations(
        path: String, from offset: Int, appended: Bool, fallbackID: String
    ) throws -> (conversations: [ImportedConversation], readTo: Int, skipped: [String]) {
        var messages: [ImportedMessage] = []
        var skipped: [String] = []
        var unknown = 0
        var metaID: String?
        var project: String?
        var gitBranch: String?
        var model: String?
        var firstTime: Timestamp?
        var lastTime: Timestamp?
        var lastAssistant: Int?
        /// How many messages came before the first line with a time.
        var undated = 0
        var nodeIDs = Set<String>()
        let readTo = try SessionFile.lines(path, from: offset) { line in
            guard let object = (try? JSONSerialization.jsonObject(with: line.bytes)) as? [String: Any] else {
                skipped.append("the line at byte \(line.offset) is not a JSON object: left out")
                return
            }
            // Since mid-2025 each line is {timestamp, type, payload}; before, the items alone.
            let wrapped = object["payload"] is [String: Any]
            let type = wrapped ? (object.string("type") ?? "") : "response_item"
            let payload = wrapped ? (object.object("payload") ?? [:]) : object
            // A line without a time is at the one before it, or the first one after it that has one.
            let stamped = object.string("timestamp").flatMap(ImportTime.iso8601)
            let time = stamped ?? lastTime ?? Timestamp(milliseconds: 0)
            if let stamped {
                if firstTime == nil { firstTime = stamped }
                lastTime = max(lastTime ?? stamped, stamped)
            }
            defer { if firstTime == nil { undated = messages.count } }
            if type == "session_meta" || (!wrapped && object["instructions"] != nil && object["id"] is String && object["type"] == nil) {
                metaID = metaID ?? payload.string("id")
                if let cwd = payload.string("cwd"), !cwd.isEmpty { project = project ?? cwd }
                if let branch = payload.object("git")?.string("branch"), !branch.isEmpty { gitBranch = branch }
                return
            }
            switch type {
            case "turn_context":
                if let name = payload.string("model"), !name.isEmpty { model = name }
                if let cwd = payload.string("cwd"), !cwd.isEmpty { project = project ?? cwd }
                return
            case "event_msg":
                // The screen's copies of the messages; the token counts are kept.
                if payload.string("type") == "token_count", let last = payload.object("info")?.object("last_token_usage"),
                    let at = lastAssistant
                {
                    messages[at].usage = ClaudeCodeSession.usage([
                        "input_tokens": last["input_tokens"] as Any, "output_tokens": last["output_tokens"] as Any,
                    ].compactMapValues { $0 is NSNull ? nil : $0 })
                }
                return
            case "response_item", "compacted":
                break
            default:
                unknown += 1
                let node = StableID.uuid(String(decoding: line.bytes, as: UTF8.self))
                if nodeIDs.insert(node).inserted {
                    messages.append(ImportedMessage(role: .system, content: ChatGPTMessage.rawJSON(object), createdAt: time, nodeID: node, kind: .unknown))
                }
                return
            }
            guard let part = type == "compacted" ? Part(role: .system, text: payload.string("message") ?? ChatGPTMessage.rawJSON(payload), kind: .internal)
                : self.part(payload, unknown: &unknown)
            else { return }
            // Lines have no ids: a line's id is its bytes' (the same wherever the line is, so a
            // file read whole again finds what it stored).
            var node = StableID.uuid(String(decoding: line.bytes, as: UTF8.self))
            var copy = 1
            while !nodeIDs.insert(node).inserted {
                copy += 1
                node = StableID.uuid(String(decoding: line.bytes, as: UTF8.self), String(copy))
            }
            var message = ImportedMessage(
                role: part.role, content: part.text, createdAt: time, model: part.role == .assistant ? model : nil, nodeID: node, kind: part.kind)
            message.attachments = part.attachments
            messages.append(message)
            if part.role == .assistant { lastAssistant = messages.count - 1 }
        }
        guard !messages.isEmpty else { return ([], readTo, skipped) }
        ImportTime.date(&messages, first: undated, at: firstTime)
        // Appended lines follow the last message stored.
        if appended { messages[0].parent = .afterStored }
        // Appended lines do not say whose they are: the file's name does, else its first line.
        if appended && metaID == nil, let first = GeminiSession.firstLine(path) {
            metaID = (first["payload"] as? [String: Any])?.string("id") ?? first.string("id")
        }
        let id = sessionID(fromFileName: fallbackID) ?? metaID ?? fallbackID
        let prompt = messages.first { $0.role == .user && $0.kind == .text }.map { ImportText.title(from: [$0]) }
        let start = firstTime ?? messages[0].createdAt
        var conversation = ImportedConversation(
            source: source, sourceID: id, title: appended ? "" : prompt ?? "Untitled session", model: model, createdAt: start,
            updatedAt: max(lastTime ?? start, start), messages: messages)
        conversation.project = project
        conversation.gitBranch = gitBranch
        conversation.isAppended = appended
        conversation.unknownParts = unknown
        return ([conversation], readTo, skipped)
    }

    /// The session id at the end of `rollout-2025-05-07T17-24-21-<uuid>`.
    static func sessionID(fromFileName stem: String) -> String? {
        guard stem.hasPrefix("rollout-"), stem.count >= 36 else { return nil }
        let tail = String(stem.suffix(36))
        return UUID(uuidString: tail) != nil ? tail.lowercased() : nil
    }

    typealias Part = ClaudeCodeSession.Part

    static func part(_ item: [String: Any], unknown: inout Int) -> Part? {
        switch item.string("type") ?? "" {
        case "message":
            let role = item.string("role") ?? ""
            // Its images (a pasted screenshot: a data URL) are attachments.
            var files: [ImportedAttachment] = []
            let text = (item.array("content") ?? []).compactMap { block -> String? in
                guard let block = block as? [String: Any] else { return nil }
                switch block.string("type") {
                case "input_text", "output_text", "text": return block.string("text")
                case "input_image":
                    let url = block.string("image_url") ?? block.object("image_url")?.string("url") ?? ""
                    files.append(InlineAttachments.attachment(url: url, number: files.count + 1))
                    return nil
                default: return ChatGPTMessage.rawJSON(block)
                }
            }.joined(separator: "\n")
            guard !ImportText.isBlank(text) || !files.isEmpty else { return nil }
            var part: Part
            switch role {
            case "user":
                let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
                let context = ["<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<permissions instructions>"]
                part = Part(role: .user, text: text, kind: context.contains { trimmed.hasPrefix($0) } ? .internal : .text)
            case "assistant": part = Part(role: .assistant, text: text, kind: .text)
            default: part = Part(role: .system, text: text, kind: .internal)
            }
            part.attachments = files
            return part
        case "reasoning":
            let summary = (item.array("summary") ?? []).compactMap { ($0 as? [String: Any])?.string("text") }
            let content = (item.array("content") ?? []).compactMap { ($0 as? [String: Any])?.string("text") }
            let text = (summary + content).joined(separator: "\n\n")
            return ImportText.isBlank(text) ? nil : Part(role: .assistant, text: text, kind: .reasoning)
        case "function_call":
            let name = item.string("name") ?? "tool"
            let arguments = item.string("arguments") ?? ""
            let parsed = arguments.data(using: .utf8).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
            var main = ""
            if let command = parsed?["command"] as? [String] {
                // `["bash", "-lc", "ls -la"]`: the command as typed.
                main = command.count == 3 && command[1] == "-lc" ? command[2] : command.joined(separator: " ")
            } else if let parsed {
                main = ["command", "path", "query", "url", "file_path"].lazy.compactMap { parsed.string($0) }.first ?? ""
            }
            return Part(role: .assistant, text: "\(name)(\(firstLine(main)))\n\(arguments)", kind: .tool)
        case "local_shell_call":
            let command = (item.object("action")?["command"] as? [String]) ?? []
            let shown = command.count == 3 && command[1] == "-lc" ? command[2] : command.joined(separator: " ")
            return Part(role: .assistant, text: "shell(\(firstLine(shown)))\n\(ChatGPTMessage.rawJSON(item))", kind: .tool)
        case "custom_tool_call":
            let name = item.string("name") ?? "tool"
            let input = item.string("input") ?? ""
            // A patch names its files (`*** Update File: api_test.go`): those, else its first line.
            let lines = input.split(whereSeparator: \.isNewline)
            let files = lines.compactMap { line -> String? in
                for verb in ["Update", "Add", "Delete"] where line.hasPrefix("*** \(verb) File: ") {
                    return verb + " " + line.dropFirst("*** \(verb) File: ".count)
                }
                return nil
            }
            let shown = files.isEmpty ? lines.first.map(String.init) ?? "" : files.joined(separator: ", ")
            return Part(role: .assistant, text: "\(name)(\(firstLine(shown)))\n\(input)", kind: .tool)
        case "web_search_call":
            let query = item.object("action")?.string("query") ?? ""
            return Part(role: .assistant, text: "web_search(\(firstLine(query)))", kind: .tool)
        case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
            var output = item.string("output") ?? (item.object("output").map(ChatGPTMessage.rawJSON) ?? "")
            // `{"output": "...", "metadata": {"exit_code": 1}}`: the output, the failure said.
            if let data = output.data(using: .utf8), let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let text = object.string("output")
            {
                let code = object.object("metadata")?.number("exit_code")
                // A code that is no whole number of a process's range (1e308, 2.5) is no code to show.
                let said = code.map { code -> String in
                    guard code != 0 else { return "" }
                    guard let whole = Int32(exactly: code) else { return "Failed: " }
                    return "Exit \(whole): "
                }
                output = (said ?? "") + text
            }
            return Part(role: .tool, text: ImportText.isBlank(output) ? "(no output)" : output, kind: .tool)
        default:
            unknown += 1
            return Part(role: .system, text: ChatGPTMessage.rawJSON(item), kind: .unknown)
        }
    }

    private static func firstLine(_ text: String) -> String { ImportText.callArgument(text) }
}
