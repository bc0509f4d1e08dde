import Foundation
import ScrollbackModel
import ScrollbackStorage

/// The formats `scrollback export` writes.
public enum ExportFormat: String, CaseIterable, Sendable {
    case md, json, jsonl

    var fileExtension: String { self == .md ? "md" : self == .json ? "json" : "jsonl" }
}

/// Writes conversations as Markdown, JSON or JSON Lines, one conversation in memory at a
/// time, oldest first.
public struct Exporter {
    let store: Store

    public init(store: Store) {
        self.store = store
    }

    /// Every conversation, oldest first (created, then id), a page at a time.
    public func forEachConversation(_ body: (ConversationDTO) throws -> Void) throws {
        var position = PagePosition.last
        while true {
            let page = try store.conversations.page(sort: .created, at: position, limit: 200)
            for conversation in page.items.reversed() { try body(conversation) }
            guard let previous = page.previous else { break }
            position = .before(previous)
        }
    }

    /// The messages of the current branch, in order.
    public func messages(of conversation: ConversationDTO) throws -> [MessageDTO] {
        let branch = try store.messages.branch(of: conversation, leaf: nil)
        var messages: [MessageDTO] = []
        var position = PagePosition.first
        while true {
            let page = try store.messages.page(branch, at: position, limit: 1_000)
            messages += page.items
            guard let next = page.next else { break }
            position = .after(next)
        }
        return messages
    }

    public func render(_ conversation: ConversationDTO, as format: ExportFormat) throws -> String {
        switch format {
        case .md:
            let messages = try messages(of: conversation)
            var others: [OtherBranch] = []
            if conversation.isBranched {
                let all = try store.messages.all(conversationID: conversation.id)
                others = Self.otherBranches(all, tree: try store.messages.tree(conversationID: conversation.id), current: messages.last?.id)
            }
            return Self.markdown(conversation, messages, otherBranches: others)
        case .jsonl: return try Self.jsonLine(conversation, try store.messages.all(conversationID: conversation.id))
        case .json:
            let encoder = ScrollbackRecord.encoder()
            encoder.outputFormatting.insert(.prettyPrinted)
            let record = ScrollbackRecord(conversation: conversation, messages: try store.messages.all(conversationID: conversation.id))
            return String(decoding: try encoder.encode(record), as: UTF8.self)
        }
    }

    /// A branch other than the one exported, as Markdown notes it.
    struct OtherBranch: Equatable {
        /// The place along the branch where it leaves the others (1-based).
        var number: Int
        var role: Role
        var firstLine: String
    }

    static func otherBranches(_ messages: [MessageDTO], tree: ConversationTree, current: Int64?) -> [OtherBranch] {
        var byID: [Int64: MessageDTO] = [:]
        for message in messages { byID[message.id] = message }
        return tree.branches.filter { $0.leaf != current }.compactMap { branch in
            guard let start = byID[branch.start] else { return nil }
            let line = start.content.split(separator: "\n").first { !$0.trimmingCharacters(in: .whitespaces).isEmpty } ?? ""
            return OtherBranch(number: tree.depth(of: branch.start) + 1, role: start.role, firstLine: String(line.prefix(120)))
        }
    }

    static func jsonLine(_ conversation: ConversationDTO, _ messages: [MessageDTO]) throws -> String {
        String(decoding: try ScrollbackRecord.encoder().encode(ScrollbackRecord(conversation: conversation, messages: messages)), as: UTF8.self)
    }

    /// Title, facts, then each message of the current branch under a role heading; message
    /// text as it is, so code fences survive. The other branches are listed at the end by
    /// their first lines.
    static func markdown(_ conversation: ConversationDTO, _ messages: [MessageDTO], otherBranches: [OtherBranch] = []) -> String {
        var text = "# \(conversation.title)\n\n"
        text += "- id: \(conversation.publicID)\n"
        text += "- created: \(conversation.createdAt.iso8601)\n"
        text += "- updated: \(conversation.updatedAt.iso8601)\n"
        if let model = conversation.model { text += "- model: \(model)\n" }
        text += "- source: \(conversation.source)\(conversation.sourceID.map { " (\($0))" } ?? "")\n"
        for message in messages {
            let role = message.role.rawValue.prefix(1).uppercased() + message.role.rawValue.dropFirst()
            text += "\n## \(role) · \(message.createdAt.iso8601)\(message.model.map { " · \($0)" } ?? "")\n\n"
            text += message.content + "\n"
        }
        if !otherBranches.isEmpty {
            let count = otherBranches.count
            text += "\n---\n\n\(count) other branch\(count == 1 ? "" : "es") (`scrollback show --all-branches \(conversation.publicID.prefix(8))`):\n\n"
            for branch in otherBranches {
                text += "- at message \(branch.number), \(branch.role.rawValue): \(branch.firstLine)\n"
            }
        }
        return text
    }

    /// A file name for one conversation: date, short id and a slug of the title.
    ///
    /// Built only from ASCII digits, hexadecimal digits of the id, letters and numbers of the
    /// title and `-`: never a `/`, a `..` or a control character, whatever the database holds.
    public static func fileName(for conversation: ConversationDTO, format: ExportFormat) -> String {
        let date = String(conversation.createdAt.iso8601.prefix(10).filter { $0.isASCII && ($0.isNumber || $0 == "-") })
        let shortID = String(conversation.publicID.lowercased().filter { $0.isASCII && $0.isHexDigit }.prefix(8))
        var slug = ""
        for character in conversation.title.lowercased() {
            // Letters and numbers only (no marks, controls, format characters or dots);
            // the scalar test keeps out characters that merely combine into a letter.
            if (character.isLetter || character.isNumber)
                && character.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || $0.properties.numericType != nil })
            {
                slug.append(character)
            } else if !slug.isEmpty && slug.last != "-" {
                slug.append("-")
            }
            if slug.count >= 40 { break }
        }
        while slug.last == "-" { slug.removeLast() }
        return "\(date)-\(shortID.isEmpty ? "conversation" : shortID)\(slug.isEmpty ? "" : "-" + slug).\(format.fileExtension)"
    }
}
