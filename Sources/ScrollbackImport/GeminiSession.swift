import CCrypto
import Foundation
import ScrollbackModel

/// A Gemini CLI session (`~/.gemini/tmp/<project>/chats/session-*.json`, or `.jsonl` in
/// newer versions): one conversation keyed by its `sessionId`.
///
/// The `.json` file is one object (`sessionId`, `projectHash`, `startTime`, `lastUpdated`,
/// `messages`), written again whole as the session goes on: it is read whole each time it
/// changes, its messages found again by their ids. The `.jsonl` file is its metadata, then
/// records: a message (by `id`: a record with an id seen before replaces it), `$set` (the
/// metadata), `$rewindTo` (the session went back to that message: what follows hangs under
/// it, a branch beside what was there).
///
/// Seen: the prompts, the answers, each tool call with its result, collapsed. Hidden: the
/// thoughts (`reasoning`), info, warning and error lines of the CLI itself (`internal`),
/// and records of a type this version does not know (`unknown`).
enum GeminiSession {
    static let source = "gemini"

    static func conversations(
        path: String, from offset: Int, appended: Bool, fallbackID: String
    ) throws -> (conversations: [ImportedConversation], readTo: Int, skipped: [String]) {
        var records: [[String: Any]] = []
        var order: [String] = []
        var byID: [String: Int] = [:]
        var parentOf: [String: String?] = [:]
        var last: String?
        var meta: [String: Any] = [:]
        var skipped: [String] = []
        var readTo = 0
        if path.hasSuffix(".jsonl") {
            readTo = try SessionFile.lines(path, from: offset) { line in
                guard let object = (try? JSONSerialization.jsonObject(with: line.bytes)) as? [String: Any] else {
                    skipped.append("the line at byte \(line.offset) is not a JSON object: left out")
                    return
                }
                if let set = object.object("$set") {
                    meta.merge(set) { $1 }
                } else if let target = object.string("$rewindTo") {
                    last = target
                } else if let id = object.string("id"), object["type"] != nil || object["content"] != nil {
                    if let at = byID[id] {
                        records[at] = object
                    } else {
                        byID[id] = records.count
                        records.append(object)
                        order.append(id)
                        parentOf.updateValue(last, forKey: id)
                    }
                    last = id
                } else if object["sessionId"] != nil {
                    meta.merge(object) { $1 }
                } else {
                    records.append(["type": "\u{0}unknown", "raw": object, "id": "@\(line.offset)", "timestamp": object["timestamp"] ?? NSNull()])
                    order.append("@\(line.offset)")
                    parentOf.updateValue(last, forKey: "@\(line.offset)")
                    byID["@\(line.offset)"] = records.count - 1
                }
            }
        } else {
            // The whole object: read whole (it is rewritten, not appended to).
            guard let handle = FileHandle(forReadingAtPath: path) else { throw ImportError(path: path, problem: "cannot read the file") }
            defer { try? handle.close() }
            let data = try handle.readToEnd() ?? Data()
            readTo = data.count
            let root = try? JSONSerialization.jsonObject(with: data)
            if let history = checkpointHistory(root) {
                return (try checkpoint(history, path: path), readTo, skipped)
            }
            guard let object = root as? [String: Any] else {
                throw ImportError(path: path, problem: "not a Gemini CLI session (not a JSON object)")
            }
            meta = object
            for case let message as [String: Any] in object.array("messages") ?? [] {
                guard let id = message.string("id"), byID[id] == nil else { continue }
                byID[id] = records.count
                records.append(message)
                order.append(id)
                parentOf.updateValue(last, forKey: id)
                last = id
            }
        }
        var messages: [ImportedMessage] = []
        var unknown = 0
        var model: String?
        var firstTime = meta.string("startTime").flatMap(ImportTime.iso8601)
        var lastTime = meta.string("lastUpdated").flatMap(ImportTime.iso8601)
        for id in order {
            guard let record = byID[id].map({ records[$0] }) else { continue }
            let time = record.string("timestamp").flatMap(ImportTime.iso8601) ?? lastTime ?? firstTime ?? Timestamp(milliseconds: 0)
            if firstTime == nil { firstTime = time }
            lastTime = max(lastTime ?? time, time)
            let parent: ImportedParent = (parentOf[id] ?? nil).map { .node($0) } ?? (appended ? .afterStored : .root)
            let parts = self.parts(record, unknown: &unknown)
            if let name = record.string("model"), !name.isEmpty { model = name }
            for (index, part) in parts.enumerated() {
                let isLast = index == parts.count - 1
                var message = ImportedMessage(
                    role: part.role, content: part.text, createdAt: time, model: part.role == .assistant ? record.string("model") : nil,
                    nodeID: isLast ? id : "\(id)#\(index)", parent: index == 0 ? parent : .node("\(id)#\(index - 1)"),
                    usage: isLast ? part.usage : MessageUsage(), kind: part.kind)
                message.attachments = part.attachments
                messages.append(message)
            }
            // A message without parts: what follows hangs where it would have.
            if parts.isEmpty, let next = order.firstIndex(of: id).map({ $0 + 1 }), next < order.count, (parentOf[order[next]] ?? nil) == id {
                parentOf.updateValue(parentOf[id] ?? nil, forKey: order[next])
            }
        }
        guard !messages.isEmpty else { return ([], readTo, skipped) }
        // Appended records do not say whose they are: the first line of the file does.
        if meta.string("sessionId") == nil, appended, let first = firstLine(path) { meta.merge(first) { old, _ in old } }
        let id = meta.string("sessionId") ?? fallbackID
        let prompt = messages.first { $0.role == .user && $0.kind == .text }.map { ImportText.title(from: [$0]) }
        let start = firstTime ?? messages[0].createdAt
        var conversation = ImportedConversation(
            source: source, sourceID: id, title: appended ? "" : prompt ?? "Untitled session", model: model, createdAt: start,
            updatedAt: max(lastTime ?? start, start), messages: messages)
        conversation.isAppended = appended
        conversation.unknownParts = unknown
        conversation.project = project(of: path, hash: meta.string("projectHash"))
        return ([conversation], readTo, skipped)
    }

