import Foundation
import ScrollbackModel
import TerminalText

/// The reader: one conversation, its branch shown, over the list or the search results. Its
/// keys, their handling, finding in the conversation, and following other processes'
/// changes to it.
@MainActor
public final class ReaderScreen: BrowserScreenModel {
    public private(set) var reader: ReaderViewModel
    /// The conversations `f` left, newest last, with the message focused in each: Esc goes
    /// back through them before it leaves the reader.
    var trail: [(conversation: Int64, focus: Int)] = []
    unowned let browser: BrowserViewModel

    init(_ reader: ReaderViewModel, browser: BrowserViewModel) {
        self.reader = reader
        self.browser = browser
    }

    public var kind: BrowserScreen { .reader }

    public nonisolated static let title = "The reader"

    public nonisolated static let bindings: [KeyBinding] =
        KeyBindings.moving(
            on: .reader,
            pages: [
                KeyBinding(.pageDown, [.pageDown, .control("f"), .character(" ")], "Page down", on: [.reader], repeats: true),
                KeyBinding(.pageUp, [.pageUp, .control("b"), .character("b")], "Page up", on: [.reader], repeats: true),
            ])
        + [
            KeyBinding(.open, [.enter, .character("l"), .right], "Page down", on: [.reader]),
            KeyBinding(.back, [.escape, .character("h"), .left], "Back", hint: "back", on: [.reader]),
            KeyBinding(.quit, [.character("q")], "Back", on: [.reader]),
            KeyBinding(.search, [.character("/")], "Find in this conversation (the branch shown)", hint: "find", on: [.reader]),
            KeyBinding(
                .nextMatch, [.character("n")], "Next match in this conversation (wraps, and says so)", hint: "match", on: [.reader],
                repeats: true),
            KeyBinding(.previousMatch, [.character("N")], "Previous match in this conversation", on: [.reader], repeats: true),
            KeyBinding(.pin, [.character("p")], "Pin or unpin this conversation", on: [.reader], when: [.writes(verb: "pin")]),
            KeyBinding.rename(on: .reader), KeyBinding.delete(on: .reader), KeyBinding.undo(on: .reader), KeyBinding.redo(on: .reader),
            KeyBinding(.previousMessage, [.character("{")], "Focus the previous message", on: [.reader], repeats: true),
            KeyBinding(.nextMessage, [.character("}")], "Focus the next message", on: [.reader], repeats: true),
            KeyBinding(
                .previousVersion, [.character("[")], "Previous version of the focused message (‹ 2/3 ›)", hint: "version", on: [.reader],
                repeats: true),
            KeyBinding(.nextVersion, [.character("]")], "Next version; the rest follows its branch", on: [.reader], repeats: true),
            KeyBinding(.nextConversation, [.character("J")], "The next conversation of the list", on: [.reader], repeats: true),
            KeyBinding(.previousConversation, [.character("K")], "The previous conversation of the list", on: [.reader], repeats: true),
            KeyBinding(.outline, [.character("t")], "Outline of every branch, to show one", hint: "outline", on: [.reader]),
            KeyBinding(
                .toggleHidden, [.character("z")],
                "Show or hide the hidden messages (tool traffic, reasoning, context), dimmed and marked", on: [.reader]),
            KeyBinding(.toggleExpanded, [.tab], "Open or close the focused tool line (▸)", on: [.reader]),
            KeyBinding(.followLink, [.character("f")], "Open the subagent's conversation the focused tool result names; Esc comes back", on: [.reader]),
            KeyBinding(.copyMessage, [.character("y")], "Copy the focused message", hint: "copy", on: [.reader]),
            KeyBinding(.copyCode, [.character("Y")], "Copy the code block under the cursor", on: [.reader]),
            KeyBinding(.copyConversation, [.character("c")], "Copy the conversation as Markdown (the branch shown)", on: [.reader]),
            KeyBinding.pipe(on: .reader),
            KeyBinding(.export, [.character("x")], "Export this conversation to a file (.md, .json, .jsonl)", on: [.reader]),
            KeyBinding.pager(on: .reader), KeyBinding.editor(on: .reader),
            KeyBinding(
                .openAttachment, [.character("O")],
                "Open the focused message's attachment (▣) with the system's viewer; again, the next one", on: [.reader]),
            KeyBinding(.saveAttachment, [.character("S")], "Save the focused message's attachment (▣) to a file (asks where)", on: [.reader]),
        ]

