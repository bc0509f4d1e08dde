import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import ScrollbackViewModels
import TestSupport

/// A clock the test moves by hand, for the search that follows the typing.
@MainActor
final class TestClock {
    var now = BrowserFixture.now
    func advance(_ milliseconds: Int64) { now = Timestamp(milliseconds: now.milliseconds + milliseconds) }
}

@Suite("Every action within a frame: no key counts the conversations")
@MainActor
struct KeyPathTests {
    static let count = 3_000

    /// A browser over a database file, with the position found on a connection of its own.
    static func browser(_ folder: TemporaryDirectory) throws -> (Store, BrowserViewModel) {
        let path = folder.file("h.sqlite")
        let store = try Store.open(path: path)
        try store.inserting(about: .max) {
            for index in 0..<count {
                let time = BrowserFixture.now.milliseconds - Int64(index) * 60_000
                try store.addConversation(
                    title: "conversation \(index)", createdAt: time - Int64(index % 7) * 3_600_000, updatedAt: time,
                    messages: ["message of conversation \(index)"])
            }
        }
        let browser = try BrowserViewModel(
            repositories: .init(
                conversations: store.conversations, messages: store.messages, search: store.search, settings: store.settings, activity: store.activity),
            databasePath: path, isReadOnly: false, positionRunner: BackgroundPositionRunner(path: path),
            now: { BrowserFixture.now }, zone: .utc)
        browser.resize(width: 80, height: 24)
        try browser.start()
        return (store, browser)
    }

    /// Statements that count conversations (the whole table, or the rows before one); a
    /// look-up of one row by its key is not a scan.
    static func counts(_ store: Store) -> [String] {
        (store.database.recordedSQL ?? []).filter {
            let sql = $0.lowercased()
            return sql.contains("count(") && sql.contains("from conversation") && !sql.hasSuffix("where id = ?")
        }
    }

    /// Takes in background results until the position has arrived.
    static func settle(_ browser: BrowserViewModel) -> Bool {
        for _ in 0..<5_000 {
            browser.poll()
            if !browser.list.isFindingPosition { return true }
            usleep(2_000)
        }
        return false
    }

    /// The list's position is exact and right: the selection's index and the total are
    /// what the database says.
    static func expectExact(_ store: Store, _ browser: BrowserViewModel, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let list = browser.list
        let selected = try #require(list.selected, sourceLocation: sourceLocation)
        store.database.recordedSQL = nil
        #expect(list.isIndexExact && list.isTotalExact, sourceLocation: sourceLocation)
        #expect(list.selection == (try store.conversations.index(of: selected, sort: list.order)), sourceLocation: sourceLocation)
        #expect(list.total == (try store.conversations.count()), sourceLocation: sourceLocation)
    }

    @Test("rename, delete, undo, sort, mark, an outside change, G and g run no count; the position follows, exact")
    func noCountInAnyKey() throws {
        let folder = try TemporaryDirectory()
        let (store, browser) = try Self.browser(folder)
        let list = browser.list
        // Far from both ends, where the index cannot be known from the rows around it.
        for _ in 0..<60 { _ = try browser.handle(.pageDown) }
        #expect(list.selection == 60 * 22)
        try Self.expectExact(store, browser)

        var actions: [(String, () throws -> Void)] = [
            ("rename", {
                _ = try browser.handle(.character("r"))
                _ = try browser.handle(.character("!"))
                _ = try browser.handle(.enter)
            }),
            ("delete", {
                _ = try browser.handle(.character("d"))
                browser.promptShown()
                _ = try browser.handle(.character("y"))
            }),
            ("undo", { _ = try browser.handle(.character("u")) }),
            ("sort", { _ = try browser.handle(.character("s")) }),
            ("mark", { _ = try browser.handle(.character(" ")) }),
            ("G", { _ = try browser.handle(.character("G")) }),
            ("g", { _ = try browser.handle(.character("g")) }),
            ("page down", { _ = try browser.handle(.pageDown) }),
        ]
        // Another process's change, picked up at the periodic check.
        actions.append(("outside change", {
            let other = try Store.open(path: store.path)
            let oldest = try other.database.query("SELECT id FROM conversation ORDER BY id LIMIT 3") { $0.int64(0) }
            #expect(try other.conversations.delete(ids: oldest) == 3)
            #expect(try browser.idle())
        }))
        for _ in 0..<20 { _ = try browser.handle(.pageDown) }
        for (name, action) in actions {
            store.database.recordedSQL = []
            try action()
            #expect(Self.counts(store).isEmpty, "\(name) counted: \(Self.counts(store))")
            #expect(browser.status?.hasPrefix("error") != true, "\(name): \(browser.status ?? "")")
            #expect(Self.settle(browser), "\(name): the position never came")
            try Self.expectExact(store, browser)
        }
    }

