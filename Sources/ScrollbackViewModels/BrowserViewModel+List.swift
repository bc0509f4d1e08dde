import Foundation
import ScrollbackModel
import TerminalText

/// The list screen: its keys' handling, and what acts on the selected or marked conversations.
extension BrowserViewModel {
    /// Narrows the list to the titles that hold `words` (the other filter words stay). The
    /// footer says what it did once Enter keeps it (`final`).
    func narrowList(to words: String, final: Bool) throws {
        var filter = list.filter
        filter.title = ConversationFilter.titleWords(words)
        try list.setFilter(filter)
        guard final else { return }
        if let title = filter.title {
            status = "Titles with “\(DisplayWidth.truncated(UntrustedText.sanitized(title), to: 40))” — \(escClears)"
        } else {
            status = filter.isEmpty ? "Not narrowed: every conversation" : "Not narrowed by title"
        }
    }

    /// What Esc does next in the list: marks go first, then the filter.
    var escClears: String {
        list.marks.isEmpty ? "Esc clears the filter" : "Esc clears the marks, then the filter"
    }

    func handleInList(_ command: BrowserCommand) throws -> Bool {
        switch command {
        case .down: try list.move(by: 1)
        case .up: try list.move(by: -1)
        case .pageDown: try list.pageDown()
        case .pageUp: try list.pageUp()
        case .halfPageDown: try list.halfPageDown()
        case .halfPageUp: try list.halfPageUp()
        case .top: try list.moveToStart()
        case .bottom: try list.moveToEnd()
        case .open: try openSelected()
        case .back:
            // Esc clears the marks first, then the filter.
            if !list.marks.isEmpty {
                list.clearMarks()
                status = "Marks cleared"
            } else if !list.filter.isEmpty {
                try list.setFilter(.none)
                status = "Filter cleared: every conversation"
            }
        case .filter:
            prompt = .filter(editor: LineEditor(text: list.filter.description, selected: true))
        case .narrow:
            prompt = .narrow(
                editor: LineEditor(text: list.filter.title ?? "", selected: true), before: list.filter, selected: list.selected?.id,
                marks: list.marks)
        case .jumpToDate:
            guard list.order != .title else {
                status = "Going to a date needs the updated or created order (s changes it)"
                break
            }
            prompt = .jump(editor: LineEditor())
        case .quit: return false
        case .search: openSearchPrompt()
        case .nextMatch, .previousMatch:
            if search != nil { mode = .searchResults } else { status = "No search yet: / searches" }
        case .rename:
            guard let selected = list.selected, allowWrite("rename") else { break }
            prompt = .rename(id: selected.id, editor: LineEditor(text: selected.title, limit: ConversationTitle.maximumLength, title: true))
        case .delete:
            guard let selected = list.selected, allowWrite("delete") else { break }
            openQuestion(ids: [selected.id], titles: [selected.title], messages: selected.messageCount)
        case .toggleMark:
            list.toggleMark()
            try list.move(by: 1)
        case .deleteMarked:
            guard allowWrite("delete") else { break }
            guard !list.marks.isEmpty else {
                status = "Nothing is marked: Space marks a conversation"
                break
            }
            // What is asked about is what is there now: marks another process deleted go.
            try list.pruneMarks()
            let order = list.order
            let marked = try repositories.conversations.conversations(ids: list.marks.sorted())
                .sorted { order.sorts($0, before: $1) }
            guard !marked.isEmpty else {
                status = "The marked conversations were deleted meanwhile, by another process"
                break
            }
            openQuestion(
                ids: marked.map(\.id), titles: marked.prefix(3).map(\.title),
                messages: marked.reduce(0) { $0 + $1.messageCount })
        case .undo: try undo()
        case .redo: try redo()
        case .cycleSort:
            let orders = ConversationOrder.allCases
            let next = orders[((orders.firstIndex(of: list.order) ?? 0) + 1) % orders.count]
            try list.setOrder(next)
            if !isReadOnly { try repositories.settings.set(next, for: .listSort) }
            status = "Sorted by \(next.rawValue)"
        case .help: openHelp()
        case .suspend: break  // the front end's (it owns the terminal)
        case .previousMessage, .nextMessage, .previousVersion, .nextVersion, .outline, .nextConversation, .previousConversation,
            .toggleHidden, .toggleExpanded, .followLink:
            status = "Open a conversation (Enter) to do that"
        case .pin:
            guard allowWrite("pin") else { break }
            let ids = list.marks.isEmpty ? list.selected.map { [$0.id] } ?? [] : list.marks.sorted()
            try pin(ids: ids)
        case .export:
            // Reading only: allowed in --readonly too.
            let order = list.order
            let ids = list.marks.isEmpty
                ? list.selected.map { [$0.id] } ?? []
                : try repositories.conversations.conversations(ids: list.marks.sorted()).sorted { order.sorts($0, before: $1) }.map(\.id)
            guard !ids.isEmpty else { break }
            openExportPrompt(ids: ids)
        case .copyMessage:
            status = "Open a conversation (Enter) to copy one message; c copies it as Markdown"
        case .copyCode, .copyConversation:
            try copyConversations()
        case .pipe, .pager, .editor:
            guard let selected = list.selected else { break }
            try hand(selected, branch: nil, to: command)
        }
        return true
    }

    /// `c` (and `Y`) in the list: the marked conversations, else the selected one, as
    /// Markdown, one after another as `export` writes them.
    func copyConversations() throws {
        let ids = list.marks.isEmpty ? list.selected.map { [$0.id] } ?? [] : list.marks.sorted()
        guard !ids.isEmpty else { return }
        guard ids.count <= Self.copyLimit else {
            status = "Too many to copy (\(NumberText.grouped(ids.count)) marked): scrollback export writes them to a file"
            return
        }
        let order = list.order
        let conversations = try repositories.conversations.conversations(ids: ids).sorted { order.sorts($0, before: $1) }
        guard !conversations.isEmpty else {
            status = "Nothing copied: deleted meanwhile, by another process"
            return
        }
        let text = try conversations.map { try markdown(of: $0, branch: nil) }.joined(separator: "\n---\n\n")
        let what = conversations.count == 1 ? "the conversation as Markdown" : "\(NumberText.grouped(conversations.count)) conversations as Markdown"
        effect = .copy(text: text, what: what)
    }

    /// The export prompt, with a name made from the title (one conversation) or the count
    /// and the day (several), in the folder and format of the last export, if any.
    func openExportPrompt(ids: [Int64]) {
        let day = String(now().iso8601.prefix(10))
        let title = ids.count == 1 ? (try? repositories.conversations.conversations(ids: ids))?.first?.title : nil
        let slug = title.map { PathText.slug(of: $0) } ?? ""
        let name = ids.count > 1 ? "\(ids.count)-conversations-\(day)" : slug.isEmpty ? "conversation-\(day)" : slug
        var folder = "", fileExtension = "md"
        if let last = lastExport {
            folder = PathText.parent(of: last)
            let lastName = PathText.lastComponent(of: last)
            if let dot = lastName.lastIndex(of: "."), ["md", "json", "jsonl"].contains(String(lastName[lastName.index(after: dot)...])) {
                fileExtension = String(lastName[lastName.index(after: dot)...])
            }
        }
        let suggested = PathText.appending(to: folder, name + "." + fileExtension)
        prompt = .export(ids: ids, editor: LineEditor(text: suggested, selected: true))
    }

    func openSelected() throws {
        guard let conversation = list.selected else { return }
        try openReader(conversation, at: 0, highlights: [])
        readerOrigin = .list
    }
}
