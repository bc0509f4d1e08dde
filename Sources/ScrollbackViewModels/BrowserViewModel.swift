import ScrollbackModel
import TerminalText

/// The whole browser: which screen is showing, the prompt if one is open, the footer's
/// message, undo. Takes keys, talks to repositories, and exposes plain values to draw.
@MainActor
public final class BrowserViewModel {
    public enum Mode: Equatable, Sendable {
        case list, reader, searchResults
        /// The outline of the branches of the conversation being read.
        case outline
    }

    public enum Prompt: Equatable, Sendable {
        /// Delete these? `titles` are those of the first few, `messages` the total.
        case confirmDelete(ids: [Int64], titles: [String], messages: Int)
        case rename(id: Int64, editor: LineEditor)
        case search(editor: LineEditor)
        /// Finding within the conversation being read.
        case find(editor: LineEditor)
        /// The shell command `|` pipes the conversation to.
        case pipe(editor: LineEditor)
        /// The list's filter (`f`): `source:claude model:gpt-4o since:2025-01 pinned`.
        case filter(editor: LineEditor)
        /// A date to go to (`:`).
        case jump(editor: LineEditor)
        /// The file to export these conversations to (`x`).
        case export(ids: [Int64], editor: LineEditor)
    }

    /// What the front end is asked to do next (copy, run a program), taken with `takeEffect`.
    public private(set) var effect: BrowserEffect?

    /// The effect asked for, once: the front end does it, then calls `effectDone`.
    public func takeEffect() -> BrowserEffect? {
        defer { effect = nil }
        return effect
    }

    /// What became of the effect, for the footer ("Copied message 4 (1,234 characters)…").
    public func effectDone(_ message: String) {
        status = message
    }

    /// The most conversations copied at once (more is an export's job).
    public static let copyLimit = 1_000

    /// The delete question as it fits `width` columns, when one is open.
    public func deleteQuestion(width: Int) -> String? {
        guard case .confirmDelete(let ids, let titles, let messages) = prompt else { return nil }
        return DeleteQuestion.text(titles: titles, count: ids.count, messages: messages, answers: "(y/n)", width: width)
    }

    private enum UndoAction {
        case deleted([ConversationSnapshot])
        case renamed(id: Int64, title: String)
        /// These were set to `pinned` (they were the other way before).
        case pinned(ids: [Int64], pinned: Bool)
    }

    public struct Repositories {
        public var conversations: any ConversationRepository
        public var messages: any MessageRepository
        public var search: any SearchRepository
        public var settings: any SettingsRepository

        public init(
            conversations: any ConversationRepository, messages: any MessageRepository, search: any SearchRepository,
            settings: any SettingsRepository
        ) {
            self.conversations = conversations
            self.messages = messages
            self.search = search
            self.settings = settings
        }
    }

    public private(set) var mode: Mode = .list
    public private(set) var prompt: Prompt?
    /// A one-line message for the footer (beside an open editor); cleared by the next key.
    public private(set) var status: String?
    public private(set) var showingHelp = false
    /// The first line of the help shown (it scrolls when it does not fit).
    public private(set) var helpTop = 0
    /// Rows the mouse wheel scrolls.
    public var wheelStep = 3
    /// The keys in use (the standard ones, with the config file's changes).
    public var keymap = Keymap.standard
    /// How the reader writes times (strftime), when the config file says.
    public var dateFormat: String?

    /// The screen showing: its keymap is the one keys go by.
    public var screen: BrowserScreen {
        switch mode {
        case .list: .list
        case .reader: .reader
        case .searchResults: .results
        case .outline: .outline
        }
    }
    public let list: ConversationListViewModel
    public private(set) var reader: ReaderViewModel?
    public private(set) var search: SearchViewModel?
    public private(set) var outline: OutlineViewModel?
    public let isReadOnly: Bool
    /// Shown in the header.
    public let databasePath: String
    /// True when the read-only view is a snapshot that does not see other writers.
    public let isSnapshot: Bool
    /// The current time, for relative times.
    public let now: () -> Timestamp

    private let repositories: Repositories
    /// Runs searches away from the main actor; nil runs them here (in-memory databases).
    private let searchRunner: (any SearchRunner)?
    /// A search still running in the background, and its query.
    private var pendingSearch: (query: String, job: any SearchJob)?
    /// When the search for what is typed in the prompt starts (results follow the typing,
    /// once it pauses for `searchDelay`).
    private var searchDue: (query: String, at: Timestamp)?
    /// What the screen showed when the search prompt opened, for Esc to go back to.
    private var beforeSearchPrompt: (mode: Mode, search: SearchViewModel?)?
    /// How long typing must pause before the search runs, in milliseconds.
    public static let searchDelay: Int64 = 150
    /// How far building the search index has come (0 to 1) while it is rebuilt; nil when
    /// the index is complete.
    public private(set) var indexingProgress: Double?
    private var undoAction: UndoAction?
    private var readerOrigin: Mode = .list
    private var lastQuery = ""
    private var changeToken: Int64 = 0
    /// False from the moment a yes/no question opens until the front end has drawn it:
    /// keys already queued (a paste, a burst) must not answer a question not yet seen.
    private var questionShown = false
    public private(set) var width = 80
    public private(set) var height = 24

