import Foundation
import ScrollbackModel

/// One conversation of a Claude.ai data export (`conversations.json`).
///
/// Every message is kept as a tree by `parent_message_uuid`, `current_leaf_message_uuid` (or,
/// without it, the newest leaf) ending the branch shown by default; old exports without
/// parents are one chain ordered by time, the file's order breaking ties. A message that
/// becomes several (text, tool use, tool result) is a chain of them, the first with the
/// message's uuid as its node id, the next ones `uuid#2`, `uuid#3`. Text blocks are joined, `thinking` is left out,
/// `tool_use` and `tool_result` become tool messages, attachments' extracted text stays with
/// its message under the file's name, and whitespace-only messages are skipped.
enum ClaudeExport {
    static let rootParent = "00000000-0000-4000-8000-000000000000"

    /// The largest single conversation object read whole (parsed whole, it takes several
    /// times its size).
    static let largestObject = 256 << 20

    /// Whether the file is a single conversation object (`{"uuid", "chat_messages", …}`, as
    /// viewers save one from the web app): its top-level `chat_messages` array is looked
    /// for by scanning, a chunk in memory.
    static func isSingleConversation(path: String) throws -> Bool {
        let file = try FileReader(path: path)
        guard let start = try JSONArrayReader.objectStart(in: file) else { return false }
        return try JSONArrayReader.topLevelArray("chat_messages", in: file, objectAt: start) != nil
    }

    /// The single conversation object of the file, parsed; nil when the file is something
    /// else (an array, or an object around one).
    ///
    /// - Throws: `ImportError` when it is larger than `largestObject`, changes while it is
    ///   read, or is not valid JSON.
    static func singleConversation(path: String) throws -> [String: Any]? {
        guard try isSingleConversation(path: path) else { return nil }
        let file = try FileReader(path: path)
        while try file.fill() {
            if file.end > largestObject {
                throw ImportError(path: path, problem: "a single conversation object larger than 256 MiB; import the export's conversations.json instead")
            }
        }
        if file.end < file.size { throw file.endedEarly(at: file.end) }
        try file.checkUnchanged()
        guard let object = try? JSONSerialization.jsonObject(with: Data(file.buffer)) as? [String: Any] else {
            throw ImportError(path: path, problem: "malformed JSON in a single conversation object")
        }
        return object
    }

    static func conversation(from value: Any) throws(SkipReason) -> ImportedConversation {
        guard let record = value as? [String: Any] else { throw SkipReason("not an object") }
        guard let id = record.string("uuid"), !id.isEmpty else { throw SkipReason("no id") }
        let all = (record.array("chat_messages") ?? []).compactMap { $0 as? [String: Any] }
        guard !all.isEmpty else { throw SkipReason("no messages") }

        // Each message's time, read once (for the order of siblings, or of everything).
        let times = all.map { ImportTime.iso8601($0.string("created_at") ?? "")?.milliseconds ?? 0 }
        let byTime = { (lhs: Int, rhs: Int) -> Bool in times[lhs] == times[rhs] ? lhs < rhs : times[lhs] < times[rhs] }
        let conversationTime = try ImportTime.iso8601(record.string("created_at"), field: "created_at")
        var messages: [ImportedMessage] = []
        // For each source message (by uuid), the node its children hang on: its last piece,
        // or, when it had nothing to show, its own nearest kept ancestor.
        var hangOn: [String: Int?] = [:]
        var current: Int?
        // Node ids unique in the conversation, the parts' ids included: an id taken already
        // (a uuid seen twice, or one that reads like a part's, `m3#2`) gets `@` and a number.
        var seenIDs = Set<String>()
        func unique(_ candidate: String) -> String {
            var id = candidate
            var number = 1
            while !seenIDs.insert(id).inserted {
                number += 1
                id = "\(candidate)@\(number)"
            }
            return id
        }
        func nodeID(_ message: [String: Any], at: Int) -> String {
            unique(message.string("uuid") ?? "#\(at)")
        }
        if all.contains(where: { $0.string("parent_message_uuid") != nil }) {
            var index: [String: Int] = [:]
            for (at, message) in all.enumerated() {
                if let uuid = message.string("uuid"), index[uuid] == nil { index[uuid] = at }
            }
            var children: [Int: [Int]] = [:]
            var roots: [Int] = []
            for (at, message) in all.enumerated() {
                if let parent = message.string("parent_message_uuid"), parent != rootParent, let parentAt = index[parent], parentAt != at {
                    children[parentAt, default: []].append(at)
                } else {
                    roots.append(at)
                }
            }
            // Depth first, parents before children, siblings by time.
            var stack: [(at: Int, parent: Int?)] = roots.sorted(by: byTime).reversed().map { ($0, nil) }
            var seen = Set<Int>()
            // Messages on a loop of parents (a damaged export) are reached from no first
            // message: they start branches of their own rather than being lost.
            var unreached = all.indices.reversed().makeIterator()
            while let (at, parent) = stack.popLast() ?? unreached.next().map({ ($0, nil) }) {
                guard seen.insert(at).inserted else { continue }
                let uuid = nodeID(all[at], at: at)
                let pieces = try self.messages(from: all[at], fallbackTime: conversationTime)
                var last = parent
                for (number, var piece) in pieces.enumerated() {
                    piece.nodeID = number == 0 ? uuid : unique("\(uuid)#\(number + 1)")
                    piece.parent = last.map { .index($0) } ?? .root
                    last = messages.count
                    messages.append(piece)
                }
                // By the message's own uuid, as the record names its current leaf.
                if let original = all[at].string("uuid"), hangOn[original] == nil { hangOn[original] = last }
                stack += (children[at] ?? []).sorted(by: byTime).reversed().map { ($0, last) }
            }
            // The branch the person was on, when the record says; else the newest leaf.
            current = record.string("current_leaf_message_uuid").flatMap { hangOn[$0] }.flatMap { $0 }
        } else {
            // Old exports without parents: one chain by time, the file's order breaking ties
            // (some list a follow-up before the message it follows).
            for at in all.indices.sorted(by: byTime) {
                let uuid = nodeID(all[at], at: at)
                for (number, var piece) in try self.messages(from: all[at], fallbackTime: conversationTime).enumerated() {
                    piece.nodeID = number == 0 ? uuid : unique("\(uuid)#\(number + 1)")
                    messages.append(piece)
                }
            }
        }
        guard !messages.isEmpty else { throw SkipReason("no messages") }
        let title = record.string("name").flatMap { ImportText.isBlank($0) ? nil : $0 } ?? ImportText.title(from: messages)
        let start = conversationTime ?? messages.first?.createdAt ?? Timestamp(milliseconds: 0)
        let updated = try ImportTime.iso8601(record.string("updated_at"), field: "updated_at") ?? messages.map(\.createdAt).max() ?? start
        return ImportedConversation(
            source: "claude", sourceID: id, title: title, model: record.string("model"), createdAt: start,
            updatedAt: max(updated, start), messages: messages, currentIndex: current)
    }

