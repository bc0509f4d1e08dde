import Foundation
import ScrollbackModel

/// A Claude Code session (`~/.claude/projects/<folder>/<session>.jsonl`): one conversation,
/// its tree by `uuid`/`parentUuid` (a rewind or an edited prompt is a branch), titled by its
/// `custom-title` line, else the `summary` line of a message in it, else its first prompt.
///
/// Seen: the prompts, the answers, slash commands and their output, and each tool call
/// and its result, shown collapsed (`tool`: `Bash(git status)`). Hidden: thinking
/// (`reasoning`); meta, system, compact-summary lines, `<system-reminder>` text and
/// file-history snapshots (`internal`); a line type or content block this version does not
/// know (`unknown`, its raw JSON, counted). Subagents' lines (`isSidechain`, and the
/// `agent-*.jsonl` files) are conversations of their own, one per agent.
enum ClaudeCodeSession {
    static let source = "claude-code"

    /// What reading a file's lines gathers, conversation by conversation (the session's own,
    /// and each subagent's).
    struct Gathered {
        var messages: [ImportedMessage] = []
        var lastNode: String?
        var firstTime: Timestamp?
        var lastTime: Timestamp?
        /// How many messages came before the first line with a time.
        var undated = 0
        var project: String?
        var gitBranch: String?
        var model: String?
        var customTitle: String?
        var unknown = 0
        var agentID: String?
        /// The lines without a uuid read since the last line with one (file-history
        /// snapshots, written before each prompt): where the first of them is among the
        /// messages, what it hangs under (nil: nothing read before it), and the last of them.
        var between: (head: Int, after: String?, tail: String)?
    }