    @Test("until the background count arrives the index is approximate; moving keeps it exact once known")
    func approximateUntilKnown() throws {
        let folder = try TemporaryDirectory()
        let (store, browser) = try Self.browser(folder)
        for _ in 0..<40 { _ = try browser.handle(.pageDown) }
        _ = try browser.handle(.character("s"))  // by created: another order, another index
        #expect(!browser.list.isIndexExact)
        #expect(Self.settle(browser))
        try Self.expectExact(store, browser)
        let known = browser.list.selection
        _ = try browser.handle(.character("j"))
        _ = try browser.handle(.pageDown)
        #expect(browser.list.isIndexExact)
        #expect(browser.list.selection == known + 1 + 22)
        store.database.recordedSQL = nil
        try Self.expectExact(store, browser)
    }
}

@Suite("Search as people expect")
@MainActor
struct SearchAsYouTypeTests {
    static func browser(
        _ store: Store, clock: TestClock, runner: (any SearchRunner)? = nil, search: (any SearchRepository)? = nil
    ) throws -> BrowserViewModel {
        let browser = try BrowserViewModel(
            repositories: .init(
                conversations: store.conversations, messages: store.messages, search: search ?? store.search,
                settings: store.settings, activity: store.activity),
            databasePath: store.path, isReadOnly: false, searchRunner: runner, now: { clock.now }, zone: .utc)
        browser.resize(width: 80, height: 24)
        try browser.start()
        return browser
    }

    static func store() throws -> Store {
        let store = try Store.open(path: ":memory:")
        for index in 0..<30 {
            try store.addConversation(
                title: "chat \(index)", createdAt: Int64(index) * 1_000,
                messages: ["sourdough \(index)", "rye bread", "sourdough again"])
        }
        return store
    }

    func type(_ text: String, into browser: BrowserViewModel) throws {
        for character in text { _ = try browser.handle(.character(character)) }
    }

    @Test("results follow the typing once it pauses; Esc goes back to where the prompt opened")
    func debounced() throws {
        let clock = TestClock()
        let browser = try Self.browser(try Self.store(), clock: clock)
        _ = try browser.handle(.character("/"))
        try type("rye", into: browser)
        clock.advance(BrowserViewModel.searchDelay - 1)
        #expect(!browser.poll())
        #expect(browser.search == nil && browser.screen == .list)
        #expect(browser.millisecondsUntilSearch == 1)
        clock.advance(1)
        #expect(browser.poll())
        #expect(browser.screen == .results)
        #expect(browser.search?.query == "rye")
        #expect(browser.search?.hits.count == 30)
        // The prompt stays open for more typing.
        guard case .search(let editor) = browser.prompt else {
            Issue.record("the prompt should stay open")
            return
        }
        #expect(editor.text == "rye")
        // Each key starts the wait again.
        try type(" bread", into: browser)
        clock.advance(BrowserViewModel.searchDelay - 1)
        _ = try browser.handle(.character("s"))
        clock.advance(BrowserViewModel.searchDelay - 1)
        #expect(!browser.poll())
        #expect(browser.search?.query == "rye")
        _ = try browser.handle(.backspace)
        clock.advance(BrowserViewModel.searchDelay)
        #expect(browser.poll())
        #expect(browser.search?.query == "rye bread")
        // A trailing space searches nothing again.
        _ = try browser.handle(.character(" "))
        #expect(browser.millisecondsUntilSearch == nil)
        // Esc: the list, as it was before the prompt opened.
        _ = try browser.handle(.escape)
        #expect(browser.prompt == nil)
        #expect(browser.screen == .list)
        #expect(browser.millisecondsUntilSearch == nil)
        // Enter on an emptied prompt is Esc too: the typed results do not stay.
        _ = try browser.handle(.character("/"))
        try type("rye", into: browser)
        clock.advance(BrowserViewModel.searchDelay)
        #expect(browser.poll())
        #expect(browser.screen == .results)
        _ = try browser.handle(.control("u"))
        _ = try browser.handle(.enter)
        #expect(browser.prompt == nil && browser.screen == .list)
    }

