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

    /// Where a JSON Lines export puts the bytes of the files its conversations use.
    public enum FileBytes: Sendable, Equatable {
        /// In the export itself: `FilePiece` lines before the first conversation that uses
        /// each file (each file once).
        case inline
        /// As files of their own in `folder`, named by their SHA-256; a record names each by
        /// `link` (the folder as seen from the export's own folder), a slash and the hash.
        case folder(String, link: String)
    }
    public var fileBytes = FileBytes.inline
    /// Markdown: where the files are written beside it (`folder`), linked as `link/name`;
    /// nil: only named.
    public var markdownFiles: (folder: String, link: String)?

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

    /// One conversation alone (the JSON Lines record without its files' pieces).
    public func render(_ conversation: ConversationDTO, as format: ExportFormat) throws -> String {
        switch format {
        case .md: return try markdown(conversation)
        case .jsonl: return try Self.jsonLine(conversation, try allMessages(of: conversation), currentLeaf: try seenLeaf(of: conversation))
        case .json:
            let encoder = ScrollbackRecord.encoder()
            encoder.outputFormatting.insert(.prettyPrinted)
            let record = ScrollbackRecord(conversation: conversation, messages: try allMessages(of: conversation), currentLeaf: try seenLeaf(of: conversation))
            return String(decoding: try encoder.encode(record), as: UTF8.self)
        }
    }

    /// The conversation as Markdown, its attachments linked where `files` (by SHA-256) says.
    func markdown(_ conversation: ConversationDTO, files: [String: String] = [:]) throws -> String {
        let messages = try messages(of: conversation)
        var others: [MarkdownTranscript.OtherBranch] = []
        if conversation.isBranched {
            let all = try allMessages(of: conversation, showingHidden: showingHidden)
            others = MarkdownTranscript.otherBranches(
                all, tree: try store.messages.tree(conversationID: conversation.id, showingHidden: showingHidden), shown: messages.map(\.id))
        }
        return MarkdownTranscript.render(conversation, messages, otherBranches: others, files: files)
    }

    /// The last message of the branch shown by default, which JSON names as current: the
    /// stored current leaf, unless that is hidden (a regeneration that only reasoned; then
    /// the seen one it follows, as `show` and the reader have it).
    func seenLeaf(of conversation: ConversationDTO) throws -> Int64? {
        guard conversation.hiddenCount > 0 else { return conversation.currentLeafID }
        return try store.messages.branch(of: conversation, leaf: nil).leaf
    }

    /// One conversation as a JSON Lines record.
    static func jsonLine(
        _ conversation: ConversationDTO, _ messages: [MessageDTO], currentLeaf: Int64? = nil, files: [String: String] = [:]
    ) throws -> String {
        String(
            decoding: try ScrollbackRecord.encoder().encode(
                ScrollbackRecord(conversation: conversation, messages: messages, currentLeaf: currentLeaf, files: files)),
            as: UTF8.self)
    }

    /// The stored files the messages use, each once, in the order they first appear.
    static func fileHashes(in messages: [MessageDTO]) -> [String] {
        var seen = Set<String>()
        return messages.flatMap(\.attachments).compactMap(\.sha256).filter { seen.insert($0).inserted }
    }

    /// A file's bytes as `FilePiece` lines, 1 MiB a line, read from the store a piece at a
    /// time: the file is never whole in memory.
    func emitPieces(_ hash: String, _ emit: (String) throws -> Void) throws {
        guard let size = try store.attachmentFiles(prefix: hash, limit: 1).first(where: { $0.sha256 == hash })?.size else {
            throw ExportError(message: "the file \(hash.prefix(12)) was deleted while the export ran; export again")
        }
        let count = Int(FilePiece.count(forSize: size))
        var pending: [UInt8] = []
        pending.reserveCapacity(FilePiece.chunkSize)
        var index = 0
        try store.readAttachment(sha256: hash) { piece in
            var rest = piece[...]
            while !rest.isEmpty {
                let taken = rest.prefix(FilePiece.chunkSize - pending.count)
                pending += taken
                rest = rest.dropFirst(taken.count)
                if pending.count == FilePiece.chunkSize {
                    try emit(FilePiece.line(sha256: hash, size: size, index: index, count: count, bytes: pending) + "\n")
                    index += 1
                    pending.removeAll(keepingCapacity: true)
                }
            }
        }
        // The last piece (the whole of a small file; an empty one for an empty file).
        if !pending.isEmpty || index == 0 {
            try emit(FilePiece.line(sha256: hash, size: size, index: index, count: count, bytes: pending) + "\n")
        }
    }

    /// Writes a stored file to `path` (beside it, then moved into place: never half a
    /// file). `keepingSame`: a file already there with the same size is taken to be it (its
    /// name is its hash), and left.
    func writeFile(_ hash: String, to path: String, keepingSame: Bool = false) throws {
        if keepingSame, let size = try store.attachmentFiles(prefix: hash, limit: 1).first?.size {
            var status = stat()
            if lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, Int64(status.st_size) == size { return }
        }
        try ExportTarget.checkFile(path, force: true)
        let file = try ExportFile(replacing: path)
        do {
            try store.readAttachment(sha256: hash) { try file.write(bytes: $0) }
            try file.commit(force: true)
        } catch {
            file.discard()
            throw error
        }
    }

    /// A name for an attachment's file beside a Markdown export: its own name made safe (no
    /// `/`, no leading dot, no control or odd character), unique among those taken.
    static func fileName(for attachment: AttachmentDTO, avoiding taken: inout Set<String>) -> String {
        let safe = attachment.safeFileName
        let dot = safe.lastIndex(of: ".")
        let stem = dot.map { String(safe[..<$0]) } ?? safe
        let suffix = dot.map { String(safe[$0...]) } ?? ""
        var name = safe
        var number = 2
        while taken.contains(name.lowercased()) {
            name = "\(stem)-\(number)\(suffix)"
            number += 1
        }
        taken.insert(name.lowercased())
        return name
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
        // The files written so far (by SHA-256): each goes once; in Markdown, the name it got.
        var written: [String: String] = [:]
        var namesTaken = Set<String>()
        if format == .json { try emit("{\n\"conversations\" : [\n") }
        try each { conversation in
            switch format {
            case .md:
                var links: [String: String] = [:]
                if let markdownFiles {
                    for attachment in try store.attachments(conversation: conversation.id) {
                        guard let hash = attachment.sha256 else { continue }
                        if written[hash] == nil {
                            let name = Self.fileName(for: attachment, avoiding: &namesTaken)
                            if written.isEmpty { try ExportTarget.makeFolder(markdownFiles.folder) }
                            try writeFile(hash, to: PathText.appending(to: markdownFiles.folder, name))
                            written[hash] = name
                        }
                        links[hash] = PathText.appending(to: markdownFiles.link, written[hash] ?? "")
                    }
                }
                try emit((count == 0 ? "" : "\n---\n\n") + (try markdown(conversation, files: links)))
            case .json: try emit((count == 0 ? "" : ",\n") + (try render(conversation, as: format)))
            case .jsonl:
                let messages = try allMessages(of: conversation)
                var places: [String: String] = [:]
                for hash in Self.fileHashes(in: messages) {
                    switch fileBytes {
                    case .inline:
                        if written[hash] == nil { try emitPieces(hash, emit) }
                    case .folder(let folder, let link):
                        if written[hash] == nil {
                            if written.isEmpty { try ExportTarget.makeFolder(folder) }
                            try writeFile(hash, to: PathText.appending(to: folder, hash), keepingSame: true)
                        }
                        places[hash] = PathText.appending(to: link, hash)
                    }
                    written[hash] = hash
                }
                try emit(try Self.jsonLine(conversation, messages, currentLeaf: try seenLeaf(of: conversation), files: places) + "\n")
            }
            count += 1
        }
        if format == .json { try emit("\n]\n}\n") }
        return count
    }
}
