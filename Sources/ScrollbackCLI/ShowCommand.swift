import ScrollbackModel
import ScrollbackStorage
import ScrollbackViewModels
import TerminalText

/// `scrollback show ID`: a conversation and the messages of its current branch, in order,
/// read page by page; with `--all-branches`, every message of its tree.
struct ShowCommand {
    let context: CommandContext

    /// The deepest level indented (two spaces a level); deeper messages are indented as this
    /// one and say their depth, so that a long conversation still fits a narrow terminal.
    static let indentCap = 6

    struct Output: Encodable {
        let conversation: ShownConversationJSON
        let messages: [ShownMessageJSON]
    }

    /// `--hidden`: the messages the person did not see too, each marked with its kind.
    private var showingHidden: Bool { context.parsed.has(.hidden) }

    /// What the text output says of a message's kind beside its role: nothing for text.
    static func kindLabel(_ kind: MessageKind) -> String? {
        switch kind {
        case .text: nil
        case .document, .tool: kind.rawValue
        case .reasoning, .internal, .unknown: "hidden \(kind.rawValue)"
        }
    }

    func run() throws {
        let store = try context.openStore(forReading: true)
        let conversation = try store.conversations.conversation(matching: context.parsed.positional[0])
        if context.parsed.has(.allBranches) {
            try showTree(of: conversation, in: store)
        } else {
            try showCurrentBranch(of: conversation, in: store)
        }
    }

    /// - Parameter branchCount: the messages of the branch shown, when only one is.
    /// - Parameter hiddenOnBranch: how many of the conversation's hidden messages lie on
    ///   the branch shown, when only one is (nil: all of them count).
    private func header(_ conversation: ConversationDTO, branchCount: Int?, branches: Int?, hiddenOnBranch: Int? = nil) {
        let console = context.console
        console.line(OutputFormat.line(conversation.title))
        var facts = ["id \(OutputFormat.line(conversation.publicID))"]
        if let model = conversation.model { facts.append("model \(OutputFormat.line(model))") }
        facts.append("source \(OutputFormat.line(conversation.source))")
        if let project = conversation.project { facts.append("project \(OutputFormat.line(project))") }
        if let branch = conversation.gitBranch { facts.append("branch \(OutputFormat.line(branch))") }
        facts.append("created \(TimeText.absolute(conversation.createdAt))")
        facts.append("updated \(TimeText.absolute(conversation.updatedAt))")
        let total = showingHidden ? conversation.messageCount : conversation.seenCount
        if let branchCount, branchCount != total {
            // The current branch is shown: say how much of the conversation that is.
            facts.append(
                "\(NumberText.grouped(branchCount)) of \(NumberText.grouped(total)) messages (the current branch; --all-branches shows them all)")
        } else {
            facts.append("\(NumberText.grouped(total)) messages")
        }
        if conversation.hiddenCount > 0 {
            let here = min(hiddenOnBranch ?? conversation.hiddenCount, conversation.hiddenCount)
            let elsewhere = conversation.hiddenCount - here
            if here > 0 {
                facts.append(
                    showingHidden
                        ? "\(NumberText.grouped(here)) of them hidden by default"
                        : "\(NumberText.grouped(here)) hidden (--hidden shows them)")
            }
            if elsewhere > 0 {
                facts.append(
                    "\(NumberText.grouped(elsewhere))\(here > 0 ? " more" : "") hidden on other branches (--all-branches --hidden shows them)")
            }
        }
        if let branches {
            facts.append(branches == 1 ? "1 branch" : "\(NumberText.grouped(branches)) branches")
        }
        console.line(facts.joined(separator: " · "))
    }

    private func showCurrentBranch(of conversation: ConversationDTO, in store: Store) throws {
        let console = context.console
        var position = PagePosition.first
        var messages: [ShownMessageJSON] = []
        var last: MessageDTO?
        // Found once: for a branched conversation, the ids along its branch.
        let branch = try store.messages.branch(of: conversation, leaf: nil, showingHidden: showingHidden)
        if !context.wantsJSON {
            // The hidden messages on this branch: the difference to it shown the other way.
            let hiddenOnBranch =
                conversation.hiddenCount > 0
                ? abs(branch.count - (try store.messages.branch(of: conversation, leaf: nil, showingHidden: !showingHidden).count)) : 0
            header(conversation, branchCount: branch.count, branches: nil, hiddenOnBranch: hiddenOnBranch)
        }
        while true {
            let page = try store.messages.page(branch, at: position, limit: 500)
            for message in page.items {
                if context.wantsJSON {
                    // Along the branch shown, a message follows the one before it (the hidden
                    // ones between them are not shown).
                    messages.append(ShownMessageJSON(message, parentID: last?.publicID))
                } else {
                    let model = message.model.map { " · \(OutputFormat.line($0))" } ?? ""
                    let kind = Self.kindLabel(message.kind).map { " · " + $0 } ?? ""
                    console.line()
                    console.line("── \(message.role.rawValue) · \(TimeText.absolute(message.createdAt))\(model)\(kind)")
                    console.line(OutputFormat.block(message.content))
                    for attachment in message.attachments { console.line(AttachmentText.line(attachment, width: 10_000)) }
                }
                last = message
            }
            guard let next = page.next else { break }
            position = .after(next)
        }
        if context.wantsJSON {
            let shown = ShownConversationJSON(conversation, currentLeafID: last?.publicID)
            console.line(try OutputFormat.json(Output(conversation: shown, messages: messages), for: console))
        }
    }

