import Foundation
import ScrollbackModel
import ScrollbackStorage

/// The formats `scrollback export` writes.
public enum ExportFormat: String, CaseIterable, Sendable {
    case md, json, jsonl

    var fileExtension: String { self == .md ? "md" : self == .json ? "json" : "jsonl" }

    /// How messages name it: `Markdown`, `JSON`, `JSON Lines`.
    public var name: String { self == .md ? "Markdown" : self == .json ? "JSON" : "JSON Lines" }
}

/// Writes conversations as Markdown, JSON or JSON Lines, one conversation in memory at a
/// time, oldest first.
public struct Exporter {
    let store: Store
    /// Markdown shows the messages the person did not see too (`--hidden`), each marked with
    /// its kind. The scrollback formats (JSON, JSON Lines) always hold every message.
    public var showingHidden: Bool

    public init(store: Store, showingHidden: Bool = false) {
        self.store = store
        self.showingHidden = showingHidden
    }

    /// Every conversation that passes `filter`, oldest first (by id, which follows the
    /// created time), a page at a time.
    public func forEachConversation(filter: ConversationFilter = .none, _ body: (ConversationDTO) throws -> Void) throws {
        var after: Int64?
        while true {
            let page = try store.conversations.oldestFirst(filter: filter, after: after, limit: 200)
            for conversation in page { try body(conversation) }
            guard page.count == 200, let last = page.last else { break }
            after = last.id
        }
    }

    /// The messages of the current branch, in order.
    public func messages(of conversation: ConversationDTO) throws -> [MessageDTO] {
        let branch = try store.messages.branch(of: conversation, leaf: nil, showingHidden: showingHidden)
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

    /// Every message of the conversation in the tree's own order (`treeOrder`), not the
    /// order they were stored in: two machines that received the same tree in another order
    /// export the same bytes.
    func allMessages(of conversation: ConversationDTO, showingHidden: Bool = true) throws -> [MessageDTO] {
        Self.treeOrder(try store.messages.all(conversationID: conversation.id, showingHidden: showingHidden))
    }

    /// Parents before children, depth first; a message's children (and the first messages)
    /// in the order of their time, then of their public ids, which every machine has the
    /// same. A message on a loop of parents (a damaged file; `check` finds it) comes after
    /// the rest, in the same order.
    static func treeOrder(_ messages: [MessageDTO]) -> [MessageDTO] {
        func before(_ a: MessageDTO, _ b: MessageDTO) -> Bool {
            a.createdAt != b.createdAt ? a.createdAt < b.createdAt : a.publicID < b.publicID
        }
        let ids = Set(messages.map(\.id))
        var children: [Int64?: [MessageDTO]] = [:]
        for message in messages {
            children[message.parentID.flatMap { ids.contains($0) ? $0 : nil }, default: []].append(message)
        }
        var ordered: [MessageDTO] = []
        ordered.reserveCapacity(messages.count)
        var seen = Set<Int64>()
        // An explicit stack: a chain of 200,000 messages is as deep as a tree gets.
        var stack = (children[nil] ?? []).sorted(by: before).reversed().map { $0 }
        while let next = stack.popLast() {
            guard seen.insert(next.id).inserted else { continue }
            ordered.append(next)
            stack += (children[next.id] ?? []).sorted(by: before).reversed()
        }
        if ordered.count < messages.count {
            ordered += messages.filter { !seen.contains($0.id) }.sorted(by: before)
        }
        return ordered
    }

    public func render(_ conversation: ConversationDTO, as format: ExportFormat) throws -> String {
        switch format {
        case .md:
            let messages = try messages(of: conversation)
            var others: [MarkdownTranscript.OtherBranch] = []
            if conversation.isBranched {
                let all = try allMessages(of: conversation, showingHidden: showingHidden)
                others = MarkdownTranscript.otherBranches(
                    all, tree: try store.messages.tree(conversationID: conversation.id, showingHidden: showingHidden), shown: messages.map(\.id))
            }
            return MarkdownTranscript.render(conversation, messages, otherBranches: others)
        case .jsonl: return try Self.jsonLine(conversation, try allMessages(of: conversation), currentLeaf: try seenLeaf(of: conversation))
        case .json:
            let encoder = ScrollbackRecord.encoder()
            encoder.outputFormatting.insert(.prettyPrinted)
            let record = ScrollbackRecord(conversation: conversation, messages: try allMessages(of: conversation), currentLeaf: try seenLeaf(of: conversation))
            return String(decoding: try encoder.encode(record), as: UTF8.self)
        }
    }

    /// The last message of the branch shown by default, which JSON names as current: the
    /// stored current leaf, unless that is hidden (a regeneration that only reasoned; then
    /// the seen one it follows, as `show` and the reader have it).
    func seenLeaf(of conversation: ConversationDTO) throws -> Int64? {
        guard conversation.hiddenCount > 0 else { return conversation.currentLeafID }
        return try store.messages.branch(of: conversation, leaf: nil).leaf
    }

    /// One conversation as a JSON Lines record.
    static func jsonLine(_ conversation: ConversationDTO, _ messages: [MessageDTO], currentLeaf: Int64? = nil) throws -> String {
        String(
            decoding: try ScrollbackRecord.encoder().encode(ScrollbackRecord(conversation: conversation, messages: messages, currentLeaf: currentLeaf)),
            as: UTF8.self)
    }

    /// A file name for one conversation: date, short id and a slug of the title.
    ///
    /// Built only from ASCII digits, hexadecimal digits of the id, letters and numbers of the
    /// title and `-`: never a `/`, a `..` or a control character, whatever the database holds.
    public static func fileName(for conversation: ConversationDTO, format: ExportFormat) -> String {
        let date = String(conversation.createdAt.iso8601.prefix(10).filter { $0.isASCII && ($0.isNumber || $0 == "-") })
        let shortID = String(conversation.publicID.lowercased().filter { $0.isASCII && $0.isHexDigit }.prefix(8))
        let slug = PathText.slug(of: conversation.title)
        return "\(date)-\(shortID.isEmpty ? "conversation" : shortID)\(slug.isEmpty ? "" : "-" + slug).\(format.fileExtension)"
    }

    /// The conversations `each` gives, one after another in `format` (Markdown parts
    /// between rules, a JSON document, JSON Lines), through `emit`; how many.
    public func write(
        format: ExportFormat, each: ((ConversationDTO) throws -> Void) throws -> Void,
        emit: @escaping (String) throws -> Void
    ) throws -> Int {
        var count = 0
        if format == .json { try emit("{\n\"conversations\" : [\n") }
        try each { conversation in
            let rendered = try render(conversation, as: format)
            switch format {
            case .md: try emit((count == 0 ? "" : "\n---\n\n") + rendered)
            case .json: try emit((count == 0 ? "" : ",\n") + rendered)
            case .jsonl: try emit(rendered + "\n")
            }
            count += 1
        }
        if format == .json { try emit("\n]\n}\n") }
        return count
    }
}