    public init(
        repositories: Repositories, databasePath: String, isReadOnly: Bool, isSnapshot: Bool = false,
        searchRunner: (any SearchRunner)? = nil, positionRunner: (any PositionRunner)? = nil,
        now: @escaping () -> Timestamp = { .now() }
    ) throws {
        self.repositories = repositories
        self.searchRunner = searchRunner
        self.databasePath = databasePath
        self.isReadOnly = isReadOnly
        self.isSnapshot = isSnapshot
        self.now = now
        list = ConversationListViewModel(
            conversations: repositories.conversations, order: try repositories.settings.value(.listSort))
        list.positionRunner = positionRunner
    }

    /// Loads the first page.
    public func start() throws {
        changeToken = try repositories.conversations.changeToken()
        try list.load()
    }

    /// Rows between the header and the footer.
    public var contentHeight: Int { max(height - 2, 0) }

    public func resize(width: Int, height: Int) {
        self.width = max(width, 0)
        self.height = max(height, 0)
        list.viewportHeight = contentHeight
        search?.viewportHits = max(contentHeight / 2, 1)
        reader?.resize(width: max(width, 1), height: contentHeight)
        outline?.viewportHeight = contentHeight
    }

    // MARK: Keys

    /// The front end calls this after each frame it drew. Returns true when a yes/no
    /// question has just become visible: keys queued before that should be discarded.
    @discardableResult
    public func promptShown() -> Bool {
        guard case .confirmDelete = prompt, !questionShown, !isTooSmall else { return false }
        questionShown = true
        return true
    }

    /// The smallest screen the browser draws on; below it, it says so and takes no keys.
    public static let minimumWidth = 20
    public static let minimumHeight = 5

    /// True when the screen is too small to show anything to act on.
    public var isTooSmall: Bool { width < Self.minimumWidth || height < Self.minimumHeight }

    /// Handles one key; returns false when the browser should quit.
    public func handle(_ key: Key) throws -> Bool {
        if key == .control("c") { return false }
        // Nothing is on screen to act on (the screen says it is too small): a key must not
        // delete, rename or answer a question no one can see.
        if isTooSmall { return !(prompt == nil && mode == .list && keymap.command(for: key, on: .list) == .quit) }
        if showingHelp {
            // The help scrolls with the moving keys; any other key closes it.
            let lines = keymap.helpLines(for: screen, wheelStep: wheelStep).count
            let page = max(contentHeight - 4, 1)
            let last = max(lines - page, 0)
            switch keymap.command(for: key, on: screen) {
            case .down: helpTop = min(helpTop + 1, last)
            case .up: helpTop = max(helpTop - 1, 0)
            case .pageDown, .halfPageDown, .open: helpTop = min(helpTop + page, last)
            case .pageUp, .halfPageUp: helpTop = max(helpTop - page, 0)
            case .top: helpTop = 0
            case .bottom: helpTop = last
            default:
                showingHelp = false
                if case .paste = key { status = Self.pasteIgnored }
            }
            return true
        }
        status = nil
        if prompt != nil {
            try handleInPrompt(key)
            return true
        }
        if case .paste = key {
            // A paste is text, never commands: outside an editor it is dropped, whole.
            status = Self.pasteIgnored
            return true
        }
        switch key {
        case .wheelDown, .wheelUp:
            try wheel(by: key == .wheelDown ? wheelStep : -wheelStep)
            return true
        case .click(let row, _):
            // Not while a search is on its way: its results take the screen.
            if pendingSearch == nil { try click(row: row, open: false) }
            return true
        case .doubleClick(let row, _):
            if pendingSearch == nil { try click(row: row, open: true) }
            return true
        default:
            break
        }
        if let pending = pendingSearch, key == .escape {
            pending.job.cancel()
            pendingSearch = nil
            status = "Search cancelled"
            return true
        }
        guard let command = keymap.command(for: key, on: screen) else { return true }
        if pendingSearch != nil && prompt == nil {
            // A search was asked for and its results are not shown yet: what acts on a
            // conversation must not reach the one behind them (a query pasted with a line
            // break and a `d` after it deleted the list's selection).
            switch command {
            case .rename, .delete, .toggleMark, .deleteMarked, .undo, .open, .nextMatch, .previousMatch, .copyMessage, .copyCode,
                .copyConversation, .pipe, .pager, .editor, .pin, .filter, .jumpToDate, .export:
                status = "Searching… the results come first (Esc cancels)"
                return true
            case .quit, .back:
                pendingSearch?.job.cancel()
                pendingSearch = nil
                status = "Search cancelled"
                return true
            default:
                break
            }
        }
        switch mode {
        case .list: return try handleInList(command)
        case .reader: try handleInReader(command)
        case .searchResults: try handleInSearch(command)
        case .outline: try handleInOutline(command)
        }
        return true
    }