    /// The conversations of the lines read (`appended`: what was added to a file read
    /// before, from `offset`), keyed by the session's id (from its lines; else `fallbackID`,
    /// the file's name).
    static func conversations(
        path: String, from offset: Int, appended: Bool, fallbackID: String
    ) throws -> (conversations: [ImportedConversation], readTo: Int, skipped: [String]) {
        var sessions: [String: Gathered] = [:]
        var order: [String] = []
        var summaries: [String: String] = [:]
        var usageSeen = Set<String>()
        // The calls that start a subagent, and the results that came back from one: (the
        // conversation, the result's index in it, its agent).
        var subagentCalls = Set<String>()
        var subagentResults: [(key: String, index: Int, agent: String?)] = []
        var skipped: [String] = []
        var sessionID: String?
        let readTo = try SessionFile.lines(path, from: offset) { line in
            guard let object = (try? JSONSerialization.jsonObject(with: line.bytes)) as? [String: Any] else {
                skipped.append("the line at byte \(line.offset) is not a JSON object: left out")
                return
            }
            let type = object.string("type") ?? ""
            if type == "summary" {
                if let leaf = object.string("leafUuid"), let summary = object.string("summary") { summaries[leaf] = summary }
                return
            }
            if sessionID == nil { sessionID = object.string("sessionId") }
            let session = sessionID ?? fallbackID
            let agent = object.string("agentId").map(agentKey)
            let key = (object["isSidechain"] as? Bool) == true ? session + "/" + (agent ?? "sidechain") : session
            if sessions[key] == nil {
                order.append(key)
                sessions[key] = Gathered()
            }
            var gathered = sessions[key] ?? Gathered()
            defer { sessions[key] = gathered }
            if type == "custom-title" {
                gathered.customTitle = object.string("customTitle") ?? object.string("title")
                return
            }
            if gathered.project == nil, let cwd = object.string("cwd"), !cwd.isEmpty { gathered.project = cwd }
            if let branch = object.string("gitBranch"), !branch.isEmpty { gathered.gitBranch = branch }
            if let agent { gathered.agentID = agent }
            // A line without a time (a file-history snapshot) is at the one before it, or the
            // first one after it that has one.
            let stamped = object.string("timestamp").flatMap(ImportTime.iso8601)
            let time = stamped ?? gathered.lastTime ?? Timestamp(milliseconds: 0)
            if let stamped {
                if gathered.firstTime == nil { gathered.firstTime = stamped }
                gathered.lastTime = max(gathered.lastTime ?? stamped, stamped)
            }
            let uuid = object.string("uuid")
            let node = uuid ?? "@\(line.offset)"
            var parent: ImportedParent =
                if let parent = object.string("parentUuid") ?? object.string("logicalParentUuid") {
                    .node(parent)
                } else if object["parentUuid"] is NSNull || uuid != nil {
                    .root
                } else {
                    gathered.lastNode.map { .node($0) } ?? .root
                }
            var parts = self.parts(of: object, type: type, unknown: &gathered.unknown)
            guard !parts.isEmpty else { return }
            // Lines without a uuid stand between the line before them and the next line with
            // one, not beside it: a snapshot before each prompt is no branch of the session.
            if uuid != nil, let between = gathered.between {
                gathered.between = nil
                let follows: String? = if case .node(let id) = parent { id } else { nil }
                if between.after == nil, gathered.messages.indices.contains(between.head) {
                    // Nothing before them in what was read: they go where this line goes.
                    gathered.messages[between.head].parent = parent
                    parent = .node(between.tail)
                } else if let follows, follows == between.after {
                    parent = .node(between.tail)
                }
            }
            let message = object.object("message")
            let model = message?.string("model").flatMap { $0.isEmpty || $0.hasPrefix("<") ? nil : $0 }
            if let model { gathered.model = model }
            // One answer is several lines sharing the message's id, each repeating its usage.
            if let usage = message?.object("usage"), let id = message?.string("id") ?? object.string("requestId"),
                usageSeen.insert(id).inserted
            {
                parts[parts.count - 1].usage = Self.usage(usage)
            }
            for (index, part) in parts.enumerated() {
                if let call = part.toolUseID, part.role == .assistant, part.toolName.map(subagentTools.contains) == true {
                    subagentCalls.insert(call)
                }
                if part.role == .tool, part.agentID != nil || part.toolUseID.map(subagentCalls.contains) == true {
                    subagentResults.append((key: key, index: gathered.messages.count, agent: part.agentID))
                }
                let last = index == parts.count - 1
                let id = last ? node : "\(node)#\(index)"
                gathered.messages.append(
                    {
                        var message = ImportedMessage(
                            role: part.role, content: part.text, createdAt: time, model: part.role == .assistant ? model : nil, nodeID: id,
                            parent: index == 0 ? parent : .node("\(node)#\(index - 1)"), usage: part.usage, kind: part.kind)
                        message.attachments = part.attachments
                        return message
                    }())
            }
            if uuid == nil {
                let head = gathered.messages.count - parts.count
                gathered.between = gathered.between.map { ($0.head, $0.after, node) } ?? (head, gathered.lastNode, node)
            }
            gathered.lastNode = node
            if gathered.firstTime == nil { gathered.undated = gathered.messages.count }
        }
        // Each result from a subagent ends with the line naming the subagent's conversation
        // (its own file's, or this file's `isSidechain` lines').
        let session = sessionID ?? fallbackID
        for link in subagentResults {
            let sidechain = session + "/sidechain"
            guard link.agent != nil || sessions[sidechain] != nil, link.key != session + "/" + (link.agent ?? "sidechain"),
                var gathered = sessions[link.key], gathered.messages.indices.contains(link.index)
            else { continue }
            let id = subagentConversationID(session: session, agent: link.agent)
            gathered.messages[link.index].content += "\n\n" + ConversationLink.subagentLine(id)
            sessions[link.key] = gathered
        }
        var result: [ImportedConversation] = []
        for key in order {
            guard var gathered = sessions[key], !gathered.messages.isEmpty else { continue }
            ImportTime.date(&gathered.messages, first: gathered.undated, at: gathered.firstTime)
            // The newest summary of a message of this file (a summary of another session's
            // leaf may be copied in: it is not this one's).
            let summary = gathered.messages.reversed().lazy.compactMap { $0.nodeID.flatMap { summaries[$0] } }.first
            let prompt = gathered.messages.first { $0.role == .user && $0.kind == .text }.map { ImportText.title(from: [$0]) }
            var title = gathered.customTitle ?? summary ?? (appended ? nil : prompt) ?? ""
            if key != (sessionID ?? fallbackID) && !title.isEmpty && gathered.customTitle == nil { title = "Subagent: " + title }
            let start = gathered.firstTime ?? Timestamp(milliseconds: 0)
            var conversation = ImportedConversation(
                source: source, sourceID: key, title: appended ? title : (title.isEmpty ? "Untitled session" : title),
                model: gathered.model, createdAt: start, updatedAt: max(gathered.lastTime ?? start, start), messages: gathered.messages)
            conversation.project = gathered.project
            conversation.gitBranch = gathered.gitBranch
            conversation.isAppended = appended
            conversation.unknownParts = gathered.unknown
            result.append(conversation)
        }
        return (result, readTo, skipped)
    }

    /// One message of a line: a block, or the text blocks of a prompt together.
    struct Part {
        var role: Role
        var text: String
        var kind: MessageKind
        var usage = MessageUsage()
        /// A tool call's id (`toolu_…`) and name, or the id of the call a result answers.
        var toolUseID: String? = nil
        var toolName: String? = nil
        /// The subagent a result came from (`toolUseResult.agentId`, or `agentId: …` in its
        /// text).
        var agentID: String? = nil
        /// Images (and documents) it carried inline.
        var attachments: [ImportedAttachment] = []
    }