    @Test("each new key cancels the search running in the background")
    func newKeyCancels() throws {
        let folder = try TemporaryDirectory()
        let store = try Store.open(path: folder.file("h.sqlite"))
        for index in 0..<20 { try store.addConversation(title: "chat \(index)", createdAt: 0, messages: ["walrus \(index)"]) }
        let runner = RecordingSearchRunner(BackgroundSearchRunner(path: store.path))
        let clock = TestClock()
        let browser = try Self.browser(store, clock: clock, runner: runner)
        _ = try browser.handle(.character("/"))
        try type("wal", into: browser)
        clock.advance(BrowserViewModel.searchDelay)
        browser.poll()
        #expect(runner.jobs.count == 1)
        #expect(browser.searching == "wal")
        _ = try browser.handle(.character("r"))
        #expect(runner.jobs[0].wasCancelled)
        #expect(browser.searching == nil)
        try type("us", into: browser)
        clock.advance(BrowserViewModel.searchDelay)
        browser.poll()
        #expect(runner.jobs.count == 2)
        _ = try browser.handle(.enter)
        // Enter keeps the search for exactly this text running; the prompt closes.
        #expect(!runner.jobs[1].wasCancelled)
        #expect(browser.prompt == nil)
        runner.holding = false
        for _ in 0..<2_000 where browser.searching != nil {
            browser.poll()
            usleep(5_000)
        }
        #expect(browser.searching == nil)
        #expect(browser.search?.query == "walrus")
        #expect(browser.search?.hits.count == 20)
    }

    @Test("the prompt opens with the last query selected: typing replaces it, a movement key keeps it")
    func lastQuerySelected() throws {
        let clock = TestClock()
        let browser = try Self.browser(try Self.store(), clock: clock)
        _ = try browser.handle(.character("/"))
        try type("rye", into: browser)
        _ = try browser.handle(.enter)
        #expect(browser.search?.query == "rye")
        _ = try browser.handle(.character("/"))
        guard case .search(let selected) = browser.prompt else {
            Issue.record("/ should open the prompt")
            return
        }
        #expect(selected.text == "rye" && selected.isAllSelected)
        try type("sour", into: browser)
        guard case .search(let replaced) = browser.prompt else { return }
        #expect(replaced.text == "sour" && !replaced.isAllSelected)
        _ = try browser.handle(.enter)
        #expect(browser.search?.query == "sour")
        _ = try browser.handle(.character("/"))
        _ = try browser.handle(.end)
        try type("dough", into: browser)
        guard case .search(let kept) = browser.prompt else { return }
        #expect(kept.text == "sourdough")
        _ = try browser.handle(.escape)
        // Backspace on the selection clears it.
        var editor = LineEditor(text: "old", selected: true)
        _ = editor.apply(.backspace)
        #expect(editor.text == "" && editor.isEdited)
        var untouched = LineEditor(text: "old", selected: true)
        #expect(untouched.apply(.enter) == .submitted && untouched.text == "old")
    }