    private func handleInList(_ command: BrowserCommand) throws -> Bool {
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
            prompt = .rename(id: selected.id, editor: LineEditor(text: selected.title))
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
        case .cycleSort:
            let orders = ConversationOrder.allCases
            let next = orders[((orders.firstIndex(of: list.order) ?? 0) + 1) % orders.count]
            try list.setOrder(next)
            if !isReadOnly { try repositories.settings.set(next, for: .listSort) }
            status = "Sorted by \(next.rawValue)"
        case .help: openHelp()
        case .suspend: break  // the front end's (it owns the terminal)
        case .previousMessage, .nextMessage, .previousVersion, .nextVersion, .outline:
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
    private func copyConversations() throws {
        let ids = list.marks.isEmpty ? list.selected.map { [$0.id] } ?? [] : list.marks.sorted()
        guard !ids.isEmpty else { return }
        guard ids.count <= Self.copyLimit else {
            status = "Too many to copy (\(NumberText.grouped(ids.count)) marked): scrollback export writes them to a file"
            return
        }
        let order = list.order
        let conversations = try repositories.conversations.conversations(ids: ids).sorted { order.sorts($0, before: $1) }
        guard !conversations.isEmpty else { return }
        let text = try conversations.map { try markdown(of: $0, branch: nil) }.joined(separator: "\n---\n\n")
        let what = conversations.count == 1 ? "the conversation as Markdown" : "\(NumberText.grouped(conversations.count)) conversations as Markdown"
        effect = .copy(text: text, what: what)
    }

    /// `|`, `o` and `e`: the conversation (the branch shown, in the reader) to a program.
    private func hand(_ conversation: ConversationDTO, branch: MessageBranch?, to command: BrowserCommand) throws {
        switch command {
        case .pipe:
            prompt = .pipe(editor: LineEditor(text: lastPipe, selected: true))
        case .pager:
            effect = .page(text: UntrustedText.sanitized(try markdown(of: conversation, branch: branch), keepNewlines: true))
        case .editor:
            effect = .edit(
                text: UntrustedText.sanitized(try markdown(of: conversation, branch: branch), keepNewlines: true),
                name: conversation.publicID.prefix(8) + ".md")
        default:
            break
        }
        pipeSource = (conversation, branch)
    }

    /// The file last exported to, offered again (selected) at the next `x`.
    private var lastExport: String?

    private func openExportPrompt(ids: [Int64]) {
        let day = String(now().iso8601.prefix(10))
        let suggested = lastExport ?? "scrollback-\(day).md"
        prompt = .export(ids: ids, editor: LineEditor(text: suggested, selected: true))
    }

    /// The conversation (and branch) `|` pipes, while its prompt is open.
    private var pipeSource: (conversation: ConversationDTO, branch: MessageBranch?)?
    /// The last command piped to, offered again (selected) at the next `|`.
    private var lastPipe = ""

    /// A conversation as Markdown, as `export` writes it: the branch given (the one the
    /// reader shows), else its current one, then the other branches by their first lines.
    private func markdown(of conversation: ConversationDTO, branch: MessageBranch?) throws -> String {
        let branch = try branch ?? repositories.messages.branch(of: conversation, leaf: nil)
        var messages: [MessageDTO] = []
        var position = PagePosition.first
        while true {
            let page = try repositories.messages.page(branch, at: position, limit: 1_000)
            messages += page.items
            guard let next = page.next, !page.items.isEmpty else { break }
            position = .after(next)
        }
        var others: [MarkdownTranscript.OtherBranch] = []
        if conversation.isBranched {
            let all = try repositories.messages.all(conversationID: conversation.id)
            others = MarkdownTranscript.otherBranches(
                all, tree: try repositories.messages.tree(conversationID: conversation.id), shown: messages.map(\.id))
        }
        return MarkdownTranscript.render(conversation, messages, otherBranches: others)
    }

    private func handleInReader(_ command: BrowserCommand) throws {
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
            mode = readerOrigin
            self.reader = nil
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
        case .search: prompt = .find(editor: LineEditor(text: lastQuery, selected: true))
        case .help: openHelp()
        case .suspend: break  // the front end's (it owns the terminal)
        case .toggleMark, .deleteMarked, .cycleSort, .filter, .jumpToDate:
            status = "Back to the list (Esc) to do that"
        case .rename:
            // The conversation being read, as in the list.
            guard allowWrite("rename") else { return }
            prompt = .rename(id: reader.conversation.id, editor: LineEditor(text: reader.conversation.title))
        case .delete:
            guard allowWrite("delete") else { return }
            openQuestion(ids: [reader.conversation.id], titles: [reader.conversation.title], messages: reader.conversation.messageCount)
        case .undo:
            try undo()
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
            effect = .copy(text: try markdown(of: reader.conversation, branch: reader.branch), what: "the conversation as Markdown")
        case .pipe, .pager, .editor:
            try hand(reader.conversation, branch: reader.branch, to: command)
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
    private func choiceNote(_ reader: ReaderViewModel) -> String {
        if isReadOnly { return " · kept until you quit (read-only)" }
        guard let failure = reader.choiceFailure else { return "" }
        let reason = String(describing: failure).split(whereSeparator: \.isNewline).joined(separator: " ")
        return " · kept until you quit: " + UntrustedText.sanitized(reason)
    }

    private func handleInOutline(_ command: BrowserCommand) throws {
        guard let outline, let reader else {
            mode = reader == nil ? .list : .reader
            return
        }
        switch command {
        case .down: outline.move(by: 1)
        case .up: outline.move(by: -1)
        case .pageDown, .halfPageDown: outline.move(by: max(contentHeight - 1, 1))
        case .pageUp, .halfPageUp: outline.move(by: -max(contentHeight - 1, 1))
        case .top: outline.move(by: -outline.entries.count)
        case .bottom: outline.move(by: outline.entries.count)
        case .open:
            if let entry = outline.selected, entry.leaf != reader.branch.leaf {
                let leaving = reader.focusedMessage.flatMap { focused in reader.branch.leaf.map { (focused.id, $0) } }
                try reader.showBranch(endingAt: entry.leaf, leaving: leaving)
                try reader.show(position: max(entry.place - 1, 0))
                status = "Branch \(NumberText.grouped(outline.selection + 1)) of \(NumberText.grouped(outline.entries.count))" + choiceNote(reader)
            }
            self.outline = nil
            mode = .reader
        case .back, .quit, .outline:
            self.outline = nil
            mode = .reader
        case .help: openHelp()
        case .suspend: break
        default:
            status = "Enter shows the branch, Esc goes back"
        }
    }

    private func handleInSearch(_ command: BrowserCommand) throws {
        guard let search else {
            mode = .list
            return
        }
        switch command {
        case .down, .nextMatch: try search.move(by: 1)
        case .up, .previousMatch: try search.move(by: -1)
        case .pageDown, .halfPageDown: try search.move(by: max(search.viewportHits - 1, 1))
        case .pageUp, .halfPageUp: try search.move(by: -max(search.viewportHits - 1, 1))
        case .top: search.moveToStart()
        case .bottom: try search.move(by: SearchViewModel.maximumHits)
        case .open: try openSearchHit()
        case .back, .quit: mode = .list
        case .search: openSearchPrompt()
        case .help: openHelp()
        case .suspend: break  // the front end's (it owns the terminal)
        case .rename, .delete, .toggleMark, .deleteMarked, .undo, .cycleSort:
            status = "Back to the list (Esc) to do that"
        case .previousMessage, .nextMessage, .previousVersion, .nextVersion, .outline, .copyMessage, .copyCode, .copyConversation,
            .pipe, .pager, .editor, .pin, .export:
            status = "Open a result (Enter) to do that"
        case .filter, .jumpToDate:
            status = "Back to the list (Esc) to do that"
        }
    }

    private func openHelp() {
        showingHelp = true
        helpTop = 0
    }

    /// The wheel: `delta` rows down (up when negative), in whatever is showing.
    private func wheel(by delta: Int) throws {
        switch mode {
        case .list: try list.move(by: delta)
        case .reader: try reader?.scroll(by: delta)
        case .searchResults: try search?.move(by: delta > 0 ? max(delta / 2, 1) : min(delta / 2, -1))
        case .outline: outline?.move(by: delta)
        }
    }

    /// A click on screen row `row` selects what is there; with `open` (a double click), it
    /// also opens it. The header and the footer take no clicks.
    private func click(row: Int, open: Bool) throws {
        guard row >= 1, row <= contentHeight else { return }
        let line = row - 1
        switch mode {
        case .list:
            let index = list.top + line
            guard index < list.total, list.row(at: index) != nil else { return }
            try list.move(by: index - list.selection)
            if open { try openSelected() }
        case .searchResults:
            guard let search, let first = search.visibleHits.first?.index else { return }
            let index = first + line / 2
            guard search.hits.indices.contains(index) else { return }
            try search.move(by: index - search.selection)
            if open { try openSearchHit() }
        case .reader:
            // A click on a message focuses it.
            guard let reader, let clicked = reader.visibleLines.dropFirst(line).first else { return }
            _ = try reader.moveFocus(by: clicked.position - reader.focus)
        case .outline:
            guard let outline else { return }
            outline.move(by: outline.top + line - outline.selection)
            if open { try handleInOutline(.open) }
        }
    }

    static let pasteIgnored = "Paste ignored: paste into the editor (r renames, / searches)"

    // MARK: Prompts

    private func openQuestion(ids: [Int64], titles: [String], messages: Int) {
        prompt = .confirmDelete(ids: ids, titles: titles, messages: messages)
        questionShown = false
    }

    private func handleInPrompt(_ key: Key) throws {
        // The prompt is moved out while its editor changes, so that the editor's text has a
        // single owner and is not copied at every key (which made long pastes quadratic).
        guard let prompt = self.prompt.take() else { return }
        switch consume prompt {
        case .confirmDelete(let ids, let titles, let messages):
            self.prompt = .confirmDelete(ids: ids, titles: titles, messages: messages)
            switch key {
            case .character("y"), .character("Y"):
                guard questionShown else { break }
                self.prompt = nil
                try delete(ids: ids)
            case .character("n"), .character("N"), .escape, .character("q"):
                self.prompt = nil
                status = "Nothing deleted"
            default:
                break
            }
        case .rename(let id, var editor):
            let outcome = editor.apply(key)
            noteIfCut(editor)
            switch outcome {
            case .editing:
                self.prompt = .rename(id: id, editor: editor)
            case .cancelled:
                status = "Rename cancelled"
            case .submitted:
                guard editor.isEdited else {
                    // The title stays exactly as it was, whatever it holds.
                    status = "Title unchanged"
                    return
                }
                let title = editor.text.trimmingCharacters(in: .whitespaces)
                guard !title.isEmpty else {
                    self.prompt = .rename(id: id, editor: editor)
                    status = "A title cannot be empty"
                    return
                }
                do {
                    try rename(id: id, to: title)
                } catch StorageError.busy {
                    // Typed text is never lost to another process's write: the editor stays.
                    self.prompt = .rename(id: id, editor: editor)
                    status = "The database is busy (another process is writing): Enter tries again, Esc gives up"
                }
            }
        case .search(var editor):
            let typed = editor.text
            let outcome = editor.apply(key)
            noteIfCut(editor)
            switch outcome {
            case .editing:
                self.prompt = .search(editor: editor)
                if editor.text != typed { searchAsTyped(editor.text) }
            case .cancelled:
                cancelSearchPrompt()
            case .submitted:
                try submitSearch(editor.text)
            }
        case .find(var editor):
            let outcome = editor.apply(key)
            noteIfCut(editor)
            switch outcome {
            case .editing:
                self.prompt = .find(editor: editor)
            case .cancelled:
                break
            case .submitted:
                try find(editor.text)
            }
        case .filter(var editor):
            let outcome = editor.apply(key)
            noteIfCut(editor)
            switch outcome {
            case .editing:
                self.prompt = .filter(editor: editor)
            case .cancelled:
                break
            case .submitted:
                do {
                    let filter = try ConversationFilter.parse(editor.text, now: now())
                    try list.setFilter(filter)
                    status = filter.isEmpty ? "Filter cleared: every conversation" : "Filtered — Esc clears"
                } catch let error as FilterError {
                    // The words stay for fixing.
                    self.prompt = .filter(editor: editor)
                    status = UntrustedText.sanitized(error.message)
                }
            }
        case .jump(var editor):
            let outcome = editor.apply(key)
            noteIfCut(editor)
            switch outcome {
            case .editing:
                self.prompt = .jump(editor: editor)
            case .cancelled:
                break
            case .submitted:
                let text = editor.text.trimmingCharacters(in: .whitespaces)
                guard !text.isEmpty else { return }
                do {
                    // A date means its end: the newest conversation on or before that day.
                    // The end of a day, or just after a time: the newest at or before it.
                    let end = try ConversationFilter.time(text, now: now(), end: true)
                    let isAgo = text.last.map { "dwmy".contains($0) } ?? false
                    let time = isAgo ? end : Timestamp(milliseconds: end.milliseconds &- 1)
                    if try list.jump(toTimeAtOrBefore: time) {
                        status = "The newest conversation \(list.order == .created ? "created" : "updated") at or before \(UntrustedText.sanitized(text))"
                    } else {
                        status = "Nothing that old: the last conversation is newer than \(UntrustedText.sanitized(text))"
                    }
                } catch let error as FilterError {
                    self.prompt = .jump(editor: editor)
                    status = UntrustedText.sanitized(error.message)
                }
            }
        case .export(let ids, var editor):
            let outcome = editor.apply(key)
            noteIfCut(editor)
            switch outcome {
            case .editing:
                self.prompt = .export(ids: ids, editor: editor)
            case .cancelled:
                status = "Nothing exported"
            case .submitted:
                let path = editor.text.trimmingCharacters(in: .whitespaces)
                guard !path.isEmpty else {
                    self.prompt = .export(ids: ids, editor: editor)
                    status = "Type a file name: .md, .json or .jsonl"
                    return
                }
                lastExport = path
                effect = .export(ids: ids, path: path)
            }
        case .pipe(var editor):
            let outcome = editor.apply(key)
            noteIfCut(editor)
            switch outcome {
            case .editing:
                self.prompt = .pipe(editor: editor)
            case .cancelled:
                pipeSource = nil
                status = "Nothing piped"
            case .submitted:
                let command = editor.text.trimmingCharacters(in: .whitespaces)
                guard !command.isEmpty, let source = pipeSource else {
                    pipeSource = nil
                    status = "Nothing piped: type a command (wc -c, pbcopy, grep -n TODO…)"
                    return
                }
                lastPipe = command
                pipeSource = nil
                effect = .pipe(command: command, input: try markdown(of: source.conversation, branch: source.branch))
            }
        }
    }

    // MARK: Search as you type

    private func openSearchPrompt() {
        beforeSearchPrompt = (mode, search)
        prompt = .search(editor: LineEditor(text: lastQuery, selected: true))
    }

    /// The text in the prompt changed: the search in flight is stopped, and a new one
    /// starts once typing pauses (`poll`).
    private func searchAsTyped(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        // A space typed at either end changes nothing: what runs or shows stays.
        if pendingSearch?.query == trimmed || (pendingSearch == nil && mode == .searchResults && search?.query == trimmed) {
            searchDue = nil
            return
        }
        pendingSearch?.job.cancel()
        pendingSearch = nil
        guard !trimmed.isEmpty else {
            searchDue = nil
            return
        }
        let (due, overflow) = now().milliseconds.addingReportingOverflow(Self.searchDelay)
        searchDue = (trimmed, Timestamp(milliseconds: overflow ? Int64.max : due))
    }

    private func submitSearch(_ text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else {
            // Nothing to search for: as Esc.
            cancelSearchPrompt()
            return
        }
        searchDue = nil
        beforeSearchPrompt = nil
        if let search, search.query == trimmed, pendingSearch == nil, mode == .searchResults {
            // What was typed is already shown: Enter just closes the prompt.
            lastQuery = trimmed
            if search.hits.isEmpty { status = "Nothing matches “\(UntrustedText.sanitized(search.query))”" }
            return
        }
        if let pending = pendingSearch, pending.query == trimmed { return }
        try runSearch(text)
    }

    /// Esc in the search prompt: the search stops and the screen is as before the prompt.
    private func cancelSearchPrompt() {
        pendingSearch?.job.cancel()
        pendingSearch = nil
        searchDue = nil
        if let before = beforeSearchPrompt {
            search = before.search
            mode = before.mode == .searchResults && before.search == nil ? .list : before.mode
            if mode == .searchResults { search?.viewportHits = max(contentHeight / 2, 1) }
        }
        beforeSearchPrompt = nil
    }

    /// Milliseconds until the typed search is due to start, if one is waiting (so that the
    /// front end wakes in time).
    public var millisecondsUntilSearch: Int64? {
        guard let due = searchDue else { return nil }
        let (left, overflow) = due.at.milliseconds.subtractingReportingOverflow(now().milliseconds)
        return overflow ? 0 : max(left, 0)
    }

    // MARK: Find in the conversation

    private func find(_ text: String) throws {
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
            status = reader.tree == nil
                ? "Not in this conversation: “\(UntrustedText.sanitized(trimmed))”"
                : "Not on this branch: “\(UntrustedText.sanitized(trimmed))” (/ searches every branch from the list)"
            return
        }
        try reader.setFind(query: trimmed, positions: positions)
    }

    /// The positions along the branch shown of the messages that match `query`.
    private func matchingPositions(of query: String, in reader: ReaderViewModel) throws -> [Int] {
        if reader.branch.path != nil {
            return reader.positions(of: try repositories.search.matchingMessageIDs(conversationID: reader.conversation.id, query: query)) ?? []
        }
        return try repositories.search.matchingPositions(conversationID: reader.conversation.id, query: query)
    }

    private func noteIfCut(_ editor: LineEditor) {
        if editor.wasCut { status = "cut to \(NumberText.grouped(editor.limit)) characters" }
    }

    // MARK: Actions

    private func allowWrite(_ action: String) -> Bool {
        if isReadOnly {
            status = "read-only: cannot \(action)"
            return false
        }
        return true
    }

    private func openSelected() throws {
        guard let conversation = list.selected else { return }
        try openReader(conversation, at: 0, highlights: [])
        readerOrigin = .list
    }

    private func openReader(_ conversation: ConversationDTO, at position: Int, highlights: [String]) throws {
        let reader = try makeReader(conversation, highlights: highlights)
        try reader.open(at: position)
        self.reader = reader
        mode = .reader
    }

    private func makeReader(_ conversation: ConversationDTO, highlights: [String]) throws -> ReaderViewModel {
        let reader = try ReaderViewModel(
            conversation: conversation, messages: repositories.messages, width: max(width, 1), highlights: highlights,
            remembersChoices: !isReadOnly)
        reader.viewportHeight = contentHeight
        reader.dateFormat = dateFormat
        return reader
    }

    /// Opens the reader on the hit's branch, the matched message in view.
    private func openSearchHit() throws {
        guard let search, let hit = search.selected else { return }
        guard try repositories.conversations.conversation(id: hit.conversation.id) != nil else {
            status = "“\(DisplayWidth.truncated(UntrustedText.sanitized(hit.conversation.title), to: 40))” was deleted by another process"
            return
        }
        let reader = try makeReader(hit.conversation, highlights: search.terms)
        if let message = hit.message { try reader.open(message: message.id) } else { try reader.open(at: 0) }
        // n and N then go through this conversation's matches, in order, from the hit.
        let positions = try matchingPositions(of: search.query, in: reader)
        try reader.setFind(query: search.query, positions: positions, keeping: hit.message != nil ? reader.focus : nil)
        self.reader = reader
        mode = .reader
        readerOrigin = .searchResults
    }

    private func runSearch(_ query: String) throws {
        let trimmed = query.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return }
        lastQuery = trimmed
        searchDue = nil
        pendingSearch?.job.cancel()
        pendingSearch = nil
        if let searchRunner {
            // The first page comes from another thread; `poll` shows it when it is ready, and
            // the screen stays live (and Esc cancels) meanwhile.
            pendingSearch = (trimmed, searchRunner.start(trimmed, limit: SearchViewModel.pageSize))
            return
        }
        let search = SearchViewModel(query: trimmed, repository: repositories.search)
        try search.run()
        showResults(search)
    }

