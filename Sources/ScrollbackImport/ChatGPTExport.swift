import Foundation
import ScrollbackModel

/// One conversation of a ChatGPT data export (`conversations.json`).
///
/// The transcript is the path from `current_node` back to the root, reversed (the newest
/// leaf when `current_node` is missing). Hidden nodes, empty system messages, assistant
/// messages addressed to a tool, and `thoughts`/`reasoning_recap` are left out; images in
/// `multimodal_text` become `[image]`; `code` and `execution_output` become code blocks
/// (the output as a tool message).
enum ChatGPTExport {
    /// What is kept of one node of `mapping` while the transcript is found: ids and where its
    /// message is in the file, never the parsed message (a 200,000-message conversation
    /// would otherwise take gigabytes).
    struct Node {
        var parent: String?
        /// The byte range of the node's `message` object, when it has one.
        var message: Range<Int>?
        var hasChildren: Bool
    }

    /// The conversation in the JSON object at `range` of `scanner`'s bytes.
    ///
    /// - Throws: `SkipReason` when the record cannot be a conversation.
    static func conversation(in range: Range<Int>, of scanner: JSONScanner) throws(SkipReason) -> ImportedConversation {
        guard scanner.isObject(range) else { throw SkipReason("not an object") }
        var id: String?, conversationID: String?, title: String?, currentNode: String?, defaultModel: String?
        var createTime: Double?, updateTime: Double?
        var mapping: Range<Int>?
        var nodes: [String: Node] = [:]
        do {
            try scanner.forEachMember(of: range) { key, value in
                switch key {
                case "id": id = scanner.string(value)
                case "conversation_id": conversationID = scanner.string(value)
                case "title": title = scanner.string(value)
                case "current_node": currentNode = scanner.string(value)
                case "default_model_slug": defaultModel = scanner.string(value)
                case "create_time", "update_time":
                    // A time that is there but not a number ("1700000000", true) is no time:
                    // the record is skipped rather than stored as 1970.
                    let number = scanner.number(value)
                    if number == nil && !scanner.isNull(value) { throw SkipReason("\(key) is not a number of seconds") }
                    if key == "create_time" { createTime = number } else { updateTime = number }
                case "mapping": mapping = scanner.isObject(value) ? value : nil
                default: break
                }
            }
            guard let conversationID = conversationID ?? id, !conversationID.isEmpty else { throw SkipReason("no id") }
            guard let mapping else { throw SkipReason("no messages (no mapping)") }
            try scanner.forEachMember(of: mapping) { key, value in
                guard scanner.isObject(value) else { return }
                var node = Node(parent: nil, message: nil, hasChildren: false)
                try scanner.forEachMember(of: value) { field, part in
                    switch field {
                    case "parent": node.parent = scanner.string(part)
                    case "message": node.message = scanner.isObject(part) ? part : nil
                    case "children": node.hasChildren = !scanner.isEmptyArray(part)
                    default: break
                    }
                }
                nodes[key] = node
            }
        } catch let skip as SkipReason {
            throw skip
        } catch {
            throw SkipReason("malformed JSON" + ((error as? JSONScanner.Malformed).map { " (at byte \(scanner.fileByte($0.offset)))" } ?? ""))
        }
        guard let sourceID = conversationID ?? id, !sourceID.isEmpty else { throw SkipReason("no id") }
        let createdAt = try ImportTime.seconds(createTime, field: "create_time")

        // The transcript: from the current node (or the newest leaf) up to the root.
        var leaf = currentNode.flatMap { nodes[$0] != nil ? $0 : nil }
        if leaf == nil {
            var newest: (key: String, time: Double)?
            for (key, node) in nodes where !node.hasChildren {
                let time = node.message.flatMap { messageTime(in: $0, of: scanner) } ?? 0
                if newest.map({ time > $0.time || (time == $0.time && key > $0.key) }) ?? true { newest = (key, time) }
            }
            leaf = newest?.key
        }
        var path: [Range<Int>?] = []
        var seen: Set<String> = []
        var current = leaf
        while let key = current, let node = nodes[key], !seen.contains(key) {
            seen.insert(key)
            path.append(node.message)
            current = node.parent
        }
        nodes = [:]
        seen = []

        // Only the messages of the transcript are parsed, one at a time.
        var messages: [ImportedMessage] = []
        for range in path.reversed() {
            guard let range else { continue }
            let data = scanner.data(range)
            guard String(data: data, encoding: .utf8) != nil else {
                throw SkipReason("not UTF-8 text, in a message (at byte \(scanner.fileByte(range.lowerBound)))")
            }
            guard let message = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw SkipReason("malformed JSON, such as a lone surrogate \\ud800, in a message (at byte \(scanner.fileByte(range.lowerBound)))")
            }
            if let imported = try self.message(message, defaultModel: defaultModel, fallbackTime: createdAt) {
                messages.append(imported)
            }
        }
        guard !messages.isEmpty else { throw SkipReason("no messages") }
        let chosenTitle = title.flatMap { ImportText.isBlank($0) ? nil : $0 } ?? ImportText.title(from: messages)
        let start = createdAt ?? messages.first?.createdAt ?? Timestamp(milliseconds: 0)
        let updated = try ImportTime.seconds(updateTime, field: "update_time") ?? messages.last?.createdAt ?? start
        let model = defaultModel ?? messages.last(where: { $0.role == .assistant })?.model
        return ImportedConversation(
            source: "chatgpt", sourceID: sourceID, title: chosenTitle, model: model, createdAt: start, updatedAt: max(updated, start),
            messages: messages)
    }

    /// A message's `create_time`, read in place, for choosing the newest leaf.
    private static func messageTime(in range: Range<Int>, of scanner: JSONScanner) -> Double? {
        var time: Double?
        try? scanner.forEachMember(of: range) { key, value in
            if key == "create_time" { time = scanner.number(value) }
        }
        return time
    }

    private static func message(_ message: [String: Any], defaultModel: String?, fallbackTime: Timestamp?) throws(SkipReason) -> ImportedMessage? {
        let metadata = message.object("metadata") ?? [:]
        if (metadata["is_visually_hidden_from_conversation"] as? Bool) == true { return nil }
        guard let roleText = message.object("author")?.string("role"), var role = Role(rawValue: roleText) else { return nil }
        let content = message.object("content") ?? [:]
        let contentType = content.string("content_type") ?? "text"
        // A message to a tool is hidden, but for code: a Code Interpreter cell is addressed
        // to `python`, and its output alone would be out of context.
        if role == .assistant, let recipient = message.string("recipient"), recipient != "all", contentType != "code" { return nil }
        let text: String
        switch contentType {
        case "thoughts", "reasoning_recap":
            return nil
        case "code":
            let language = content.string("language").flatMap { $0 == "unknown" ? nil : $0 } ?? ""
            text = "```\(language)\n\(content.string("text") ?? "")\n```"
        case "execution_output":
            role = .tool
            // A plot or image the cell drew is this marker in the export.
            let output = (content.string("text") ?? "").replacingOccurrences(of: "<<ImageDisplayed>>", with: "[image]")
            text = "```\n\(output)\n```"
        case "multimodal_text":
            text = (content.array("parts") ?? []).compactMap { part -> String? in
                if let string = part as? String { return string.isEmpty ? nil : string }
                guard let object = part as? [String: Any] else { return nil }
                if let type = object.string("content_type"), type.contains("image") { return "[image]" }
                if let inner = object.string("text") { return inner }
                return "[attachment]"
            }.joined(separator: "\n")
        default:
            if let parts = content.array("parts") {
                text = parts.compactMap { $0 as? String }.joined(separator: "\n")
            } else {
                text = content.string("text") ?? content.string("result") ?? ""
            }
        }
        guard !ImportText.isBlank(text) else { return nil }
        let model = role == .assistant ? (metadata.string("model_slug") ?? defaultModel) : nil
        if message["create_time"] != nil && !(message["create_time"] is NSNull) && message.number("create_time") == nil {
            throw SkipReason("a message's create_time is not a number of seconds")
        }
        let time = try ImportTime.seconds(message.number("create_time"), field: "a message's create_time") ?? fallbackTime ?? Timestamp(milliseconds: 0)
        return ImportedMessage(role: role, content: text, createdAt: time, model: model)
    }
}
