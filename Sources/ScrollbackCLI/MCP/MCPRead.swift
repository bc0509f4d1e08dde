import Foundation
import ScrollbackModel
import ScrollbackStorage

/// `read_conversation`: the messages along a branch from a place, as much text as the
/// budget holds; a message longer than what is left is cut at a character and goes on at
/// the next read (`next`, bound to this conversation, branch and database).
@MainActor
struct MCPRead {
    static let defaultBudget = 60_000
    static let minimumBudget = 1_000
    static let maximumBudget = 4_000_000

    let server: MCPServer

    struct Place: Equatable {
        /// The message's place on the branch, from 0, and the byte of its text to start at.
        var position: Int
        var offset: Int
    }

    func run(_ arguments: [String: JSONValue]) throws -> String {
        let store = server.store
        let conversation = try store.conversations.conversation(matching: arguments["id"]?.string ?? "")
        let hidden = arguments["hidden"] == .bool(true)
        let branchWord = arguments["branch"]?.string ?? "current"
        var leaf: Int64?
        if branchWord != "current" {
            let all = try store.messages.all(conversationID: conversation.id, showingHidden: true)
            guard let message = all.first(where: { $0.publicID == branchWord.lowercased() }) else {
                throw MCPError(code: -32602, message: "branch: no message \(MCPServer.quoted(branchWord)) in this conversation; give \"current\" or one of its message ids")
            }
            leaf = message.id
        }
        let branch = try store.messages.branch(of: conversation, leaf: leaf, showingHidden: hidden)
        let scope = "read \(conversation.publicID) \(branchWord.lowercased()) \(hidden)"
        let databaseID = try databaseID()
        var place = Place(position: 0, offset: 0)
        if let token = arguments["cursor"]?.string {
            place = try Self.place(from: token, databaseID: databaseID, scope: scope)
            if arguments["from"] != nil { throw MCPError(code: -32602, message: "give from or cursor, not both") }
        } else if case .integer(let from) = arguments["from"] {
            place.position = Int(clamping: from - 1)
        }
        var budget = Int(clamping: {
            if case .integer(let value) = arguments["max_bytes"] { return value }
            return Int64(Self.defaultBudget)
        }())
        var messages: [JSONValue] = []
        var next: Place?
        var position: PagePosition =
            place.position == 0 ? .first : .after(Cursor(.message(conversationID: conversation.id, position: Int64(place.position - 1))))
        reading: while place.position < branch.count {
            let page = try store.messages.page(branch, at: position, limit: 100)
            for message in page.items {
                let bytes = Array(message.content.utf8)
                let start = message.position == place.position ? min(place.offset, bytes.count) : 0
                if bytes.count - start > budget {
                    // The rest waits for the next read; the first message is cut instead, so
                    // that a read always moves on, however long a message is.
                    guard messages.isEmpty else {
                        next = Place(position: message.position, offset: start)
                        break reading
                    }
                    var end = Self.characterBoundary(in: bytes, atMost: start + budget)
                    if end <= start {
                        end = start + 1
                        while end < bytes.count && bytes[end] & 0xC0 == 0x80 { end += 1 }
                    }
                    messages.append(Self.json(message, content: bytes[start..<end], offset: start, complete: false, total: bytes.count))
                    next = Place(position: message.position, offset: end)
                    break reading
                }
                messages.append(Self.json(message, content: bytes[start...], offset: start, complete: true, total: bytes.count))
                budget -= bytes.count - start
            }
            guard let after = page.next else { break }
            position = .after(after)
        }
        // The conversation as every other tool gives it (`ConversationJSON`), and the branch's end.
        var shown = try JSONValue.encoding(ConversationJSON(conversation)).object ?? [:]
        if let leafID = try branch.leaf.flatMap({ try store.messages.messages(ids: [$0]).first?.publicID }) { shown["branchLeafID"] = .string(leafID) }
        var result: [String: JSONValue] = [
            "conversation": .object(shown), "branch": .string(branchWord.lowercased()), "total": .integer(Int64(branch.count)),
            "messages": .array(messages),
        ]
        if let next { result["next"] = .string(Self.token(next, databaseID: databaseID, scope: scope)) }
        return JSONValue.object(result).text
    }

    private func databaseID() throws -> String {
        let id = try server.store.settings.value(.databaseID)
        return id.isEmpty ? server.store.path : id
    }

    static func json(_ message: MessageDTO, content: ArraySlice<UInt8>, offset: Int, complete: Bool, total: Int) -> JSONValue {
        var members: [String: JSONValue] = [
            "id": .string(message.publicID), "number": .integer(Int64(message.position + 1)), "role": .string(message.role.rawValue),
            "kind": .string(message.kind.rawValue), "createdAt": .string(message.createdAt.iso8601),
            "content": .string(String(decoding: content, as: UTF8.self)), "contentBytes": .integer(Int64(total)),
            "complete": .bool(complete),
        ]
        if offset > 0 { members["offset"] = .integer(Int64(offset)) }
        if let model = message.model { members["model"] = .string(model) }
        if !message.attachments.isEmpty, let value = try? JSONValue.encoding(message.attachments.map { AttachmentJSON($0) }) {
            members["attachments"] = value
        }
        return .object(members)
    }

    /// The largest index at most `limit` that is not inside a UTF-8 sequence.
    static func characterBoundary(in bytes: [UInt8], atMost limit: Int) -> Int {
        var end = min(limit, bytes.count)
        while end > 0 && end < bytes.count && bytes[end] & 0xC0 == 0x80 { end -= 1 }
        return end
    }

    // MARK: Cursors

    static func token(_ place: Place, databaseID: String, scope: String) -> String {
        let body = "r\(place.position)-\(place.offset)"
        return body + "." + PageToken.hex(PageToken.check(databaseID)) + PageToken.hex(PageToken.check(scope + "\u{1F}" + body))
    }

    static func place(from token: String, databaseID: String, scope: String) throws -> Place {
        let again = "read without cursor to start from the first message"
        guard let dot = token.lastIndex(of: "."), token.distance(from: dot, to: token.endIndex) == 17 else {
            throw MCPError(code: -32602, message: "cursor: not a cursor of read_conversation; \(again)")
        }
        let body = String(token[..<dot])
        let checks = String(token[token.index(after: dot)...])
        guard checks.prefix(8) == PageToken.hex(PageToken.check(databaseID)) else {
            throw MCPError(code: -32602, message: "cursor: from another database, or changed; \(again)")
        }
        guard checks.suffix(8) == PageToken.hex(PageToken.check(scope + "\u{1F}" + body)) else {
            throw MCPError(code: -32602, message: "cursor: for another conversation or branch, or changed; \(again)")
        }
        let parts = body.dropFirst().split(separator: "-")
        guard body.hasPrefix("r"), parts.count == 2, let position = Int(parts[0]), let offset = Int(parts[1]), position >= 0, offset >= 0 else {
            throw MCPError(code: -32602, message: "cursor: not a cursor of read_conversation; \(again)")
        }
        return Place(position: position, offset: offset)
    }
}