    private func showResults(_ search: SearchViewModel) {
        search.viewportHits = max(contentHeight / 2, 1)
        self.search = search
        mode = .searchResults
        reader = nil
        refreshIndexingProgress()
        // While the prompt is open the results follow the typing: no message over them.
        if search.hits.isEmpty && prompt == nil { status = "Nothing matches “\(UntrustedText.sanitized(search.query))”" }
    }

    private func refreshIndexingProgress() {
        // Progress is a nicety: failing to read it never stands in the way.
        indexingProgress = (try? repositories.search.indexingProgress()).flatMap { $0 }
    }

    /// The query of a search still running in the background, if any (for the footer).
    public var searching: String? { pendingSearch?.query }

    /// Takes in what background work has finished; returns true when the screen changed.
    @discardableResult
    public func poll() -> Bool {
        var changed = list.takePosition()
        if let due = searchDue, now() >= due.at {
            searchDue = nil
            do {
                try runSearch(due.query)
            } catch {
                report(error)
            }
            changed = true
        }
        return takeSearchResult() || changed
    }

    private func takeSearchResult() -> Bool {
        guard let pending = pendingSearch, let result = pending.job.result else { return false }
        pendingSearch = nil
        switch result {
        case .success(let page):
            let search = SearchViewModel(query: pending.query, repository: repositories.search)
            search.show(page)
            showResults(search)
        case .failure(let error):
            report(error)
        }
        return true
    }