    public nonisolated static let helpNotes = ["In a prompt: Enter accepts, Esc cancels."]

    /// Which attachment of each message `O` opens next (it goes on to the next each time).
    private var attachmentTurn: [Int64: Int] = [:]

    /// The focused message's attachment `O` and `S` act on: its stored ones in turn (`O`
    /// moves on, `S` takes the one opened last); nil, with the footer saying why, when it
    /// has none here.
    private func nextAttachment(advancing: Bool) -> AttachmentDTO? {
        guard let message = reader.focusedMessage, !message.attachments.isEmpty else {
            browser.status = "No attachment in this message ({ } move between messages; ▣ lines are attachments)"
            return nil
        }
        let stored = message.attachments.filter(\.isStored)
        let awaited = message.attachments.filter { !$0.isStored && $0.awaited != nil }
        if stored.isEmpty, let first = awaited.first, let hash = first.awaited {
            // On another machine: asked for now (its line says when it is here).
            guard let fetcher = browser.attachmentFetcher else {
                browser.status = "Not here yet: \(UntrustedText.sanitized(first.name)) is on another machine; \(browser.attachmentFetchUnavailable ?? "this browser cannot fetch it")"
                return nil
            }
            for attachment in awaited {
                if let hash = attachment.awaited { fetcher.request(sha256: hash, size: attachment.size, name: UntrustedText.sanitized(attachment.name), again: true) }
            }
            reader.fetchNotesChanged()
            let note = fetcher.note(for: hash)
            browser.status = "Not here yet: \(UntrustedText.sanitized(first.name)): \(note ?? "fetching from the sync server…") (O or S again once its line shows it here)"
            return nil
        }
        guard !stored.isEmpty else {
            browser.status = "Not here: this message's attachment\(message.attachments.count == 1 ? " is" : "s are") missing (their lines say why)"
            return nil
        }
        // `O` opens the next in turn; `S` saves the one `O` opened last (else the first).
        let opened = attachmentTurn[message.id]
        guard advancing else { return stored[((opened ?? 1) - 1) % stored.count] }
        let turn = (opened ?? 0) % stored.count
        attachmentTurn[message.id] = turn + 1
        return stored[turn]
    }

    /// The screen under this one: where it was opened from (the list, the search results).
    var origin: BrowserScreen { browser.kind(below: self) ?? .list }