    /// The folder a session ran in. Gemini CLI keeps a project's sessions in
    /// `~/.gemini/tmp/<folder>/chats/`: since 2026 the folder is a short name with the
    /// project's path in its `.project_root`; before, it was the SHA-256 of the path (the
    /// session's `projectHash`), which `~/.gemini/projects.json` (path → short name) lets us
    /// find again by hashing the paths it lists. Nil when neither says.
    static func project(of sessionPath: String, hash: String?) -> String? {
        let chats = PathText.parent(of: sessionPath)
        guard PathText.lastComponent(of: chats) == "chats" else { return nil }
        return project(folder: PathText.parent(of: chats), hash: hash)
    }

    /// The folder a project's folder under `~/.gemini/tmp` stands for (see `project(of:hash:)`).
    static func project(folder: String, hash: String?) -> String? {
        if let marker = smallFile(PathText.appending(to: folder, ".project_root")),
            let line = String(decoding: marker, as: UTF8.self).split(whereSeparator: \.isNewline).first,
            isAbsolute(String(line))
        {
            return String(line)
        }
        let hash = (hash ?? PathText.lastComponent(of: folder)).lowercased()
        guard hash.count == 64, hash.allSatisfy(\.isHexDigit) else { return nil }
        // ~/.gemini/tmp/<folder> → ~/.gemini/projects.json
        let registry = PathText.appending(to: PathText.parent(of: PathText.parent(of: folder)), "projects.json")
        return RegistryHashes.shared.paths(in: registry)[hash]
    }