    private func delete(ids: [Int64]) throws {
        let doomed = Set(ids)
        if let reader, doomed.contains(reader.conversation.id) {
            // Deleted from the reader: back to the list, on the row after it.
            self.reader = nil
            outline = nil
            // (Opened from the list, it is the list's selection, which the next row replaces.)
            mode = .list
        }
        let fallbacks = list.neighbours(of: list.selection, excluding: doomed)
        let keep = list.selected.map(\.id).flatMap { doomed.contains($0) ? nil : $0 }
        let snapshots = try repositories.conversations.deleteKeepingSnapshots(ids: ids)
        undoAction = .deleted(snapshots)
        list.unmark(doomed)
        try list.reload(keeping: keep, fallbacks: fallbacks, totalChange: -snapshots.count)
        let count = snapshots.count
        status = "Deleted \(count) conversation\(count == 1 ? "" : "s") — u undoes"
    }

    private func rename(id: Int64, to title: String) throws {
        guard let before = try repositories.conversations.conversation(id: id) else {
            // Another process deleted it while the editor was open.
            status = "Not renamed: that conversation was deleted meanwhile, by another process"
            try list.reload(keeping: id, totalChange: nil)
            return
        }
        let renamed = try repositories.conversations.rename(id: id, to: title)
        undoAction = .renamed(id: id, title: before.title)
        if let reader, reader.conversation.id == id {
            try reader.reload(renamed)
            try list.reload(keeping: list.selected?.id)
        } else {
            try list.reload(keeping: id)
        }
        status = "Renamed — u undoes"
    }