    /// The tools that start a subagent.
    static let subagentTools: Set<String> = ["Task", "Agent"]

    /// The public id of the conversation a subagent's lines make (`session/agentId`, as
    /// `conversations` keys them; `session/sidechain` for lines that name no agent).
    static func subagentConversationID(session: String, agent: String?) -> String {
        StableID.uuid(source, session + "/" + (agent ?? "sidechain"))
    }

    /// An agent id as it goes into a conversation's key: as written when it is a plain
    /// name (letters, digits, `-_@.`, at most 100), else a name made from it (the same on
    /// both sides of a link), so that no line break or escape from a file reaches a key.
    static func agentKey(_ raw: String) -> String {
        let plain = !raw.isEmpty && raw.count <= 100 && raw.allSatisfy(isAgentIDCharacter)
        return plain ? raw : "agent-" + StableID.uuid("agent", raw).replacingOccurrences(of: "-", with: "").prefix(16)
    }

    private static func isAgentIDCharacter(_ character: Character) -> Bool {
        (character.isASCII && (character.isLetter || character.isNumber)) || "-_@.".contains(character)
    }

    /// The agent id in a result's text (`agentId: a87…`, as Claude Code writes it for the
    /// model), when the line has no `toolUseResult`.
    static func agentID(inResult text: String) -> String? {
        for line in text.split(whereSeparator: \.isNewline).prefix(50) {
            let trimmed = line.drop(while: { $0 == " " })
            guard trimmed.hasPrefix("agentId: ") else { continue }
            let id = trimmed.dropFirst("agentId: ".count).prefix(while: isAgentIDCharacter)
            return id.isEmpty || id.count > 100 ? nil : String(id)
        }
        return nil
    }

    static func parts(of object: [String: Any], type: String, unknown: inout Int) -> [Part] {
        let meta = (object["isMeta"] as? Bool) == true || (object["isCompactSummary"] as? Bool) == true
        switch type {
        case "user", "assistant":
            guard let message = object.object("message") else {
                unknown += 1
                return [Part(role: .system, text: ChatGPTMessage.rawJSON(object), kind: .unknown)]
            }
            let role: Role = type == "user" ? .user : .assistant
            if let text = message.string("content") {
                return prompt(text, role: role, meta: meta).map { [$0] } ?? []
            }
            var parts: [Part] = []
            var prose: [String] = []
            var files: [ImportedAttachment] = []
            func flushProse() {
                let text = prose.joined(separator: "\n")
                prose = []
                // Images alone (a pasted screenshot) make a message of their own.
                if var part = prompt(text, role: role, meta: meta) ?? (files.isEmpty ? nil : Part(role: role, text: "", kind: meta ? .internal : .text)) {
                    part.attachments = files
                    parts.append(part)
                } else if !files.isEmpty, var last = parts.popLast() {
                    last.attachments += files
                    parts.append(last)
                }
                files = []
            }
            for case let block as [String: Any] in message.array("content") ?? [] {
                switch block.string("type") ?? "" {
                case "text":
                    prose.append(block.string("text") ?? "")
                case "image", "document":
                    files.append(inline(block, number: files.count + 1))
                case "thinking":
                    flushProse()
                    if let thinking = block.string("thinking"), !ImportText.isBlank(thinking) {
                        parts.append(Part(role: .assistant, text: thinking, kind: .reasoning))
                    }
                case "redacted_thinking":
                    flushProse()
                    parts.append(Part(role: .assistant, text: "[redacted thinking]", kind: .reasoning))
                case "tool_use", "server_tool_use":
                    flushProse()
                    parts.append(Part(role: .assistant, text: toolCall(block), kind: .tool, toolUseID: block.string("id"), toolName: block.string("name")))
                case "tool_result", "web_search_tool_result":
                    flushProse()
                    let text = toolResult(block)
                    let agent = (object.object("toolUseResult")?.string("agentId")).flatMap { $0.isEmpty ? nil : agentKey($0) }
                        ?? agentID(inResult: text)
                    var result = Part(role: .tool, text: text, kind: .tool, toolUseID: block.string("tool_use_id"), agentID: agent)
                    // A tool's images (a screenshot it took) are its attachments.
                    for case let item as [String: Any] in block.array("content") ?? [] where item.string("type") == "image" {
                        result.attachments.append(inline(item, number: result.attachments.count + 1))
                    }
                    parts.append(result)
                default:
                    flushProse()
                    unknown += 1
                    parts.append(Part(role: role, text: ChatGPTMessage.rawJSON(block), kind: .unknown))
                }
            }
            flushProse()
            return parts
        case "system":
            let text = object.string("content") ?? ChatGPTMessage.rawJSON(object)
            return ImportText.isBlank(text) ? [] : [Part(role: .system, text: text, kind: .internal)]
        case "file-history-snapshot", "queue-operation":
            return [Part(role: .system, text: ChatGPTMessage.rawJSON(object), kind: .internal)]
        default:
            unknown += 1
            return [Part(role: .system, text: ChatGPTMessage.rawJSON(object), kind: .unknown)]
        }
    }

