import Foundation
import ScrollbackModel
import TerminalText

/// The list of conversations: always at the bottom of the browser's stack. Its keys, their
/// handling, and what acts on the selected or marked conversations.
@MainActor
public final class ListScreen: BrowserScreenModel {
    public let list: ConversationListViewModel
    unowned let browser: BrowserViewModel

    init(list: ConversationListViewModel, browser: BrowserViewModel) {
        self.list = list
        self.browser = browser
    }

    public var kind: BrowserScreen { .list }

    public nonisolated static let title = "The list"

    public nonisolated static let bindings: [KeyBinding] =
        KeyBindings.moving(
            on: .list, pages: KeyBindings.pages(on: .list, down: "Scroll a page down (the selection keeps its line)", up: "Scroll a page up"))
        + [
            KeyBinding(.open, [.enter, .character("l"), .right], "Open the conversation", hint: "open", on: [.list], when: [.actsOnShown]),
            KeyBinding(.back, [.escape, .character("h"), .left], "Clear the marks, then the filter", on: [.list]),
            KeyBinding(.quit, [.character("q"), .control("c")], "Quit (Ctrl-C quits from anywhere)", hint: "quit", on: [.list]),
            KeyBinding(.search, [.character("/")], "Search everything, as you type", hint: "search", on: [.list]),
            KeyBinding(.nextMatch, [.character("n")], "Back to the last search's results", on: [.list], when: [.actsOnShown], repeats: true),
            KeyBinding(
                .filter, [.character("f")],
                "Filter: source:NAME model:NAME project:FOLDER since:DATE until:DATE pinned title:WORDS (plain words are the title's)", hint: "filter",
                on: [.list], when: [.actsOnShown]),
            KeyBinding(
                .narrow, [.character("\\")], "Narrow by title as you type (words as / finds them); Enter keeps it, Esc puts back the list", hint: "narrow",
                on: [.list], when: [.actsOnShown]),
            KeyBinding(
                .jumpToDate, [.character(":")], "Go to a date: the newest conversation at or before it (2025-03-14, 2025-03, 3w)", on: [.list],
                when: [.actsOnShown]),
            KeyBinding(.toggleMark, [.character(" ")], "Mark or unmark (marks act together: p, c, D)", on: [.list], when: [.actsOnShown]),
            KeyBinding(
                .pin, [.character("p")], "Pin or unpin (the marked ones); pinned come first in every order", on: [.list],
                when: [.actsOnShown, .writes(verb: "pin")]),
            KeyBinding.rename(on: .list), KeyBinding.delete(on: .list),
            KeyBinding(
                .deleteMarked, [.character("D")], "Delete every marked conversation (asks first)", on: [.list],
                when: [.actsOnShown, .writes(verb: "delete")]),
            KeyBinding.undo(on: .list), KeyBinding.redo(on: .list),
            KeyBinding(.cycleSort, [.character("s")], "Sort by updated, created or title", on: [.list]),
            KeyBinding(
                .overview, [.character("a")], "Activity overview: charts per month, model, source and busiest day of what the filter lets through",
                on: [.list], when: [.actsOnShown]),
            KeyBinding(
                .copyConversation, [.character("c")], "Copy as Markdown: the marked conversations, else the selected one", on: [.list],
                when: [.actsOnShown]),
            KeyBinding.pipe(on: .list),
            KeyBinding(
                .export, [.character("x")], "Export to a file (.md, .json, .jsonl): the marked conversations, else the selected one", on: [.list],
                when: [.actsOnShown]),
            KeyBinding.pager(on: .list), KeyBinding.editor(on: .list),
        ]

    public nonisolated static let helpNotes = [
        "Pinned conversations come first in every order.", "Editing a line: ← → Home End, Ctrl-A Ctrl-E Ctrl-W Ctrl-U, Alt-B Alt-F.",
    ]