    /// Every message, depth first: each followed by the messages under it, siblings in time
    /// order.
    private func showTree(of conversation: ConversationDTO, in store: Store) throws {
        let console = context.console
        let all = try store.messages.all(conversationID: conversation.id, showingHidden: showingHidden)
        let tree = ConversationTree(nodes: all.map { (id: $0.id, parentID: $0.parentID) })
        var byID: [Int64: MessageDTO] = [:]
        for message in all { byID[message.id] = message }
        let leaf = try store.messages.branch(of: conversation, leaf: nil, showingHidden: showingHidden).leaf
        let currentBranch = Set(leaf.map { tree.path(to: $0) } ?? [])

        var ordered: [(message: MessageDTO, depth: Int)] = []
        ordered.reserveCapacity(all.count)
        var stack: [(id: Int64, depth: Int)] = tree.children(of: nil).reversed().map { ($0, 0) }
        var visited = Set<Int64>()
        while let (id, depth) = stack.popLast() {
            guard visited.insert(id).inserted, let message = byID[id] else { continue }
            ordered.append((message, depth))
            stack.append(contentsOf: tree.children(of: id).reversed().map { ($0, depth + 1) })
        }
        // A message no first message leads to (only a damaged database has one): still shown.
        for message in all where !visited.contains(message.id) { ordered.append((message, 0)) }

        if context.wantsJSON {
            let messages = ordered.map { entry in
                var json = ShownMessageJSON(entry.message, parentID: entry.message.parentID.flatMap { byID[$0]?.publicID })
                json.base.number = entry.depth + 1
                return json
            }
            let shown = ShownConversationJSON(conversation, currentLeafID: leaf.flatMap { byID[$0]?.publicID })
            console.line(try OutputFormat.json(Output(conversation: shown, messages: messages), for: console))
            return
        }
        header(conversation, branchCount: nil, branches: tree.branches.count)
        for (message, depth) in ordered {
            let indent = "  " + String(repeating: "  ", count: min(depth, Self.indentCap))
            let mark = currentBranch.contains(message.id) ? "*" : " "
            var facts = [message.role.rawValue, TimeText.absolute(message.createdAt)]
            if let model = message.model { facts.append(OutputFormat.line(model)) }
            if let kind = Self.kindLabel(message.kind) { facts.append(kind) }
            if let place = tree.siblingPlace(of: message.id), place.count > 1 { facts.append("‹\(place.index + 1)/\(place.count)›") }
            if depth > Self.indentCap { facts.append("depth \(depth)") }
            console.line()
            console.line(mark + indent.dropFirst() + "── " + facts.joined(separator: " · "))
            for line in OutputFormat.block(message.content).split(separator: "\n", omittingEmptySubsequences: false) {
                console.line(line.isEmpty ? "" : indent + line)
            }
            for attachment in message.attachments { console.line(indent + AttachmentText.line(attachment, width: 10_000)) }
        }
    }
}

/// A JSON object with one field more than `Base`'s: `show --json`'s conversation (its
/// `currentLeafID`, the public id of the current branch's last message) and messages (their
/// `parentID`); null when there is none.
struct WithField<Base: Encodable>: Encodable {
    var base: Base
    let name: String
    let value: String?

    private struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        try base.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(value, forKey: Key(stringValue: name))
    }
}

typealias ShownConversationJSON = WithField<ConversationJSON>
typealias ShownMessageJSON = WithField<MessageJSON>

extension WithField<ConversationJSON> {
    init(_ conversation: ConversationDTO, currentLeafID: String?) {
        self.init(base: ConversationJSON(conversation), name: "currentLeafID", value: currentLeafID)
    }
}

extension WithField<MessageJSON> {
    /// Its `position` is the message's place along the current branch; with
    /// `--all-branches`, its depth.
    init(_ message: MessageDTO, parentID: String?) {
        self.init(base: MessageJSON(message), name: "parentID", value: parentID)
    }
}