    /// Each `projects.json` read, its paths by their SHA-256: read and hashed once while it
    /// is unchanged (a folder of sessions asks for each one), not once per session.
    final class RegistryHashes: @unchecked Sendable {
        static let shared = RegistryHashes()
        private let lock = NSLock()
        private var read: [String: (stamp: [Int64], paths: [String: String])] = [:]

        func paths(in registry: String) -> [String: String] {
            var status = stat()
            guard stat(registry, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return [:] }
            let stamp = [Int64(status.st_size), Int64(status.st_mtim.tv_sec), Int64(status.st_mtim.tv_nsec), Int64(truncatingIfNeeded: status.st_ino)]
            lock.lock()
            defer { lock.unlock() }
            if let known = read[registry], known.stamp == stamp { return known.paths }
            var paths: [String: String] = [:]
            if let data = GeminiSession.smallFile(registry, limit: 64 << 20),
                let projects = ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any])?["projects"] as? [String: Any]
            {
                for path in projects.keys.sorted() where GeminiSession.isAbsolute(path) {
                    if let hash = GeminiSession.sha256(hex: path), paths[hash] == nil { paths[hash] = path }
                }
            }
            read[registry] = (stamp, paths)
            return paths
        }
    }

    static func isAbsolute(_ path: String) -> Bool {
        !path.isEmpty && path.count <= 4_096 && (path.hasPrefix("/") || (path.count > 2 && path.dropFirst().hasPrefix(":\\")))
    }

    /// A regular file of at most `limit` bytes, read; nil for anything else.
    static func smallFile(_ path: String, limit: Int = 4_096) -> Data? {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size >= 0, status.st_size <= limit,
            let handle = FileHandle(forReadingAtPath: path)
        else { return nil }
        defer { try? handle.close() }
        return try? handle.read(upToCount: limit + 1).flatMap { $0.count <= limit ? $0 : nil }
    }

    /// SHA-256 of `text`'s UTF-8, in lowercase hex, as Gemini CLI names a project's folder.
    static func sha256(hex text: String) -> String? {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let bytes = Array(text.utf8)
        let ok = bytes.withUnsafeBufferPointer { input in
            EVP_Digest(input.baseAddress, input.count, &digest, &length, EVP_sha256(), nil) == 1
        }
        guard ok, length == 32 else { return nil }
        return digest.map { String(format: "%02x", $0) }.joined()
    }

    typealias Part = ClaudeCodeSession.Part

    /// The history of a chat saved with `/chat save TAG`: a list of `{role, parts}` (before
    /// 2025), or `{history: [...]}`; nil for anything else (a session object has `messages`).
    static func checkpointHistory(_ root: Any?) -> [[String: Any]]? {
        let list = (root as? [Any]) ?? ((root as? [String: Any]).flatMap { $0["messages"] == nil ? $0["history"] as? [Any] : nil })
        guard let list else { return nil }
        let contents = list.compactMap { $0 as? [String: Any] }
        guard contents.count == list.count, contents.allSatisfy({ $0["parts"] is [Any] && $0["role"] is String }) else { return nil }
        return contents
    }

    /// A chat saved with `/chat save TAG` (`~/.gemini/tmp/<project>/checkpoint-TAG.json`),
    /// the model's history as Gemini's API keeps it: one conversation per saved tag (keyed
    /// by its project's folder and tag, titled `Saved chat: TAG`), a chain. The file names no
    /// times: every message is at the file's modification time. Seen: the prompts, the
    /// answers, each function call and its response (collapsed); hidden: thoughts, and the
    /// context Gemini CLI sends first (its "We are setting up the context" and the model's
    /// "Got it").
    static func checkpoint(_ history: [[String: Any]], path: String) throws -> [ImportedConversation] {
        var status = stat()
        guard stat(path, &status) == 0 else { throw ImportError(path: path, problem: "cannot read the file") }
        let seconds = Int64(status.st_mtim.tv_sec).multipliedReportingOverflow(by: 1_000)
        let time = Timestamp(milliseconds: seconds.overflow ? 0 : seconds.partialValue &+ Int64(status.st_mtim.tv_nsec / 1_000_000))
        let name = PathText.lastComponent(of: path)
        let encoded = String(name.dropFirst("checkpoint-".count).dropLast(".json".count))
        let tag = ImportText.oneLine(encoded.removingPercentEncoding ?? encoded)
        var messages: [ImportedMessage] = []
        var unknown = 0
        var context = true
        for (index, content) in history.enumerated() {
            let model = content.string("role") == "model"
            for case let part as [String: Any] in content.array("parts") ?? [] {
                let node = "\(index)#\(messages.count)"
                let made: (role: Role, text: String, kind: MessageKind)
                if let text = part.string("text") {
                    guard !ImportText.isBlank(text) else { continue }
                    if (part["thought"] as? Bool) == true {
                        made = (.assistant, text, .reasoning)
                    } else if context && index < 2
                        && (text.hasPrefix("This is the Gemini CLI. We are setting up the context") || (model && text.hasPrefix("Got it. Thanks for the context")))
                    {
                        made = (model ? .assistant : .user, text, .internal)
                    } else {
                        context = false
                        made = (model ? .assistant : .user, text, .text)
                    }
                } else if let call = part.object("functionCall") {
                    let arguments = call.object("args") ?? [:]
                    let main = ["command", "absolute_path", "file_path", "path", "pattern", "query", "url"].lazy.compactMap { arguments.string($0) }.first ?? ""
                    made = (.assistant, "\(call.string("name") ?? "tool")(\(ImportText.callArgument(main)))\n" + ChatGPTMessage.rawJSON(arguments), .tool)
                } else if let response = part.object("functionResponse") {
                    let body = response.object("response")
                    let output = body?.string("output") ?? body?.string("error").map { "Error: " + $0 } ?? body.map(ChatGPTMessage.rawJSON) ?? ""
                    made = (.tool, "\(response.string("name") ?? "tool") → " + (ImportText.isBlank(output) ? "(no output)" : output), .tool)
                } else if part["inlineData"] != nil {
                    // An image given inline: a message of its own holding it.
                    var message = ImportedMessage(role: model ? .assistant : .user, content: "", createdAt: time, nodeID: node, kind: .text)
                    message.attachments = inlineFiles([part])
                    messages.append(message)
                    continue
                } else {
                    unknown += 1
                    made = (model ? .assistant : .user, ChatGPTMessage.rawJSON(part), .unknown)
                }
                messages.append(ImportedMessage(role: made.role, content: made.text, createdAt: time, nodeID: node, kind: made.kind))
            }
        }
        guard !messages.isEmpty else { return [] }
        let folder = PathText.parent(of: path)
        var conversation = ImportedConversation(
            source: source, sourceID: "checkpoint/" + PathText.lastComponent(of: folder) + "/" + encoded,
            title: "Saved chat: " + (tag.isEmpty ? "untitled" : tag), model: nil, createdAt: time, updatedAt: time, messages: messages)
        conversation.unknownParts = unknown
        conversation.project = project(folder: folder, hash: nil)
        return [conversation]
    }

    /// The first line of the file as an object (its metadata), read alone.
    static func firstLine(_ path: String) -> [String: Any]? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 64 * 1024), let end = head.firstIndex(of: 0x0A) else { return nil }
        return (try? JSONSerialization.jsonObject(with: head[head.startIndex..<end])) as? [String: Any]
    }

    static func parts(_ record: [String: Any], unknown: inout Int) -> [Part] {
        let type = record.string("type") ?? ""
        let text = content(record["displayContent"] ?? record["content"])
        // Images given inline (`inlineData`: a pasted screenshot) are attachments.
        let files = inlineFiles(record["content"])
        switch type {
        case "user":
            guard !ImportText.isBlank(text) || !files.isEmpty else { return [] }
            var part = Part(role: .user, text: ImportText.isBlank(text) ? "" : text, kind: .text)
            part.attachments = files
            return [part]
        case "gemini", "model", "assistant":
            var parts: [Part] = []
            let thoughts = (record.array("thoughts") ?? []).compactMap { item -> String? in
                guard let thought = item as? [String: Any] else { return nil }
                let subject = thought.string("subject").map { "**\($0)**" }
                return [subject, thought.string("description")].compactMap { $0 }.joined(separator: "\n")
            }.filter { !ImportText.isBlank($0) }
            if !thoughts.isEmpty { parts.append(Part(role: .assistant, text: thoughts.joined(separator: "\n\n"), kind: .reasoning)) }
            if !ImportText.isBlank(text) || !files.isEmpty {
                var part = Part(role: .assistant, text: ImportText.isBlank(text) ? "" : text, kind: .text)
                part.attachments = files
                parts.append(part)
            }
            for case let call as [String: Any] in record.array("toolCalls") ?? [] {
                let name = call.string("displayName") ?? call.string("name") ?? "tool"
                let arguments = call.object("args") ?? [:]
                let main = ["command", "file_path", "absolute_path", "path", "pattern", "query", "url"].lazy.compactMap { arguments.string($0) }.first
                    ?? call.string("description") ?? ""
                var body = "\(name)(\(ImportText.callArgument(main)))"
                if let status = call.string("status"), status != "success" { body += " · \(status)" }
                let result = call.string("resultDisplay") ?? content(call["result"])
                if !ImportText.isBlank(result) { body += "\n" + result }
                parts.append(Part(role: .tool, text: body, kind: .tool))
            }
            if var last = parts.last, let tokens = record.object("tokens") {
                func count(_ key: String) -> Int64? {
                    guard let value = tokens.number(key), value.isFinite, value >= 0, value < 1e15 else { return nil }
                    return Int64(value.rounded(.down))
                }
                last.usage = MessageUsage(inputTokens: count("input"), outputTokens: count("output"))
                parts[parts.count - 1] = last
            }
            return parts
        case "info", "error", "warning":
            return ImportText.isBlank(text) ? [] : [Part(role: .system, text: "\(type): \(text)", kind: .internal)]
        default:
            unknown += 1
            let raw = record["raw"].map { ChatGPTMessage.rawJSON($0) } ?? ChatGPTMessage.rawJSON(record)
            return [Part(role: .system, text: raw, kind: .unknown)]
        }
    }

    /// The inline files of a list of parts (`{inlineData: {mimeType, data}}`), decoded.
    static func inlineFiles(_ value: Any?) -> [ImportedAttachment] {
        guard let parts = value as? [Any] else { return [] }
        var files: [ImportedAttachment] = []
        for case let part as [String: Any] in parts {
            guard let inline = part.object("inlineData"), let data = inline.string("data") else { continue }
            files.append(InlineAttachments.attachment(mime: inline.string("mimeType"), base64: data, number: files.count + 1))
        }
        return files
    }

    /// Text of a string or a list of parts (`{text}`, `{functionResponse}`…): the texts, and
    /// any other part as its JSON.
    static func content(_ value: Any?) -> String {
        if let text = value as? String { return text }
        if let part = value as? [String: Any] { return part.string("text") ?? ChatGPTMessage.rawJSON(part) }
        guard let parts = value as? [Any] else { return "" }
        return parts.map { item -> String in
            if let text = item as? String { return text }
            guard let part = item as? [String: Any] else { return "" }
            if let text = part.string("text") { return text }
            if let response = part.object("functionResponse")?.object("response") {
                return response.string("output") ?? ChatGPTMessage.rawJSON(response)
            }
            // Inline bytes are an attachment (`inlineFiles`), not text.
            if part["inlineData"] != nil { return "" }
            return ChatGPTMessage.rawJSON(part)
        }.filter { !$0.isEmpty }.joined(separator: "\n")
    }
}