    /// A prompt's or an answer's text as the person saw it: a slash command as they typed it,
    /// its output as a tool's, the reminders Claude Code adds for the model hidden.
    static func prompt(_ text: String, role: Role, meta: Bool) -> Part? {
        guard !ImportText.isBlank(text) else { return nil }
        if meta { return Part(role: role, text: text, kind: .internal) }
        if let name = between(text, "<command-name>", "</command-name>") {
            let arguments = between(text, "<command-args>", "</command-args>") ?? ""
            let command = (name.hasPrefix("/") ? name : "/" + name) + (arguments.isEmpty ? "" : " " + arguments)
            return Part(role: .user, text: command, kind: .text)
        }
        if let output = between(text, "<local-command-stdout>", "</local-command-stdout>") {
            return ImportText.isBlank(output) ? nil : Part(role: .tool, text: output, kind: .tool)
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("<system-reminder>") && trimmed.hasSuffix("</system-reminder>") {
            return Part(role: role, text: text, kind: .internal)
        }
        return Part(role: role, text: text, kind: .text)
    }

    private static func between(_ text: String, _ open: String, _ close: String) -> String? {
        guard let start = text.range(of: open), let end = text.range(of: close, range: start.upperBound..<text.endIndex) else {
            return nil
        }
        return text[start.upperBound..<end.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `Bash(git status)`: the tool and its main argument, then the whole input as JSON.
    static func toolCall(_ block: [String: Any]) -> String {
        let name = block.string("name") ?? "tool"
        let input = block.object("input") ?? [:]
        let keys = ["command", "file_path", "path", "pattern", "url", "query", "description", "prompt", "notebook_path"]
        let main = keys.lazy.compactMap { input.string($0) }.first
            ?? input.values.lazy.compactMap { $0 as? String }.first ?? ""
        var text = "\(name)(\(ImportText.callArgument(main)))"
        if !input.isEmpty, JSONSerialization.isValidJSONObject(input),
            let data = try? JSONSerialization.data(withJSONObject: input, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        {
            text += "\n" + String(decoding: data, as: UTF8.self)
        }
        return text
    }

    /// An image or document block (`source`: base64 with its media type, or a URL) as an
    /// attachment.
    static func inline(_ block: [String: Any], number: Int) -> ImportedAttachment {
        let source = block.object("source") ?? [:]
        if let data = source.string("data") {
            var attachment = InlineAttachments.attachment(mime: source.string("media_type"), base64: data, number: number)
            if block.string("type") == "document" { attachment.name = block.string("title") ?? attachment.name.replacingOccurrences(of: "image", with: "document") }
            return attachment
        }
        if let url = source.string("url") { return InlineAttachments.attachment(url: url, number: number) }
        return ImportedAttachment(
            name: "\(block.string("type") ?? "file")-\(number)", mime: source.string("media_type"), absence: "the session file does not hold it")
    }

    /// A tool's result as its text (its images are attachments, `[image]` only where the
    /// text would otherwise be empty); an error says so first.
    static func toolResult(_ block: [String: Any]) -> String {
        var text: String
        if let string = block.string("content") {
            text = string
        } else if let items = block.array("content") {
            text = items.compactMap { item -> String? in
                guard let item = item as? [String: Any] else { return nil }
                switch item.string("type") {
                case "text": return item.string("text")
                case "image": return nil
                default: return ChatGPTMessage.rawJSON(item)
                }
            }.joined(separator: "\n")
        } else {
            text = ChatGPTMessage.rawJSON(block)
        }
        if (block["is_error"] as? Bool) == true { text = "Error: " + text }
        return ImportText.isBlank(text) ? "(no output)" : text
    }

    /// Token counts: the input read (with the cache's), the output written; each only when
    /// it is a whole number in range.
    static func usage(_ usage: [String: Any]) -> MessageUsage {
        func count(_ key: String) -> Int64? {
            guard let double = usage.number(key) else { return nil }
            guard double.isFinite, double >= 0, double < 1e15, double == double.rounded() else { return nil }
            return Int64(double)
        }
        let input = ["input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"].compactMap(count)
        return MessageUsage(inputTokens: input.isEmpty ? nil : input.reduce(0, +), outputTokens: count("output_tokens"))
    }
}
