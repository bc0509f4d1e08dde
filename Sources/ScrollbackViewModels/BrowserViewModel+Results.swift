import Foundation
import ScrollbackModel
import TerminalText

/// Search results, and the search as you type that makes them: their keys' handling.
extension BrowserViewModel {
    func handleInSearch(_ command: BrowserCommand) throws {
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
        case .rename, .delete, .toggleMark, .deleteMarked, .undo, .redo, .cycleSort:
            status = "Back to the list (Esc) to do that"
        case .previousMessage, .nextMessage, .previousVersion, .nextVersion, .outline, .nextConversation, .previousConversation, .copyMessage, .copyCode, .copyConversation,
            .pipe, .pager, .editor, .pin, .export, .toggleHidden, .toggleExpanded, .followLink:
            status = "Open a result (Enter) to do that"
        case .filter, .narrow, .jumpToDate:
            status = "Back to the list (Esc) to do that"
        }
    }

    // MARK: Search as you type
    func openSearchPrompt() {
        beforeSearchPrompt = (mode, search)
        prompt = .search(editor: LineEditor(text: lastQuery, selected: true))
    }

    /// The text in the prompt changed: the search in flight is stopped, and a new one
    /// starts once typing pauses (`poll`).
    func searchAsTyped(_ text: String) {
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

    func submitSearch(_ text: String) throws {
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
    func cancelSearchPrompt() {
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
        guard let at = [searchDue?.at, narrowDue?.at].compactMap({ $0 }).min() else { return nil }
        let (left, overflow) = at.milliseconds.subtractingReportingOverflow(now().milliseconds)
        return overflow ? 0 : max(left, 0)
    }


    /// Opens the reader on the hit's branch, the matched message in view.
    func openSearchHit() throws {
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

    func runSearch(_ query: String) throws {
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

    func showResults(_ search: SearchViewModel) {
        search.viewportHits = max(contentHeight / 2, 1)
        self.search = search
        mode = .searchResults
        reader = nil
        refreshIndexingProgress()
        // While the prompt is open the results follow the typing: no message over them.
        if search.hits.isEmpty && prompt == nil { status = "Nothing matches “\(UntrustedText.sanitized(search.query))”" }
    }

    func refreshIndexingProgress() {
        // Progress is a nicety: failing to read it never stands in the way.
        indexingProgress = (try? repositories.search.indexingProgress()).flatMap { $0 }
    }

    /// The query of a search still running in the background, if any (for the footer).
    public var searching: String? { pendingSearch?.query }

    func takeSearchResult() -> Bool {
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
}
