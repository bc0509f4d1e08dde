import Foundation
import ScrollbackModel
import TerminalText

/// The reader screen: its keys' handling, finding in the conversation, and following other processes' changes to it.
extension BrowserViewModel {
    func handleInReader(_ command: BrowserCommand) throws {
        guard let reader else {
            mode = .list
            return
        }
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
            if command == .back, let last = readerTrail.popLast(), let parent = try repositories.conversations.conversation(id: last.conversation) {
                let trail = readerTrail
                try openReader(parent, at: last.focus, highlights: [])
                readerTrail = trail
                status = "Back in “\(DisplayWidth.truncated(UntrustedText.sanitized(parent.title), to: 40))”"
                return
            }
            readerTrail = []
            mode = readerOrigin
            self.reader = nil
        case .followLink:
            try followLink(from: reader)
        case .nextMatch, .previousMatch:
            if reader.find != nil {
                let wrapped = try reader.moveToMatch(forward: command == .nextMatch)
                if reader.find?.positions.count == 1 {
                    status = "The only match in this conversation"
                } else if wrapped {
                    status = command == .nextMatch ? "Wrapped to the first match" : "Wrapped to the last match"
                }
                return
            }
            // n and N stay in this conversation: the next hit elsewhere is for the results.
            status =
                readerOrigin == .searchResults
                ? "No match in the text of this branch (Esc goes back to the results)"
                : "No search yet: / finds in this conversation"
        case .nextConversation, .previousConversation:
            // The list's next (previous) conversation, as mutt's J and K go through mail.
            guard readerOrigin == .list else {
                status = "J and K go through the list: open a conversation from the list for them"
                return
            }
            let forward = command == .nextConversation
            try list.move(by: forward ? 1 : -1)
            guard let next = list.selected, next.id != reader.conversation.id else {
                status = forward ? "The last conversation of the list" : "The first conversation of the list"
                return
            }
            try openReader(next, at: 0, highlights: [])
            readerOrigin = .list
        case .search: prompt = .find(editor: LineEditor(text: lastQuery, selected: true))
        case .help: openHelp()
        case .suspend: break  // the front end's (it owns the terminal)
        case .toggleMark, .deleteMarked, .cycleSort, .filter, .narrow, .jumpToDate:
            status = "Back to the list (Esc) to do that"
        case .rename:
            // The conversation being read, as in the list.
            guard allowWrite("rename") else { return }
            prompt = .rename(id: reader.conversation.id, editor: LineEditor(text: reader.conversation.title, limit: ConversationTitle.maximumLength, title: true))
        case .delete:
            guard allowWrite("delete") else { return }
            openQuestion(ids: [reader.conversation.id], titles: [reader.conversation.title], messages: reader.conversation.messageCount)
        case .undo:
            try undo()
            try refreshReader()
        case .redo:
            try redo()
            try refreshReader()
        case .export:
            openExportPrompt(ids: [reader.conversation.id])
        case .pin:
            guard allowWrite("pin") else { return }
            try pin(ids: [reader.conversation.id])
            if let fresh = try repositories.conversations.conversation(id: reader.conversation.id) { try reader.reload(fresh) }
        case .copyMessage:
            guard let message = reader.focusedMessage else { return }
            effect = .copy(text: message.content, what: "message \(NumberText.grouped(reader.focus + 1))")
        case .copyCode:
            guard let block = reader.codeBlockUnderCursor else {
                status = "No code block in this message (y copies the message; { } move between messages)"
                return
            }
            effect = .copy(
                text: block.text,
                what: block.count == 1
                    ? "the code block of message \(NumberText.grouped(reader.focus + 1))"
                    : "code block \(block.index + 1) of \(block.count) of message \(NumberText.grouped(reader.focus + 1))")
        case .copyConversation:
            effect = .copy(
                text: try markdown(of: reader.conversation, branch: reader.branch, showingHidden: reader.showsHidden),
                what: reader.showsHidden ? "the conversation as Markdown, hidden messages included (z)" : "the conversation as Markdown")
        case .pipe, .pager, .editor:
            try hand(reader.conversation, branch: reader.branch, showingHidden: reader.showsHidden, to: command)
        case .previousMessage, .nextMessage:
            if try !reader.moveFocus(by: command == .nextMessage ? 1 : -1) {
                status = command == .nextMessage ? "The last message" : "The first message"
            }
        case .previousVersion, .nextVersion:
            let forward = command == .nextVersion
            if let place = try reader.switchSibling(by: forward ? 1 : -1) {
                status = "Version \(NumberText.grouped(place.index + 1)) of \(NumberText.grouped(place.count))" + choiceNote(reader)
            } else if let place = reader.focusedSiblings {
                let count = NumberText.grouped(place.count)
                status = forward ? "The last of \(count) versions" : "The first of \(count) versions"
            } else {
                status = "This message has no other version (] and [ switch at ‹ 2/3 ›)"
            }
        case .toggleHidden:
            let hidden = reader.conversation.hiddenCount
            guard hidden > 0 || reader.showsHidden else {
                status = "Nothing hidden: you saw every message of this conversation"
                return
            }
            // Counted on the branch shown, not the whole conversation: the rest are on others.
            // (The branch z shows holds the seen one, and the hidden messages on it.)
            let before = reader.branch.count
            try reader.setShowsHidden(!reader.showsHidden)
            if reader.showsHidden {
                let here = max(0, reader.branch.count - before)
                let elsewhere = hidden > here ? "; \(NumberText.grouped(hidden - here)) more on other branches (t)" : ""
                status =
                    here == 0
                    ? "No hidden message on this branch" + elsewhere
                    : "Showing \(NumberText.grouped(here)) hidden message\(here == 1 ? "" : "s"), dimmed (z hides them)" + elsewhere
            } else {
                status = "Showing what you saw (z shows the hidden again)"
            }
            // A find goes on over what is shown now: matches in hidden messages come and go.
            if let query = reader.find?.query {
                reader.refreshFind(positions: try matchingPositions(of: query, in: reader))
                if reader.find == nil { status = (status ?? "") + "; “\(UntrustedText.sanitized(query))” is only in hidden messages" }
            }
        case .toggleExpanded:
            if !reader.toggleExpanded() {
                status = "Tab opens a tool line (▸); this message is shown whole"
            }
        case .outline:
            guard let tree = reader.tree else {
                status = "One branch: no other versions in this conversation"
                return
            }
            let outline = try OutlineViewModel(tree: tree, messages: repositories.messages, shownLeaf: reader.branch.leaf)
            outline.viewportHeight = contentHeight
            self.outline = outline
            mode = .outline
        }
    }

    /// After a branch was chosen: whether the choice lasts only until quitting, and why.
    func choiceNote(_ reader: ReaderViewModel) -> String {
        if isReadOnly { return " · kept until you quit (read-only)" }
        guard let failure = reader.choiceFailure else { return "" }
        let reason = String(describing: failure).split(whereSeparator: \.isNewline).joined(separator: " ")
        return " · kept until you quit: " + UntrustedText.sanitized(reason)
    }

    // MARK: Find in the conversation
    func find(_ text: String) throws {
        guard let reader else { return }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else {
            reader.clearFind()
            return
        }
        lastQuery = trimmed
        let positions = try matchingPositions(of: trimmed, in: reader)
        guard !positions.isEmpty else {
            reader.clearFind()
            if !reader.showsHidden, reader.conversation.hiddenCount > 0,
                try repositories.messages.messages(
                    ids: Array(try repositories.search.matchingMessageIDs(conversationID: reader.conversation.id, query: trimmed).prefix(500))
                ).contains(where: { !$0.kind.isSeen })
            {
                status = "Only in hidden messages: “\(UntrustedText.sanitized(trimmed))” (z shows them, then find again)"
                return
            }
            status = reader.tree == nil
                ? "Not in this conversation: “\(UntrustedText.sanitized(trimmed))”"
                : "Not on this branch: “\(UntrustedText.sanitized(trimmed))” (/ searches every branch from the list)"
            return
        }
        try reader.setFind(query: trimmed, positions: positions)
    }

    /// The positions along the branch shown of the messages that match `query`.
    func matchingPositions(of query: String, in reader: ReaderViewModel) throws -> [Int] {
        if reader.branch.path != nil {
            return reader.positions(of: try repositories.search.matchingMessageIDs(conversationID: reader.conversation.id, query: query)) ?? []
        }
        return try repositories.search.matchingPositions(conversationID: reader.conversation.id, query: query)
    }

    func openReader(_ conversation: ConversationDTO, at position: Int, highlights: [String]) throws {
        readerTrail = []
        let reader = try makeReader(conversation, highlights: highlights)
        try reader.open(at: position)
        self.reader = reader
        mode = .reader
    }

    /// `f`: the conversation the focused message names on its last line (a subagent's, from
    /// the tool result it came back as), opened; Esc comes back here.
    func followLink(from reader: ReaderViewModel) throws {
        guard let message = reader.focusedMessage, message.kind == .tool, let id = ConversationLink.subagent(in: message.content) else {
            status = "This message names no subagent (f opens one from the tool result it came back as)"
            return
        }
        let target: ConversationDTO
        do {
            target = try repositories.conversations.conversation(matching: id)
        } catch let error as StorageError {
            guard case .notFound = error else { throw error }
            let deleted = (try? repositories.conversations.deleteMark(publicID: id)) != nil
            status =
                deleted
                ? "The subagent's conversation was deleted (u in the list undoes a delete made there)"
                : "The subagent's conversation is not here: import its session's folder (subagents/ beside the session's file)"
            return
        }
        guard target.id != reader.conversation.id else { return }
        let trail = readerTrail + [(conversation: reader.conversation.id, focus: reader.focus)]
        try openReader(target, at: 0, highlights: [])
        readerTrail = trail
        status = "The subagent's conversation (Esc goes back to the call)"
    }

    func makeReader(_ conversation: ConversationDTO, highlights: [String]) throws -> ReaderViewModel {
        let reader = try ReaderViewModel(
            conversation: conversation, messages: repositories.messages, width: max(width, 1), highlights: highlights,
            remembersChoices: !isReadOnly)
        reader.viewportHeight = contentHeight
        reader.dateFormat = dateFormat
        return reader
    }

    /// After another process's change: the conversation being read shows its new messages
    /// and branches (the outline too), or, deleted, the screen it was opened from says so.
    func refreshReader() throws {
        guard let reader else { return }
        guard let fresh = try repositories.conversations.conversation(id: reader.conversation.id) else {
            let title = DisplayWidth.truncated(UntrustedText.sanitized(reader.conversation.title), to: 40)
            self.reader = nil
            outline = nil
            if mode == .reader || mode == .outline { mode = readerOrigin }
            status = "“\(title)” was deleted by another process"
            return
        }
        let treeBefore = reader.tree?.count
        try reader.reload(fresh)
        // What is being found is found again in the text as it is now, the same match kept.
        if let find = reader.find {
            let current = find.positions.indices.contains(find.current) ? find.positions[find.current] : nil
            let positions = try matchingPositions(of: find.query, in: reader)
            if positions.isEmpty {
                reader.clearFind()
            } else {
                try reader.setFind(query: find.query, positions: positions, keeping: current)
            }
        }
        if let outline, let tree = reader.tree {
            guard tree.count != treeBefore else { return }
            let rebuilt = try OutlineViewModel(
                tree: tree, messages: repositories.messages, shownLeaf: reader.branch.leaf, selecting: outline.selected?.leaf)
            rebuilt.viewportHeight = outline.viewportHeight
            self.outline = rebuilt
        } else if outline != nil {
            outline = nil
            mode = .reader
        }
    }
}