    public func perform(_ command: BrowserCommand) throws -> ScreenAnswer {
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
                browser.status = "Marks cleared"
            } else if !list.filter.isEmpty {
                try list.setFilter(.none)
                browser.status = "Filter cleared: every conversation"
            }
        case .filter:
            browser.prompt = .filter(editor: LineEditor(text: list.filter.description, selected: true))
        case .narrow:
            browser.prompt = .narrow(
                editor: LineEditor(text: list.filter.title ?? "", selected: true), before: list.filter, selected: list.selected?.id,
                marks: list.marks)
        case .jumpToDate:
            guard list.order != .title else {
                browser.status = "Going to a date needs the updated or created order (s changes it)"
                break
            }
            browser.prompt = .jump(editor: LineEditor())
        case .quit: return .quit
        case .overview: browser.push(OverviewScreen(filter: list.filter, browser: browser))
        case .search: browser.openSearchPrompt()
        case .nextMatch:
            if let results = browser.lastResults { browser.push(results) } else { browser.status = "No search yet: / searches" }
        case .rename:
            guard let selected = list.selected else { break }
            browser.prompt = .rename(id: selected.id, editor: LineEditor(text: selected.title, limit: ConversationTitle.maximumLength, title: true))
        case .delete:
            guard let selected = list.selected else { break }
            browser.openQuestion(ids: [selected.id], titles: [selected.title], messages: selected.messageCount)
        case .toggleMark:
            list.toggleMark()
            try list.move(by: 1)
        case .deleteMarked:
            try askToDeleteMarked()
        case .undo: try browser.undo()
        case .redo: try browser.redo()
        case .cycleSort:
            let orders = ConversationOrder.allCases
            let next = orders[((orders.firstIndex(of: list.order) ?? 0) + 1) % orders.count]
            try list.setOrder(next)
            if !browser.isReadOnly { try browser.repositories.settings.set(next, for: .listSort) }
            browser.status = "Sorted by \(next.rawValue)"
        case .pin:
            try browser.pin(ids: list.marks.isEmpty ? list.selected.map { [$0.id] } ?? [] : list.marks.sorted())
        case .export:
            // Reading only: allowed in --readonly too.
            let order = list.order
            let ids =
                list.marks.isEmpty
                ? list.selected.map { [$0.id] } ?? []
                : try browser.repositories.conversations.conversations(ids: list.marks.sorted()).sorted { order.sorts($0, before: $1) }.map(\.id)
            guard !ids.isEmpty else { break }
            browser.openExportPrompt(ids: ids)
        case .copyConversation:
            try copyConversations()
        case .pipe, .pager, .editor:
            guard let selected = list.selected else { break }
            try browser.hand(selected, branch: nil, to: command)
        default:
            return .unhandled
        }
        return .handled
    }

    public func perform(_ command: BrowserCommand, times: Int) throws -> Bool {
        switch command {
        case .down, .up: try list.move(by: command == .down ? times : -times)
        case .undo, .redo: try browser.repeatUndo(times: min(times, BrowserViewModel.undoLevels), redoing: command == .redo)
        default: return false
        }
        return true
    }

    public func wheel(by delta: Int) throws { try list.move(by: delta) }

    public func click(line: Int, open: Bool) throws {
        let index = list.top + line
        guard index < list.total, list.row(at: index) != nil else { return }
        try list.move(by: index - list.selection)
        if open { try openSelected() }
    }

    public func footer(width: Int) -> ScreenFooter {
        var left = Self.position(list)
        if !list.marks.isEmpty { left += " · \(NumberText.grouped(list.marks.count)) marked" }
        return ScreenFooter(left: left, hints: [.help, .search, .quit], showsBackgroundNotes: true)
    }

    public func resize(width: Int, contentHeight: Int) { list.viewportHeight = contentHeight }

    /// `123 of 1,000,000`; `~123 of 1,000,000` while the index is being counted, `~` before
    /// the total too while another process's change is being counted.
    public static func position(_ list: ConversationListViewModel) -> String {
        guard list.total > 0 else { return "0 conversations" }
        let index = (list.isIndexExact ? "" : "~") + NumberText.grouped(list.selection + 1)
        guard list.filter.isEmpty || list.isTotalExact else {
            // Filtered, not counted yet: what is loaded is a lower bound.
            return "\(index) of \(NumberText.grouped(list.total))+ (filtered)"
        }
        let total = (list.isTotalExact ? "" : "~") + NumberText.grouped(list.total)
        return "\(index) of \(total)\(list.filter.isEmpty ? "" : " (filtered)")"
    }

    /// `D`: the question for every marked conversation still there.
    func askToDeleteMarked() throws {
        guard !list.marks.isEmpty else {
            browser.status = "Nothing is marked: Space marks a conversation"
            return
        }
        // What is asked about is what is there now: marks another process deleted go.
        try list.pruneMarks()
        let order = list.order
        let marked = try browser.repositories.conversations.conversations(ids: list.marks.sorted()).sorted { order.sorts($0, before: $1) }
        guard !marked.isEmpty else {
            browser.status = "The marked conversations were deleted meanwhile, by another process"
            return
        }
        browser.openQuestion(ids: marked.map(\.id), titles: marked.prefix(3).map(\.title), messages: marked.reduce(0) { $0 + $1.messageCount })
    }

    /// Narrows the list to the titles that hold `words` (the other filter words stay). The
    /// footer says what it did once Enter keeps it (`final`).
    func narrow(to words: String, final: Bool) throws {
        var filter = list.filter
        filter.title = ConversationFilter.titleWords(words)
        try list.setFilter(filter)
        guard final else { return }
        if let title = filter.title {
            browser.status = "Titles with “\(DisplayWidth.truncated(UntrustedText.sanitized(title), to: 40))” — \(escClears)"
        } else {
            browser.status = filter.isEmpty ? "Not narrowed: every conversation" : "Not narrowed by title"
        }
    }

    /// What Esc does next in the list: marks go first, then the filter.
    var escClears: String {
        list.marks.isEmpty ? "Esc clears the filter" : "Esc clears the marks, then the filter"
    }

    /// `c` in the list: the marked conversations, else the selected one, as Markdown, one
    /// after another as `export` writes them.
    func copyConversations() throws {
        let ids = list.marks.isEmpty ? list.selected.map { [$0.id] } ?? [] : list.marks.sorted()
        guard !ids.isEmpty else { return }
        guard ids.count <= BrowserViewModel.copyLimit else {
            browser.status = "Too many to copy (\(NumberText.grouped(ids.count)) marked): scrollback export writes them to a file"
            return
        }
        let order = list.order
        let conversations = try browser.repositories.conversations.conversations(ids: ids).sorted { order.sorts($0, before: $1) }
        guard !conversations.isEmpty else {
            browser.status = "Nothing copied: deleted meanwhile, by another process"
            return
        }
        let text = try conversations.map { try browser.markdown(of: $0, branch: nil) }.joined(separator: "\n---\n\n")
        let what = conversations.count == 1 ? "the conversation as Markdown" : "\(NumberText.grouped(conversations.count)) conversations as Markdown"
        browser.effect = .copy(text: text, what: what)
    }

    /// The selected conversation, in the reader over the list.
    func openSelected() throws {
        guard let conversation = list.selected else { return }
        try browser.openReader(conversation, at: 0, highlights: [])
    }
}
