import ScrollbackModel
import TerminalText

/// The whole browser: a stack of screens over the list (`BrowserScreenModel`), and what they
/// share: the prompt line, the footer's message, undo, the effects asked of the front end.
/// Takes keys, gives each to the screen on top (what it does not handle falls through to the
/// shared handler), and exposes plain values to draw.
@MainActor
public final class BrowserViewModel {
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
        /// Narrowing the list by title as it is typed (`\`); `before`, `selected` and `marks`
        /// are the list as it opened on, which Esc puts back (a word typed on the way may
        /// hide, and so unmark, a conversation that the words kept show again).
        case narrow(editor: LineEditor, before: ConversationFilter, selected: Int64?, marks: Set<Int64>)
        /// A date to go to (`:`).
        case jump(editor: LineEditor)
        /// The file to export these conversations to (`x`).
        case export(ids: [Int64], editor: LineEditor)
        /// Where to save an attachment (`S`).
        case saveAttachment(attachment: AttachmentDTO, editor: LineEditor)
    }

    /// What the front end is asked to do next (copy, run a program), taken with `takeEffect`.
    public internal(set) var effect: BrowserEffect?

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

    /// One change made in this browser, as `u` undoes it and `Ctrl-R` does it again.
    enum Edit {
        case deleted([ConversationSnapshot])
        /// `followedExport`: `from` was the export's title, which imports keep up to date;
        /// undone, the title follows the export again (its title now, if a later import
        /// changed it).
        /// `mark`: the edit clock this change left (`editMark`), which must still be there.
        case renamed(id: Int64, from: String, to: String, followedExport: Bool, mark: String?)
        /// These were set to `pinned` (they were the other way before), leaving these marks.
        case pinned(ids: [Int64], pinned: Bool, marks: [Int64: String])
        /// A delete of this many conversations whose snapshots were let go (they held more
        /// messages than undo keeps): reaching it says so.
        case forgotten(conversations: Int)

        /// The conversations and fields it changed.
        var touched: [(id: Int64, field: ConversationField)] {
            switch self {
            case .deleted(let snapshots): snapshots.flatMap { [($0.conversation.id, .title), ($0.conversation.id, .pin)] }
            case .renamed(let id, _, _, _, _): [(id, .title)]
            case .pinned(let ids, _, _): ids.map { ($0, .pin) }
            case .forgotten: []
            }
        }

        /// The same change, expecting `mark` as the edit clock of `field` of `id`.
        func expecting(_ mark: String?, of field: ConversationField, for id: Int64) -> Edit {
            switch (self, field) {
            case (.renamed(let own, let from, let to, let followed, _), .title) where own == id:
                return .renamed(id: own, from: from, to: to, followedExport: followed, mark: mark)
            case (.pinned(let ids, let pinned, var marks), .pin) where ids.contains(id):
                marks[id] = mark
                return .pinned(ids: ids, pinned: pinned, marks: marks)
            default:
                return self
            }
        }

        /// The messages its snapshots hold in memory.
        var messagesHeld: Int {
            guard case .deleted(let snapshots) = self else { return 0 }
            return snapshots.reduce(0) { $0 + $1.messages.count }
        }
    }

    public struct Repositories {
        public var conversations: any ConversationRepository
        public var messages: any MessageRepository
        public var search: any SearchRepository
        public var settings: any SettingsRepository
        public var activity: any ActivityRepository

        public init(
            conversations: any ConversationRepository, messages: any MessageRepository, search: any SearchRepository,
            settings: any SettingsRepository, activity: any ActivityRepository
        ) {
            self.activity = activity
            self.conversations = conversations
            self.messages = messages
            self.search = search
            self.settings = settings
        }
    }

    public internal(set) var prompt: Prompt?
    /// A one-line message for the footer (beside an open editor); cleared by the next key.
    public internal(set) var status: String?
    /// The count typed before a moving key (`5j`), while it is typed.
    public internal(set) var count: Int?
    /// Rows the mouse wheel scrolls.
    public var wheelStep = 3
    /// The background sync, when sync is on for this database.
    public var syncMonitor: (any SyncMonitor)?
    /// Fetches the bytes of attachments another machine holds (nil where this browser
    /// cannot: `attachmentFetchUnavailable` says why, on their lines).
    public var attachmentFetcher: (any AttachmentFetcher)?
    public var attachmentFetchUnavailable: String?
    private var fetchGeneration = 0
    /// The coding agents' sessions followed in the background, when any are.
    public var sourceMonitor: (any SourceMonitor)?
    /// What the footer says of them (news a read-only browser does not import), made safe.
    public private(set) var sourceNote: String?
    private var sourceNoteRead: String?
    /// What the footer says of sync ("synced 2m ago", "12 to send", "offline"); nil when
    /// sync is off.
    public private(set) var syncNote: String?
    /// The keys in use (the standard ones, with the config file's changes).
    public var keymap = Keymap.standard
    /// How the reader writes times (strftime), when the config file says.
    /// The bytes of a stored image to draw (nil when it is not stored or larger than `limit`).
    public func imageBytes(sha256: String, limit: Int) throws -> [UInt8]? {
        try repositories.messages.attachmentBytes(sha256: sha256, limit: limit)
    }

    /// The terminal's cell in pixels when it shows images (the front end asks it); the
    /// reader then keeps rows for each image.
    public var imageCell: ImageCell? {
        didSet { readerScreen?.reader.imageCell = imageCell }
    }
    public var dateFormat: String?

    // MARK: The stack of screens
    /// The list, always at the bottom.
    public private(set) lazy var listScreen = ListScreen(list: list, browser: self)
    /// The screens over the list, the top one last.
    var stack: [any BrowserScreenModel] = [] {
        didSet {
            for screen in oldValue where !stack.contains(where: { $0 === screen }) { screen.leave() }
        }
    }
    /// Every screen, from the list at the bottom to the one on top.
    public var screens: [any BrowserScreenModel] { [listScreen] + stack }
    /// The screen that takes the keys.
    public var top: any BrowserScreenModel { stack.last ?? listScreen }
    /// The screen drawn (under an overlay such as the help), with its footer.
    public var shownScreen: any BrowserScreenModel { stack.last { !$0.isOverlay } ?? listScreen }
    /// The screen showing: its keymap is the one keys go by.
    public var screen: BrowserScreen { top.kind }
    /// The last search's results, shown or not (`n` in the list shows them again).
    public internal(set) var lastResults: ResultsScreen?

    public let list: ConversationListViewModel
    /// The reader on the stack, if one is.
    var readerScreen: ReaderScreen? { stack.last { $0 is ReaderScreen } as? ReaderScreen }
    /// The conversation being read, when the reader is on the stack.
    public var reader: ReaderViewModel? { readerScreen?.reader }
    /// The last search's results.
    public var search: SearchViewModel? { lastResults?.search }
    /// The outline of branches, when it shows.
    public var outline: OutlineViewModel? { (stack.last { $0 is OutlineScreen } as? OutlineScreen)?.outline }
    /// The help over the screen, when it is open.
    public var help: HelpScreen? { stack.last as? HelpScreen }
    public var showingHelp: Bool { help != nil }
    /// The first line of the help shown.
    public var helpTop: Int { help?.top ?? 0 }

    /// `screen` on top of the others.
    func push(_ screen: any BrowserScreenModel) {
        screen.resize(width: width, contentHeight: contentHeight)
        stack.append(screen)
    }

    /// `screen` and every screen over it off the stack (the list stays).
    func remove(_ screen: any BrowserScreenModel) {
        guard let index = stack.firstIndex(where: { $0 === screen }) else { return }
        stack.removeSubrange(index...)
    }

    /// What the screen under `screen` is.
    func kind(below screen: any BrowserScreenModel) -> BrowserScreen? {
        guard let index = stack.firstIndex(where: { $0 === screen }) else { return nil }
        return index == 0 ? .list : stack[index - 1].kind
    }

    /// The reader over the screen on top, on `conversation` (or, from the reader, the reader
    /// on it instead).
    func openReader(_ conversation: ConversationDTO, at position: Int, highlights: [String]) throws {
        if let reader = top as? ReaderScreen {
            try reader.show(conversation, at: position, highlights: highlights)
            return
        }
        let reader = try ReaderScreen.makeReader(conversation, highlights: highlights, browser: self)
        try reader.open(at: position)
        push(ReaderScreen(reader, browser: self))
    }

    /// After another process's change, the conversation being read as it is now.
    func refreshReader() throws { try readerScreen?.refresh() }
    public let isReadOnly: Bool
    /// Shown in the header.
    public let databasePath: String
    /// True when the read-only view is a snapshot that does not see other writers.
    public let isSnapshot: Bool
    /// The current time, for relative times.
    public let now: () -> Timestamp
    /// The zone times are shown in (the process's, or UTC for a test).
    public let zone: LocalZone

    let repositories: Repositories
    /// Runs searches away from the main actor; nil runs them here (in-memory databases).
    let searchRunner: (any SearchRunner)?
    /// A search still running in the background, and its query.
    var pendingSearch: (query: String, job: any SearchJob)?
    /// When the search for what is typed in the prompt starts (results follow the typing,
    /// once it pauses for `searchDelay`).
    var searchDue: (query: String, at: Timestamp)?
    /// What the screen showed when the search prompt opened, for Esc to go back to.
    var beforeSearchPrompt: (stack: [any BrowserScreenModel], results: ResultsScreen?)?
    /// How long typing must pause before the search runs, in milliseconds.
    public static let searchDelay: Int64 = 150
    /// When the list narrows to what is typed in the narrowing prompt (a burst of keys is
    /// one narrowing, not one per key).
    var narrowDue: (words: String, at: Timestamp)?
    /// How long typing must pause before the list narrows, in milliseconds.
    public static let narrowDelay: Int64 = 60
    /// How far building the search index has come (0 to 1) while it is rebuilt; nil when
    /// the index is complete.
    public internal(set) var indexingProgress: Double?
    /// A change that takes a while (a large delete, its undo or redo): said in the footer
    /// first, `shown` false while that waits to be drawn, true once it was (the next `poll`
    /// makes it).
    var slowChange: (change: SlowChange, shown: Bool)?

    enum SlowChange {
        /// This undo, taken off the history.
        case undo(Edit)
        /// Delete these (the delete question answered).
        case delete(ids: [Int64])
        /// This redo (of a large delete), taken off the history.
        case redo(Edit)
    }
    /// A delete with this many conversations or ten times as many messages or more is
    /// said before it is put back (150,000 took half a minute).
    public var slowUndoAt = 2_000
    /// The conversations deleted here and not put back: an undo of an older change to one
    /// of them says so (not that another process deleted it).
    var deletedHere: Set<Int64> = []
    /// The files (by SHA-256) of the conversations deleted here: once the browser exits and
    /// no undo can bring them back, those no conversation uses are freed.
    public internal(set) var filesOfDeletes: Set<String> = []
    /// The changes `u` undoes, the last one last.
    var undoHistory: [Edit] = []
    /// The changes undone, which `Ctrl-R` does again until a new change is made.
    var redoHistory: [Edit] = []
    /// How many changes were kept for undo so far (a redo that made one is told by it).
    var changesRemembered = 0
    /// How many changes undo reaches back.
    public static let undoLevels = 100
    /// The most messages the deleted conversations kept for undo may hold together; the
    /// oldest changes are forgotten beyond it (the last delete is always kept, whatever its size).
    public var undoMessageBudget = 500_000
    var lastQuery = ""
    var changeToken: Int64 = 0
    /// False from the moment a yes/no question opens until the front end has drawn it:
    /// keys already queued (a paste, a burst) must not answer a question not yet seen.
    var questionShown = false
    public internal(set) var width = 80
    /// Counts the overview's charts in the background; without one they are counted as it opens.
    let activityRunner: (any ActivityRunner)?
    public internal(set) var height = 24

    public init(
        repositories: Repositories, databasePath: String, isReadOnly: Bool, isSnapshot: Bool = false,
        searchRunner: (any SearchRunner)? = nil, positionRunner: (any PositionRunner)? = nil,
        activityRunner: (any ActivityRunner)? = nil, now: @escaping () -> Timestamp = { .now() }, zone: LocalZone = .process
    ) throws {
        self.repositories = repositories
        self.activityRunner = activityRunner
        self.searchRunner = searchRunner
        self.databasePath = databasePath
        self.isReadOnly = isReadOnly
        self.isSnapshot = isSnapshot
        self.now = now
        self.zone = zone
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
        for screen in screens { screen.resize(width: self.width, contentHeight: contentHeight) }
        if let lastResults, !stack.contains(where: { $0 === lastResults }) { lastResults.resize(width: self.width, contentHeight: contentHeight) }
    }


    // MARK: Keys
    /// The front end calls this after each frame it drew. Returns true when a yes/no
    /// question has just become visible: keys queued before that should be discarded.
    @discardableResult
    public func promptShown() -> Bool {
        if slowChange?.shown == false { slowChange?.shown = true }
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
        // Ctrl-C quits at once: a slow change asked for and not begun is not made.
        if key == .control("c") { return false }
        // A key typed ahead of the frame that says a slow change is coming: the change is
        // made first, then the key acts after it (`y q` deletes, then quits; `u u` undoes twice).
        if slowChange != nil { performSlowChange() }
        // Nothing is on screen to act on (the screen says it is too small): a key must not
        // delete, rename or answer a question no one can see.
        if isTooSmall { return !(prompt == nil && screen == .list && keymap.command(for: key, on: .list) == .quit) }
        if let help {
            help.take(key)
            return true
        }
        // What an editor left out stays said while typing goes on (a burst of typed keys,
        // not a paste, would clear it at the next key).
        let leftOut = status.flatMap { $0.hasPrefix("Left out ") ? $0 : nil }
        status = nil
        if prompt != nil {
            try handleInPrompt(key)
            if status == nil, prompt != nil, let leftOut, case .character = key { status = leftOut }
            return true
        }
        if case .paste = key {
            // A paste is text, never commands: outside an editor it is dropped, whole.
            status = Self.pasteIgnored
            return true
        }
        switch key {
        case .wheelDown, .wheelUp:
            try top.wheel(by: key == .wheelDown ? wheelStep : -wheelStep)
            return true
        case .click(let row, _), .doubleClick(let row, _):
            // Not while a search is on its way: its results take the screen. The header and
            // the footer take no clicks.
            if pendingSearch == nil, row >= 1, row <= contentHeight {
                if case .doubleClick = key { try top.click(line: row - 1, open: true) } else { try top.click(line: row - 1, open: false) }
            }
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
        guard let binding = keymap.binding(for: key, on: screen) else {
            if case .character(let digit) = key, let value = digit.wholeNumberValue, digit.isASCII, value > 0 || count != nil {
                // A count for the next moving key, as less and vim take one: 5j.
                count = min((count ?? 0) * 10 + value, 9_999)
                status = "\(count ?? value)"
                return true
            }
            count = nil
            status = unboundNote(key)
            return true
        }
        let command = binding.command
        let times = count ?? 1
        count = nil
        if let reason = disabledReason(binding) {
            status = reason
            return true
        }
        if pendingSearch != nil, command == .quit || command == .back {
            // The search asked for is what they go back from.
            pendingSearch?.job.cancel()
            pendingSearch = nil
            status = "Search cancelled"
            return true
        }
        if times > 1, binding.repeats {
            // At once where the screen can (5j is one move), else one at a time, each by the
            // screen on top then (3n in the list shows the results, then moves in them).
            if try !top.perform(command, times: times) {
                for _ in 0..<min(times, 1_000) { _ = try perform(command) }
            }
            return true
        }
        let answer = try perform(command)
        // A count before a key it does not repeat (3z, 2d) is not kept for the next key, and
        // not dropped without a word: the key acted once.
        if times > 1, prompt == nil {
            status = (status.map { $0 + " · " } ?? "") + "once: a count repeats only moving keys"
        }
        return answer != .quit
    }

    /// `command` by the screen on top, else by what every screen shares.
    func perform(_ command: BrowserCommand) throws -> ScreenAnswer {
        let answer = try top.perform(command)
        guard answer == .unhandled else { return answer }
        switch command {
        case .help: openHelp()
        case .suspend: break  // the front end's (it owns the terminal)
        default: status = "That key does nothing here (? lists the keys of this screen)"
        }
        return .handled
    }

    /// A key the terminal sent that scrollback has no name for (F5, Shift-Tab, Ctrl-]): it
    /// says it does nothing, so that the footer never keeps the last key's words for it.
    public func unknownKey() {
        guard prompt == nil, !showingHelp, !isTooSmall else { return }
        count = nil
        status = "That key does nothing here (? lists the keys of this screen)"
    }

    /// A key with no command on this screen says so, and where it does something, rather
    /// than nothing at all.
    func unboundNote(_ key: Key) -> String? {
        switch key {
        case .paste, .wheelUp, .wheelDown, .click, .doubleClick: return nil
        default: break
        }
        let elsewhere = BrowserScreen.allCases.filter { $0 != screen }.compactMap { other in
            keymap.command(for: key, on: other).flatMap { command in
                keymap.keymap(for: other).first { $0.command == command }.map { "\(other.title.lowercased()): \($0.help.prefix(1).lowercased())\($0.help.dropFirst())" }
            }
        }
        let shown = UntrustedText.sanitized(key.description)
        guard let first = elsewhere.first else { return "\(shown) does nothing here (? lists the keys of this screen)" }
        return "\(shown) does nothing here (in \(first)); ? lists the keys of this screen"
    }

    /// The file last exported to, offered again (selected) at the next `x`.
    var lastExport: String?

    /// The conversation (and branch) `|` pipes, while its prompt is open.
    var pipeSource: (conversation: ConversationDTO, branch: MessageBranch?, showingHidden: Bool)?
    /// The last command piped to, offered again (selected) at the next `|`.
    var lastPipe = ""

    func openHelp() {
        push(HelpScreen(keysOf: screen, browser: self))
    }

    static let pasteIgnored = "Paste ignored: paste into the editor (r renames, / searches)"


    /// Takes in what background work has finished; returns true when the screen changed.
    @discardableResult
    public func poll() -> Bool {
        var changed = list.takePosition()
        for screen in stack where screen.poll() { changed = true }
        if let monitor = syncMonitor {
            let note = Self.syncNote(monitor.state, now: now(), zone: zone)
            if note != syncNote {
                syncNote = note
                changed = true
            }
        }
        if let fetcher = attachmentFetcher, fetcher.generation != fetchGeneration {
            // A fetch began or ended: the reader's messages are read again (a file that came
            // is stored now) and their lines say so.
            fetchGeneration = fetcher.generation
            do {
                // Laid out again with it.
                try refreshReader()
            } catch {
                report(error)
                readerScreen?.reader.fetchNotesChanged()
            }
            changed = true
        }
        if let monitor = sourceMonitor {
            let note = monitor.note
            if note != sourceNoteRead {
                sourceNoteRead = note
                sourceNote = note.map { UntrustedText.sanitized($0) }
                changed = true
            }
        }
        if let due = searchDue, now() >= due.at {
            searchDue = nil
            do {
                try runSearch(due.query)
            } catch {
                report(error)
            }
            changed = true
        }
        if let due = narrowDue, now() >= due.at {
            narrowDue = nil
            do {
                try listScreen.narrow(to: due.words, final: false)
            } catch {
                report(error)
            }
            changed = true
        }
        if let slow = slowChange, slow.shown {
            // The footer says what is being done: now it is.
            performSlowChange()
            changed = true
        }
        return takeSearchResult() || changed
    }

    /// Makes the slow change that waits (`slowChange`); what fails is said in the footer.
    func performSlowChange() {
        guard let slow = slowChange else { return }
        slowChange = nil
        do {
            switch slow.change {
            case .undo(let edit):
                try undo(edit)
            case .redo(let edit):
                try redo(edit)
            case .delete(let ids):
                try delete(ids: ids)
            }
            if screen == .reader { try refreshReader() }
        } catch {
            report(error)
        }
    }

    /// The footer's words for `state` at `now`.
    static func syncNote(_ state: SyncFooterState, now: Timestamp, zone: LocalZone = .process) -> String {
        let toSend = state.toSend > 0 ? "\(NumberText.grouped(state.toSend)) to send" : nil
        if let problem = state.problem {
            var head = UntrustedText.sanitized(problem)
            if let since = state.failingSince {
                let ago = TimeText.relative(since, now: now, zone: zone)
                if ago != "now" { head += " since \(ago)" }
            }
            let note = [head, toSend].compactMap { $0 }.joined(separator: ", ")
            return note + (state.reason.map { ": " + UntrustedText.sanitized($0) } ?? "")
        }
        if state.syncing { return "syncing…" }
        if let toSend { return toSend }
        guard let last = state.lastSync else { return "not synced yet" }
        let ago = TimeText.relative(last, now: now, zone: zone)
        return ago == "now" ? "synced just now" : "synced \(ago)"
    }

    // MARK: Idle
    /// Called when no key came for a while: notices other processes' commits and reloads
    /// the list around the same conversation. Returns true when something changed.
    @discardableResult
    public func idle() throws -> Bool {
        var changed = false
        if indexingProgress != nil || screen == .results {
            let before = indexingProgress
            refreshIndexingProgress()
            changed = indexingProgress != before
        }
        let token = try repositories.conversations.changeToken()
        // Not under an editor (its row must stay put), but under the narrowing prompt, whose
        // list is the one that changes.
        if case .narrow = prompt {} else if prompt != nil { return changed }
        guard token != changeToken else { return changed }
        changeToken = token
        try refreshReader()
        for screen in stack { try screen.dataChanged() }
        try list.pruneMarks()
        let fallbacks = list.neighbours(of: list.selection, excluding: [])
        // Another process changed the data: how many there are now is counted away from
        // the main actor, with the selection's index.
        try list.reload(keeping: list.selected?.id, fallbacks: fallbacks, totalChange: nil)
        return true
    }

    /// Shows an error in the footer, on one line.
    public func report(_ error: any Error) {
        let text = String(describing: error).split(whereSeparator: \.isNewline).joined(separator: " ")
        status = "error: " + UntrustedText.sanitized(text)
    }
}