    public func perform(_ command: BrowserCommand) throws -> ScreenAnswer {
        switch command {
        case .down: try reader.scroll(by: 1)
        case .up: try reader.scroll(by: -1)
        case .pageDown, .open: try reader.pageDown()
        case .pageUp: try reader.pageUp()
        case .halfPageDown: try reader.halfPageDown()
        case .halfPageUp: try reader.halfPageUp()
        case .top: try reader.toStart()
        case .bottom: try reader.toEnd()
        case .back, .quit:
            // Back from a subagent's conversation: to the one that started it, where it was.
            if command == .back, let last = trail.popLast(), let parent = try browser.repositories.conversations.conversation(id: last.conversation) {
                let kept = trail
                try show(parent, at: last.focus, highlights: [])
                trail = kept
                browser.status = "Back in “\(DisplayWidth.truncated(UntrustedText.sanitized(parent.title), to: 40))”"
                return .handled
            }
            browser.remove(self)
        case .followLink:
            try followLink()
        case .nextMatch, .previousMatch:
            if reader.find != nil {
                let wrapped = try reader.moveToMatch(forward: command == .nextMatch)
                if reader.find?.positions.count == 1 {
                    browser.status = "The only match in this conversation"
                } else if wrapped {
                    browser.status = command == .nextMatch ? "Wrapped to the first match" : "Wrapped to the last match"
                }
                return .handled
            }
            // n and N stay in this conversation: the next hit elsewhere is for the results.
            browser.status =
                origin == .results
                ? "No match in the text of this branch (Esc goes back to the results)"
                : "No search yet: / finds in this conversation"
        case .nextConversation, .previousConversation:
            // The list's next (previous) conversation, as mutt's J and K go through mail.
            guard origin == .list else {
                browser.status = "J and K go through the list: open a conversation from the list for them"
                return .handled
            }
            let forward = command == .nextConversation
            try browser.list.move(by: forward ? 1 : -1)
            guard let next = browser.list.selected, next.id != reader.conversation.id else {
                browser.status = forward ? "The last conversation of the list" : "The first conversation of the list"
                return .handled
            }
            try show(next, at: 0, highlights: [])
        case .search: browser.prompt = .find(editor: LineEditor(text: browser.lastQuery, selected: true))
        case .rename:
            // The conversation being read, as in the list.
            browser.prompt = .rename(
                id: reader.conversation.id, editor: LineEditor(text: reader.conversation.title, limit: ConversationTitle.maximumLength, title: true))
        case .delete:
            browser.openQuestion(ids: [reader.conversation.id], titles: [reader.conversation.title], messages: reader.conversation.messageCount)
        case .undo:
            try browser.undo()
            try browser.refreshReader()
        case .redo:
            try browser.redo()
            try browser.refreshReader()
        case .export:
            browser.openExportPrompt(ids: [reader.conversation.id])
        case .pin:
            try browser.pin(ids: [reader.conversation.id])
            if let fresh = try browser.repositories.conversations.conversation(id: reader.conversation.id) { try reader.reload(fresh) }
        case .openAttachment, .saveAttachment:
            guard let attachment = nextAttachment(advancing: command == .openAttachment) else { return .handled }
            if command == .openAttachment {
                browser.effect = .openAttachment(attachment)
            } else {
                browser.prompt = .saveAttachment(attachment: attachment, editor: LineEditor(text: "~/" + AttachmentText.fileName(attachment)))
            }
        case .copyMessage:
            guard let message = reader.focusedMessage else { return .handled }
            browser.effect = .copy(text: message.content, what: "message \(NumberText.grouped(reader.focus + 1))")
        case .copyCode:
            guard let block = reader.codeBlockUnderCursor else {
                browser.status = "No code block in this message (y copies the message; { } move between messages)"
                return .handled
            }
            browser.effect = .copy(
                text: block.text,
                what: block.count == 1
                    ? "the code block of message \(NumberText.grouped(reader.focus + 1))"
                    : "code block \(block.index + 1) of \(block.count) of message \(NumberText.grouped(reader.focus + 1))")
        case .copyConversation:
            browser.effect = .copy(
                text: try browser.markdown(of: reader.conversation, branch: reader.branch, showingHidden: reader.showsHidden),
                what: reader.showsHidden ? "the conversation as Markdown, hidden messages included (z)" : "the conversation as Markdown")
        case .pipe, .pager, .editor:
            try browser.hand(reader.conversation, branch: reader.branch, showingHidden: reader.showsHidden, to: command)
        case .previousMessage, .nextMessage:
            if try !reader.moveFocus(by: command == .nextMessage ? 1 : -1) {
                browser.status = command == .nextMessage ? "The last message" : "The first message"
            }
        case .previousVersion, .nextVersion:
            let forward = command == .nextVersion
            if let place = try reader.switchSibling(by: forward ? 1 : -1) {
                browser.status = "Version \(NumberText.grouped(place.index + 1)) of \(NumberText.grouped(place.count))" + choiceNote()
            } else if let place = reader.focusedSiblings {
                let count = NumberText.grouped(place.count)
                browser.status = forward ? "The last of \(count) versions" : "The first of \(count) versions"
            } else {
                browser.status = "This message has no other version (] and [ switch at ‹ 2/3 ›)"
            }
        case .toggleHidden:
            try toggleHidden()
        case .toggleExpanded:
            if !reader.toggleExpanded() {
                browser.status = "Tab opens a tool line (▸); this message is shown whole"
            }
        case .outline:
            guard let tree = reader.tree else {
                browser.status = "One branch: no other versions in this conversation"
                return .handled
            }
            let outline = try OutlineViewModel(tree: tree, messages: browser.repositories.messages, shownLeaf: reader.branch.leaf)
            outline.viewportHeight = browser.contentHeight
            browser.push(OutlineScreen(outline, over: self, browser: browser))
        default:
            return .unhandled
        }
        return .handled
    }