    private static func messages(from message: [String: Any], fallbackTime: Timestamp?) throws(SkipReason) -> [ImportedMessage] {
        let role: Role = message.string("sender") == "human" ? .user : .assistant
        let time = try ImportTime.iso8601(message.string("created_at"), field: "a message's created_at") ?? fallbackTime ?? Timestamp(milliseconds: 0)
        var result: [ImportedMessage] = []
        var text = ""
        // The message's files, which go with its last part (Claude's export holds their names,
        // and the text it drew out of documents, never their bytes).
        var files: [ImportedAttachment] = []
        func flush() {
            if !ImportText.isBlank(text) || !files.isEmpty {
                var part = ImportedMessage(role: role, content: text.trimmingCharacters(in: .newlines), createdAt: time)
                part.attachments = files
                files = []
                result.append(part)
            }
            text = ""
        }
        if let blocks = message.array("content"), !blocks.isEmpty {
            for case let block as [String: Any] in blocks {
                switch block.string("type") {
                case "text":
                    if let part = block.string("text"), !part.isEmpty { text += (text.isEmpty ? "" : "\n\n") + part }
                case "tool_use":
                    flush()
                    let input = block["input"].flatMap { try? JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]) }
                        .map { String(decoding: $0, as: UTF8.self) } ?? ""
                    let name = block.string("name") ?? "tool"
                    result.append(ImportedMessage(role: .tool, content: "\(name): \(input)", createdAt: time))
                case "tool_result":
                    flush()
                    let output: String
                    if let parts = block.array("content") {
                        output = parts.compactMap { ($0 as? [String: Any])?.string("text") ?? ($0 as? String) }.joined(separator: "\n")
                    } else {
                        output = block.string("content") ?? ""
                    }
                    if !ImportText.isBlank(output) {
                        result.append(ImportedMessage(role: .tool, content: output, createdAt: time))
                    }
                default:
                    break  // thinking, token_budget and anything newer
                }
            }
        } else {
            text = message.string("text") ?? ""
        }
        // Attachments stay with the message they came with: the text drawn out of a document
        // in the message too, as the model read it (and search finds it).
        let absent = "Claude's export holds no files, only their names (and the text of documents)"
        for case let attachment as [String: Any] in message.array("attachments") ?? [] {
            let name = ImportText.oneLine(attachment.string("file_name") ?? "attachment")
            let extracted = attachment.string("extracted_content").flatMap { ImportText.isBlank($0) ? nil : $0 }
            if let extracted { text += "\n\n[attachment: \(name)]\n" + ImportText.fenced(extracted) }
            let size = ChatGPTAttachments.whole(attachment["file_size"]).map { Int64($0) }
            files.append(
                ImportedAttachment(
                    name: name, mime: attachment.string("file_type").flatMap { $0.isEmpty ? nil : $0 }, size: size, extracted: extracted,
                    absence: absent))
        }
        for case let file as [String: Any] in message.array("files") ?? [] {
            let name = ImportText.oneLine(file.string("file_name") ?? "file")
            files.append(ImportedAttachment(name: name, reference: file.string("file_uuid"), absence: absent))
        }
        flush()
        return result
    }
}