    /// Pins `ids` (unpins them when all are pinned already), in one transaction and one
    /// undo; the selected row stays selected wherever pinning moves it.
    private func pin(ids: [Int64]) throws {
        let current = try repositories.conversations.conversations(ids: ids)
        guard !current.isEmpty else {
            status = "Nothing to pin: that conversation was deleted meanwhile, by another process"
            return
        }
        let target = !current.allSatisfy(\.pinned)
        let changing = current.filter { $0.pinned != target }.map(\.id)
        _ = try repositories.conversations.setPinned(ids: changing, target)
        undoAction = .pinned(ids: changing, pinned: target)
        try list.reload(keeping: list.selected?.id)
        let count = changing.count
        let noun = count == 1 ? "the conversation" : "\(NumberText.grouped(count)) conversations"
        status = "\(target ? "Pinned" : "Unpinned") \(noun)\(target ? " (first in every order)" : "") — u undoes"
    }

    private func undo() throws {
        guard allowWrite("undo") else { return }
        switch undoAction {
        case .pinned(let ids, let pinned):
            _ = try repositories.conversations.setPinned(ids: ids, !pinned)
            undoAction = nil
            try list.reload(keeping: list.selected?.id)
            status = pinned ? "Pin undone" : "Unpin undone"
        case nil:
            status = "Nothing to undo"
        case .deleted(let snapshots):
            try repositories.conversations.restore(snapshots)
            undoAction = nil
            // The first restored row in the list's order is selected, so that it and the
            // others after it are in view.
            let order = list.order
            let first = snapshots.map(\.conversation).min { order.sorts($0, before: $1) }
            try list.reload(keeping: first?.id, totalChange: snapshots.count)
            status = "Restored \(snapshots.count) conversation\(snapshots.count == 1 ? "" : "s")"
        case .renamed(let id, let title):
            guard try repositories.conversations.conversation(id: id) != nil else {
                undoAction = nil
                status = "Cannot undo the rename: another process deleted the conversation"
                return
            }
            _ = try repositories.conversations.rename(id: id, to: title)
            undoAction = nil
            try list.reload(keeping: id)
            status = "Rename undone"
        }
    }

    // MARK: Idle

    /// Called when no key came for a while: notices other processes' commits and reloads
    /// the list around the same conversation. Returns true when something changed.
    @discardableResult
    public func idle() throws -> Bool {
        var changed = false
        if indexingProgress != nil || mode == .searchResults {
            let before = indexingProgress
            refreshIndexingProgress()
            changed = indexingProgress != before
        }
        let token = try repositories.conversations.changeToken()
        guard token != changeToken, prompt == nil else { return changed }
        changeToken = token
        try refreshReader()
        try list.pruneMarks()
        let fallbacks = list.neighbours(of: list.selection, excluding: [])
        // Another process changed the data: how many there are now is counted away from
        // the main actor, with the selection's index.
        try list.reload(keeping: list.selected?.id, fallbacks: fallbacks, totalChange: nil)
        return true
    }

    /// After another process's change: the conversation being read shows its new messages
    /// and branches (the outline too), or, deleted, the screen it was opened from says so.
    private func refreshReader() throws {
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

    /// Shows an error in the footer, on one line.
    public func report(_ error: any Error) {
        let text = String(describing: error).split(whereSeparator: \.isNewline).joined(separator: " ")
        status = "error: " + UntrustedText.sanitized(text)
    }
}