    public func perform(_ command: BrowserCommand, times: Int) throws -> Bool {
        switch command {
        case .down, .up: try reader.scroll(by: command == .down ? times : -times)
        case .undo, .redo:
            try browser.repeatUndo(times: min(times, BrowserViewModel.undoLevels), redoing: command == .redo)
            try browser.refreshReader()
        default: return false
        }
        return true
    }

    public func wheel(by delta: Int) throws { try reader.scroll(by: delta) }

    /// A click on a message focuses it.
    public func click(line: Int, open: Bool) throws {
        guard let clicked = reader.visibleLines.dropFirst(line).first else { return }
        _ = try reader.moveFocus(by: clicked.position - reader.focus)
    }

    public func footer(width: Int) -> ScreenFooter {
        let position = reader.focus + 1
        let count = reader.branchCount
        var left: String
        if count == 0, reader.conversation.hiddenCount > 0 {
            // Every message of it is hidden (a conversation of only context or tool traffic).
            left = "no message you saw · z shows the \(NumberText.grouped(reader.conversation.hiddenCount)) hidden"
        } else {
            left = "message \(NumberText.grouped(min(position, max(count, 1)))) of \(NumberText.grouped(count))"
        }
        if let find = reader.find {
            left += " · match \(NumberText.grouped(find.current + 1)) of \(NumberText.grouped(find.positions.count))"
        }
        let hints: [BrowserCommand] =
            reader.find != nil ? [.nextMatch, .back]
            : reader.focusedSiblings != nil ? [.previousVersion, .outline, .back]
            : [.search, .copyMessage, .back]
        return ScreenFooter(left: left, hints: hints, showsBackgroundNotes: true)
    }

    public func resize(width: Int, contentHeight: Int) { reader.resize(width: max(width, 1), height: contentHeight) }

    /// `conversation` in this reader instead of the one shown, at `position`.
    func show(_ conversation: ConversationDTO, at position: Int, highlights: [String]) throws {
        let fresh = try Self.makeReader(conversation, highlights: highlights, browser: browser)
        try fresh.open(at: position)
        trail = []
        reader = fresh
    }

    static func makeReader(_ conversation: ConversationDTO, highlights: [String], browser: BrowserViewModel) throws -> ReaderViewModel {
        let reader = try ReaderViewModel(
            conversation: conversation, messages: browser.repositories.messages, width: max(browser.width, 1), highlights: highlights,
            remembersChoices: !browser.isReadOnly)
        reader.viewportHeight = browser.contentHeight
        reader.dateFormat = browser.dateFormat
        reader.zone = browser.zone
        reader.imageCell = browser.imageCell
        reader.fetcher = browser.attachmentFetcher
        reader.fetchUnavailable = browser.attachmentFetchUnavailable
        return reader
    }

    /// After a branch was chosen: whether the choice lasts only until quitting, and why.
    func choiceNote() -> String {
        if browser.isReadOnly { return " · kept until you quit (read-only)" }
        guard let failure = reader.choiceFailure else { return "" }
        let reason = String(describing: failure).split(whereSeparator: \.isNewline).joined(separator: " ")
        return " · kept until you quit: " + UntrustedText.sanitized(reason)
    }

    /// `z`: the hidden messages shown or hidden, counted on the branch shown.
    func toggleHidden() throws {
        let hidden = reader.conversation.hiddenCount
        guard hidden > 0 || reader.showsHidden else {
            browser.status = "Nothing hidden: you saw every message of this conversation"
            return
        }
        // Counted on the branch shown, not the whole conversation: the rest are on others.
        // (The branch z shows holds the seen one, and the hidden messages on it.)
        let before = reader.branch.count
        try reader.setShowsHidden(!reader.showsHidden)
        if reader.showsHidden {
            let here = max(0, reader.branch.count - before)
            let elsewhere = hidden > here ? "; \(NumberText.grouped(hidden - here)) more on other branches (t)" : ""
            browser.status =
                here == 0
                ? "No hidden message on this branch" + elsewhere
                : "Showing \(NumberText.grouped(here)) hidden message\(here == 1 ? "" : "s"), dimmed (z hides them)" + elsewhere
        } else {
            browser.status = "Showing what you saw (z shows the hidden again)"
        }
        // A find goes on over what is shown now: matches in hidden messages come and go.
        if let query = reader.find?.query {
            reader.refreshFind(positions: try matchingPositions(of: query))
            if reader.find == nil { browser.status = (browser.status ?? "") + "; “\(UntrustedText.sanitized(query))” is only in hidden messages" }
        }
    }

