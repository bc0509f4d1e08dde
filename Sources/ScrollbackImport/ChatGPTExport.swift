import Foundation
import ScrollbackModel

/// One conversation of a ChatGPT data export (`conversations.json`).
///
/// Every node of `mapping` is kept as a tree, `current_node` (or the newest leaf when it is
/// missing) ending the branch shown by default. Each message has its kind
/// (`ChatGPTMessage`): what the person saw, or what is kept hidden (tool traffic,
/// reasoning, context). Nodes without a message or with an empty one are left out (their
/// children hang on their nearest kept ancestor); images in `multimodal_text` become
/// `[image]`; `code` and `execution_output` become code blocks (the output as a tool
/// message); citation markers become `[1]`-style references with the sources listed under
/// the answer (`ChatGPTCitations`).
enum ChatGPTExport {
    /// What is kept of one node of `mapping` while the transcript is found: ids and where its
    /// message is in the file, never the parsed message (a 200,000-message conversation
    /// would otherwise take gigabytes).
    struct Node {
        var parent: String?
        /// The byte range of the node's `message` object, when it has one.
        var message: Range<Int>?
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
                var node = Node(parent: nil, message: nil)
                try scanner.forEachMember(of: value) { field, part in
                    switch field {
                    case "parent": node.parent = scanner.string(part)
                    case "message": node.message = scanner.isObject(part) ? part : nil
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

        // Every node with a visible message, parents first (depth first from the roots). A
        // node left out (hidden, a system prompt, thoughts) passes its children to its
        // nearest kept ancestor, so that no branch is cut off.
        var children: [String: [String]] = [:]
        var roots: [String] = []
        for (key, node) in nodes {
            if let parent = node.parent, nodes[parent] != nil, parent != key {
                children[parent, default: []].append(key)
            } else {
                roots.append(key)
            }
        }
        // The nodes of the branch the person was on: a message there that cannot be read
        // skips the conversation, as before; one on another branch is left out and said
        // (without a current node, every branch counts as that one).
        var onCurrentBranch = Set<String>()
        var walking = currentNode
        while let key = walking, nodes[key] != nil, onCurrentBranch.insert(key).inserted {
            walking = nodes[key]?.parent
        }
        var messages: [ImportedMessage] = []
        var leftOut: [String] = []
        var kept: [String: Int] = [:]
        // (node, its nearest kept ancestor)
        // (node, the index of its nearest kept ancestor in `messages`)
        var stack: [(key: String, keptParent: Int?, canvas: ChatGPTMessage.Canvas?)] = roots.sorted(by: >).map { ($0, nil, nil) }
        var seen = Set<String>()
        // Nodes on a loop of parents (a damaged export) are reached from no root: they start
        // branches of their own rather than being lost.
        var unreached = nodes.keys.sorted(by: >).makeIterator()
        while let (key, keptParent, canvasBefore) = stack.popLast() ?? unreached.next().map({ ($0, nil, nil) }) {
            guard seen.insert(key).inserted else { continue }
            var nextParent = keptParent
            // The canvas document on this branch, as the messages above left it.
            var canvas = canvasBefore
            if let range = nodes[key]?.message {
                let data = scanner.data(range)
                let parsed = String(data: data, encoding: .utf8) == nil ? nil : try? JSONSerialization.jsonObject(with: data) as? [String: Any]
                if parsed == nil && (currentNode == nil || onCurrentBranch.contains(key)) {
                    guard String(data: data, encoding: .utf8) != nil else {
                        throw SkipReason("not UTF-8 text, in a message (at byte \(scanner.fileByte(range.lowerBound)))")
                    }
                    throw SkipReason("malformed JSON, such as a lone surrogate \\ud800, in a message (at byte \(scanner.fileByte(range.lowerBound)))")
                }
                if parsed == nil {
                    leftOut.append(
                        "a message on another branch left out, the rest kept: it is not valid JSON or UTF-8 (at byte \(scanner.fileByte(range.lowerBound)))"
                    )
                }
                if let message = parsed,
                    var imported = try ChatGPTMessage.message(message, defaultModel: defaultModel, fallbackTime: createdAt, canvas: &canvas)
                {
                    imported.nodeID = key
                    imported.parent = keptParent.map { .index($0) } ?? .root
                    kept[key] = messages.count
                    nextParent = messages.count
                    messages.append(imported)
                }
            }
            stack += (children[key] ?? []).sorted(by: >).map { ($0, nextParent, canvas) }
        }
        // The branch the person was on: the current node, or its nearest kept ancestor.
        var current = currentNode
        var steps = 0
        while let key = current, kept[key] == nil, steps <= nodes.count {
            current = nodes[key]?.parent
            steps += 1
        }
        nodes = [:]
        guard !messages.isEmpty else { throw SkipReason("no messages") }
        let chosenTitle = title.flatMap { ImportText.isBlank($0) ? nil : $0 } ?? ImportText.title(from: messages)
        let start = createdAt ?? messages.first?.createdAt ?? Timestamp(milliseconds: 0)
        let updated = try ImportTime.seconds(updateTime, field: "update_time") ?? messages.map(\.createdAt).max() ?? start
        let model = defaultModel ?? messages.last(where: { $0.role == .assistant })?.model
        var conversation = ImportedConversation(
            source: "chatgpt", sourceID: sourceID, title: chosenTitle, model: model, createdAt: start, updatedAt: max(updated, start),
            messages: messages, currentIndex: current.flatMap { kept[$0] })
        conversation.leftOut = leftOut
        conversation.unknownParts = messages.reduce(0) { $0 + ($1.kind == .unknown ? 1 : 0) }
        return conversation
    }
}
