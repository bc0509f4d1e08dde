import Foundation
import ScrollbackModel
import TerminalText

/// The search as you type (the prompt line's `/` from the list and the results), which makes
/// the results screen.
extension BrowserViewModel {
    // MARK: Search as you type
    func openSearchPrompt() {
        beforeSearchPrompt = (stack, lastResults)
        prompt = .search(editor: LineEditor(text: lastQuery, selected: true))
    }

    /// The text in the prompt changed: the search in flight is stopped, and a new one
    /// starts once typing pauses (`poll`).
    func searchAsTyped(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        // A space typed at either end changes nothing: what runs or shows stays.
        if pendingSearch?.query == trimmed || (pendingSearch == nil && screen == .results && search?.query == trimmed) {
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
        if let search, search.query == trimmed, pendingSearch == nil, screen == .results {
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
            stack = before.stack
            lastResults = before.results
            lastResults?.resize(width: width, contentHeight: contentHeight)
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
        let results = ResultsScreen(search, browser: self)
        lastResults = results
        stack = []
        push(results)
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