    // MARK: Find in the conversation
    func find(_ text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else {
            reader.clearFind()
            return
        }
        browser.lastQuery = trimmed
        let positions = try matchingPositions(of: trimmed)
        guard !positions.isEmpty else {
            reader.clearFind()
            let repositories = browser.repositories
            if !reader.showsHidden, reader.conversation.hiddenCount > 0,
                try repositories.messages.messages(
                    ids: Array(try repositories.search.matchingMessageIDs(conversationID: reader.conversation.id, query: trimmed).prefix(500))
                ).contains(where: { !$0.kind.isSeen })
            {
                browser.status = "Only in hidden messages: “\(UntrustedText.sanitized(trimmed))” (z shows them, then find again)"
                return
            }
            browser.status =
                reader.tree == nil
                ? "Not in this conversation: “\(UntrustedText.sanitized(trimmed))”"
                : "Not on this branch: “\(UntrustedText.sanitized(trimmed))” (/ searches every branch from the list)"
            return
        }
        try reader.setFind(query: trimmed, positions: positions)
    }

    /// The positions along the branch shown of the messages that match `query`.
    func matchingPositions(of query: String) throws -> [Int] {
        let search = browser.repositories.search
        if reader.branch.path != nil {
            return reader.positions(of: try search.matchingMessageIDs(conversationID: reader.conversation.id, query: query)) ?? []
        }
        return try search.matchingPositions(conversationID: reader.conversation.id, query: query)
    }

    /// `f`: the conversation the focused message names on its last line (a subagent's, from
    /// the tool result it came back as), opened; Esc comes back here.
    func followLink() throws {
        guard let message = reader.focusedMessage, message.kind == .tool, let id = ConversationLink.subagent(in: message.content) else {
            browser.status = "This message names no subagent (f opens one from the tool result it came back as)"
            return
        }
        let target: ConversationDTO
        do {
            target = try browser.repositories.conversations.conversation(matching: id)
        } catch let error as StorageError {
            guard case .notFound = error else { throw error }
            let deleted = (try? browser.repositories.conversations.deleteMark(publicID: id)) != nil
            browser.status =
                deleted
                ? "The subagent's conversation was deleted (u in the list undoes a delete made there)"
                : "The subagent's conversation is not here: import its session's folder (subagents/ beside the session's file)"
            return
        }
        guard target.id != reader.conversation.id else { return }
        let kept = trail + [(conversation: reader.conversation.id, focus: reader.focus)]
        try show(target, at: 0, highlights: [])
        trail = kept
        browser.status = "The subagent's conversation (Esc goes back to the call)"
    }

    /// After another process's change: the conversation shows its new messages and branches
    /// (the outline over it too), or, deleted, the screen it was opened from says so.
    func refresh() throws {
        guard let fresh = try browser.repositories.conversations.conversation(id: reader.conversation.id) else {
            let title = DisplayWidth.truncated(UntrustedText.sanitized(reader.conversation.title), to: 40)
            browser.remove(self)
            browser.status = "“\(title)” was deleted by another process"
            return
        }
        let treeBefore = reader.tree?.count
        try reader.reload(fresh)
        // What is being found is found again in the text as it is now, the same match kept.
        if let find = reader.find {
            let current = find.positions.indices.contains(find.current) ? find.positions[find.current] : nil
            let positions = try matchingPositions(of: find.query)
            if positions.isEmpty {
                reader.clearFind()
            } else {
                try reader.setFind(query: find.query, positions: positions, keeping: current)
            }
        }
        guard let outline = browser.screens.last(where: { ($0 as? OutlineScreen)?.readerScreen === self }) as? OutlineScreen else { return }
        if let tree = reader.tree {
            guard tree.count != treeBefore else { return }
            let rebuilt = try OutlineViewModel(
                tree: tree, messages: browser.repositories.messages, shownLeaf: reader.branch.leaf, selecting: outline.outline.selected?.leaf)
            rebuilt.viewportHeight = outline.outline.viewportHeight
            outline.outline = rebuilt
        } else {
            browser.remove(outline)
        }
    }
}
