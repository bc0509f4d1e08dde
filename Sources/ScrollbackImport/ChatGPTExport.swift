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
    static func conversation(from value: Any) throws(SkipReason) -> ImportedConversation {
        guard let record = value as? [String: Any] else { throw SkipReason("not an object") }
        guard let id = record.string("conversation_id") ?? record.string("id"), !id.isEmpty else {
            throw SkipReason("no id")
        }
        guard let mapping = record.object("mapping") else { throw SkipReason("no messages (no mapping)") }
        let nodes = mapping.compactMapValues { $0 as? [String: Any] }
        let createdAt = try ImportTime.seconds(record.number("create_time"), field: "create_time")
        let defaultModel = record.string("default_model_slug")

        // The transcript: from the current node (or the newest leaf) up to the root.
        var leaf = record.string("current_node").flatMap { nodes[$0] != nil ? $0 : nil }
        if leaf == nil {
            let leaves = nodes.filter { ($0.value.array("children") ?? []).isEmpty }
            leaf = leaves.max { lhs, rhs in
                let l = lhs.value.object("message")?.number("create_time") ?? 0
                let r = rhs.value.object("message")?.number("create_time") ?? 0
                return l == r ? lhs.key < rhs.key : l < r
            }?.key
        }
        var path: [[String: Any]] = []
        var seen: Set<String> = []
        var current = leaf
        while let key = current, let node = nodes[key], !seen.contains(key) {
            seen.insert(key)
            path.append(node)
            current = node.string("parent")
        }
        path.reverse()

        var messages: [ImportedMessage] = []
        for node in path {
            guard let message = node.object("message"), let imported = try self.message(message, defaultModel: defaultModel, fallbackTime: createdAt) else { continue }
            messages.append(imported)
        }
        guard !messages.isEmpty else { throw SkipReason("no messages") }
        let title = record.string("title").flatMap { ImportText.isBlank($0) ? nil : $0 } ?? ImportText.title(from: messages)
        let start = createdAt ?? messages.first?.createdAt ?? Timestamp(milliseconds: 0)
        let updated = try ImportTime.seconds(record.number("update_time"), field: "update_time") ?? messages.last?.createdAt ?? start
        let model = defaultModel ?? messages.last(where: { $0.role == .assistant })?.model
        return ImportedConversation(
            source: "chatgpt", sourceID: id, title: title, model: model, createdAt: start, updatedAt: max(updated, start),
            messages: messages)
    }

    private static func message(_ message: [String: Any], defaultModel: String?, fallbackTime: Timestamp?) throws(SkipReason) -> ImportedMessage? {
        let metadata = message.object("metadata") ?? [:]
        if (metadata["is_visually_hidden_from_conversation"] as? Bool) == true { return nil }
        guard let roleText = message.object("author")?.string("role"), var role = Role(rawValue: roleText) else { return nil }
        if role == .assistant, let recipient = message.string("recipient"), recipient != "all" { return nil }
        let content = message.object("content") ?? [:]
        let text: String
        switch content.string("content_type") ?? "text" {
        case "thoughts", "reasoning_recap":
            return nil
        case "code":
            let language = content.string("language").flatMap { $0 == "unknown" ? nil : $0 } ?? ""
            text = "```\(language)\n\(content.string("text") ?? "")\n```"
        case "execution_output":
            role = .tool
            text = "```\n\(content.string("text") ?? "")\n```"
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
        let time = try ImportTime.seconds(message.number("create_time"), field: "a message's create_time") ?? fallbackTime ?? Timestamp(milliseconds: 0)
        return ImportedMessage(role: role, content: text, createdAt: time, model: model)
    }
}