    @Test("/ in the reader finds within the conversation; n and N move between matches, wrapping")
    func findInReader() throws {
        let store = try Store.open(path: ":memory:")
        try store.addConversation(title: "other", createdAt: 0, messages: ["kiwi elsewhere"])
        let messages = (0..<60).map { $0 % 20 == 5 ? "a kiwi here (\($0))" : "line \($0)" }
        try store.addConversation(title: "fruit", createdAt: 1_000, messages: messages)
        let browser = try Self.browser(store, clock: TestClock())
        #expect(browser.list.selected?.title == "fruit")
        _ = try browser.handle(.enter)
        _ = try browser.handle(.character("/"))
        guard case .find = browser.prompt else {
            Issue.record("/ in the reader should find within it")
            return
        }
        try type("KIWI", into: browser)
        _ = try browser.handle(.enter)
        let reader = try #require(browser.reader)
        #expect(browser.screen == .reader)
        #expect(reader.find?.positions == [5, 25, 45])
        #expect(reader.find?.current == 0)
        #expect(reader.topPosition == 5)
        #expect(reader.highlights == ["KIWI"])
        _ = try browser.handle(.character("n"))
        #expect(reader.topPosition == 25 && reader.find?.current == 1)
        _ = try browser.handle(.character("n"))
        #expect(reader.find?.current == 2)
        _ = try browser.handle(.character("n"))
        #expect(reader.find?.current == 0 && reader.topPosition == 5)
        #expect(browser.status == "Wrapped to the first match")
        _ = try browser.handle(.character("N"))
        #expect(reader.find?.current == 2)
        #expect(browser.status == "Wrapped to the last match")
        // Nothing in this conversation: said so, and the list's search was not run.
        _ = try browser.handle(.character("/"))
        try type("banana", into: browser)
        _ = try browser.handle(.enter)
        #expect(browser.status == "Not in this conversation: “banana”")
        #expect(browser.reader?.find == nil)
        #expect(browser.search == nil)
    }

    @Test("the indexing progress is read with the results and at the periodic check")
    func indexing() throws {
        let store = try Self.store()
        let progress = IndexingSearchRepository(store.search)
        progress.progress = 0.374
        let browser = try Self.browser(store, clock: TestClock(), search: progress)
        _ = try browser.handle(.character("/"))
        try type("rye", into: browser)
        _ = try browser.handle(.enter)
        #expect(browser.indexingProgress == 0.374)
        progress.progress = 0.5
        #expect(try browser.idle())
        #expect(browser.indexingProgress == 0.5)
        progress.progress = nil
        #expect(try browser.idle())
        #expect(browser.indexingProgress == nil)
        #expect(SearchViewModel.indexingPercent(0.999) == 99)
        #expect(SearchViewModel.indexingPercent(.nan) == 0)
        #expect(SearchViewModel.indexingPercent(-3) == 0)
    }
}

/// The real background runner, with a record of the jobs it started and their cancels;
/// while `holding`, results are kept back (as if each search took long).
final class RecordingSearchRunner: SearchRunner, @unchecked Sendable {
    final class Job: SearchJob, @unchecked Sendable {
        let job: any SearchJob
        let runner: RecordingSearchRunner
        private let lock = NSLock()
        private var cancelled = false
        init(_ job: any SearchJob, runner: RecordingSearchRunner) {
            self.job = job
            self.runner = runner
        }
        var result: Result<Page<SearchHit>, any Error>? { runner.holding ? nil : job.result }
        var wasCancelled: Bool { lock.withLock { cancelled } }
        func cancel() {
            lock.withLock { cancelled = true }
            job.cancel()
        }
    }

    private let runner: any SearchRunner
    private let lock = NSLock()
    private var started: [Job] = []
    private var held = true
    init(_ runner: any SearchRunner) { self.runner = runner }
    var jobs: [Job] { lock.withLock { started } }
    var holding: Bool {
        get { lock.withLock { held } }
        set { lock.withLock { held = newValue } }
    }

    func start(_ query: String, limit: Int) -> any SearchJob {
        let job = Job(runner.start(query, limit: limit), runner: self)
        lock.withLock { started.append(job) }
        return job
    }
}

/// The real search, reporting an index rebuild in progress (which this branch's storage
/// never does by itself).
final class IndexingSearchRepository: SearchRepository {
    let base: any SearchRepository
    var progress: Double?
    init(_ base: any SearchRepository) { self.base = base }
    func search(_ query: String, filter: ConversationFilter, includingHidden: Bool, after cursor: Cursor?, limit: Int) throws -> Page<SearchHit> {
        try base.search(query, filter: filter, includingHidden: includingHidden, after: cursor, limit: limit)
    }
    func matchingPositions(conversationID: Int64, query: String) throws -> [Int] {
        try base.matchingPositions(conversationID: conversationID, query: query)
    }
    func matchingMessageIDs(conversationID: Int64, query: String) throws -> [Int64] {
        try base.matchingMessageIDs(conversationID: conversationID, query: query)
    }
    func indexingProgress() throws -> Double? { progress }
}
