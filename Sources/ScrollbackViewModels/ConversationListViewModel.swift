import ScrollbackModel

/// The conversation list: a window of loaded rows over millions, the selection, the
/// scroll position and the marks.
///
/// Rows are fetched by keyset pages as the selection nears either end of the window, and
/// rows far from it are dropped, so memory stays bounded however far the user goes. `G`
/// loads the last page directly. Positions are absolute indexes in the current order.
@MainActor
public final class ConversationListViewModel {
    public private(set) var order: ConversationOrder
    /// Which conversations the list shows (`f`); empty: all of them.
    public private(set) var filter: ConversationFilter = .none
    /// The loaded window, contiguous in `order`.
    public private(set) var rows: [ConversationDTO] = []
    /// The absolute index of `rows[0]`.
    public private(set) var windowStart = 0
    public private(set) var total = 0
    /// The absolute index of the selected row.
    public private(set) var selection = 0
    /// The absolute index of the first row on screen.
    public private(set) var top = 0
    public private(set) var marks: Set<Int64> = []
    /// False while the selection's index is a guess (after a change, until the background
    /// count arrives): the footer shows it as approximate. Moves keep it exact by arithmetic.
    public private(set) var isIndexExact = true
    /// False while `total` may be off (after another process's change, until counted).
    public private(set) var isTotalExact = true
    /// Finds the selection's index away from the main actor; nil counts at once (for an
    /// in-memory database, which no other connection can see).
    public var positionRunner: (any PositionRunner)?
    /// Rows on screen; set by the front end when the terminal is resized.
    public var viewportHeight = 20 {
        didSet { keepSelectionVisible() }
    }

    let conversations: any ConversationRepository
    private let pageSize: Int
    private let maximumLoaded: Int
    /// Where to fetch the rows before the window; nil when the window starts at the top.
    private var before: Cursor?
    /// Where to fetch the rows after the window; nil when the window ends at the bottom.
    private var after: Cursor?
    /// The row a move is heading for while pages load: rows near it are never dropped.
    private var focus: Int?
    /// Changes whenever rows are numbered afresh (so that a position found for an older
    /// numbering is not applied to this one).
    private var numbering = 0
    /// The position being found in the background: for which numbering, and the index the
    /// conversation was given meanwhile.
    private var pendingPosition: (job: any PositionJob, guessed: Int, numbering: Int)?

    public init(
        conversations: any ConversationRepository, order: ConversationOrder, pageSize: Int = 100, maximumLoaded: Int = 600
    ) {
        self.conversations = conversations
        self.order = order
        self.pageSize = max(pageSize, 10)
        self.maximumLoaded = max(maximumLoaded, 3 * pageSize)
    }

    public var selected: ConversationDTO? { row(at: selection) }
    public var isEmpty: Bool { total == 0 }

    public func row(at index: Int) -> ConversationDTO? {
        let offset = index - windowStart
        return rows.indices.contains(offset) ? rows[offset] : nil
    }

    /// The rows on screen with their absolute indexes.
    public var visibleRows: [(index: Int, conversation: ConversationDTO)] {
        (top..<min(top + max(viewportHeight, 0), total)).compactMap { index in
            row(at: index).map { (index, $0) }
        }
    }

    // MARK: Loading

    /// Loads the first page.
    public func load() throws {
        guard !filter.isEmpty else {
            // The kept count: no scan.
            total = try conversations.count()
            isTotalExact = true
            try loadFirstPage()
            return
        }
        pendingPosition?.job.cancel()
        pendingPosition = nil
        total = 0
        try loadFirstPage()
        guard after != nil, let first = rows.first else { return }
        // How many pass the filter is counted away from the main actor (a scan, for some
        // filters); until then the total is what is loaded, shown as a lower bound.
        total = rows.count
        isTotalExact = false
        if let positionRunner {
            pendingPosition = (positionRunner.start(first, sort: order, filter: filter), 0, numbering)
        } else {
            total = try conversations.count(filter: filter)
            isTotalExact = true
        }
    }

    /// Moves to the newest conversation at or before `time` (updated, or created in that
    /// order), past the pinned ones: one keyset query, then the rows around it. Returns
    /// false when none is that old, or the order is by title.
    public func jump(toTimeAtOrBefore time: Timestamp) throws -> Bool {
        let pinned = filter.pinnedOnly
        let cursor: Cursor
        switch order {
        case .updated: cursor = Cursor.conversationKey(pinned: pinned, updatedAt: time.milliseconds)
        case .created: cursor = Cursor.conversationKey(pinned: pinned, createdAt: time.milliseconds)
        case .title: return false
        }
        guard let found = try conversations.page(sort: order, filter: filter, at: .after(cursor), limit: 1).items.first else {
            return false
        }
        try reload(keeping: found.id)
        return true
    }

    /// Shows only the conversations that pass `filter`, on the selected one (or the one
    /// `keeping` names) when it passes, else from the first; marks stay.
    public func setFilter(_ filter: ConversationFilter, keeping id: Int64? = nil) throws {
        guard filter != self.filter else { return }
        let wanted = try id.flatMap { try conversations.conversation(id: $0) } ?? selected
        let keep = wanted.flatMap { filter.admits($0) ? $0.id : nil }
        self.filter = filter
        // Marks on rows the filter hides would be acted on unseen: they go.
        if !marks.isEmpty {
            marks = Set(try conversations.conversations(ids: marks.sorted()).filter(filter.admits).map(\.id))
        }
        guard let keep else {
            try load()
            return
        }
        // The selected conversation passes: the list opens on it (one load, not two), and
        // how many pass is counted in the background.
        total = 0
        try reload(keeping: keep, totalChange: nil)
    }
    private func loadFirstPage() throws {
        let page = try conversations.page(sort: order, filter: filter, at: .first, limit: pageSize)
        rows = page.items
        windowStart = 0
        before = nil
        after = page.next
        selection = 0
        top = 0
        numbering += 1
        isIndexExact = true
        if after == nil {
            total = rows.count
            isTotalExact = true
        }
    }

    private func loadLastPage() throws {
        let page = try conversations.page(sort: order, filter: filter, at: .last, limit: pageSize)
        rows = page.items
        before = page.previous
        after = nil
        if before == nil {
            total = rows.count
            isTotalExact = true
        }
        windowStart = max(0, total - rows.count)
        numbering += 1
        isIndexExact = isTotalExact
    }

    private func loadAfter() throws {
        guard let cursor = after else { return }
        let page = try conversations.page(sort: order, filter: filter, at: .after(cursor), limit: pageSize)
        rows += page.items
        after = page.next
        if page.items.isEmpty { after = nil }
        total = max(total, windowStart + rows.count)
        dropFarRows()
    }

    private func loadBefore() throws {
        guard let cursor = before else { return }
        let page = try conversations.page(sort: order, filter: filter, at: .before(cursor), limit: pageSize)
        rows = page.items + rows
        windowStart -= page.items.count
        before = page.previous
        if page.items.isEmpty { before = nil }
        if windowStart < 0 || (before == nil && windowStart != 0) {
            // Rows were added above since the window was fetched: renumber from the top.
            let shift = -windowStart
            windowStart = 0
            selection += shift
            top += shift
            total += shift
            numbering += 1
        }
        if before == nil && windowStart == 0 { isIndexExact = true }
        dropFarRows()
    }

    /// Keeps at most `maximumLoaded` rows, dropping those farthest from the screen (or from
    /// where a move is heading: the rows just fetched for it must stay).
    private func dropFarRows() {
        guard rows.count > maximumLoaded else { return }
        let center = focus ?? selection
        let keepFrom = min(center, focus == nil ? top : center) - pageSize - viewportHeight
        let keepTo = max(center, focus == nil ? top + viewportHeight : center) + pageSize + viewportHeight
        let dropFront = min(max(0, keepFrom - windowStart), rows.count)
        if dropFront > 0 {
            rows.removeFirst(dropFront)
            windowStart += dropFront
            before = rows.first.map { Cursor.conversation($0, order: order) }
        }
        let dropBack = min(max(0, windowStart + rows.count - keepTo), rows.count)
        if dropBack > 0 && rows.count > maximumLoaded {
            rows.removeLast(dropBack)
            after = rows.last.map { Cursor.conversation($0, order: order) }
        }
    }

    /// Makes sure rows around `index` (and the screen) are loaded.
    private func ensureLoaded(around index: Int) throws {
        focus = index
        defer { focus = nil }
        let margin = max(pageSize / 2, viewportHeight)
        while index + margin >= windowStart + rows.count, after != nil {
            let count = rows.count
            try loadAfter()
            if rows.count == count && after == nil { break }
        }
        while index - margin < windowStart, before != nil {
            try loadBefore()
        }
    }

    // MARK: Moving

    public func move(by delta: Int) throws {
        guard total > 0 else { return }
        try moveTo(selection + delta)
    }

    public func moveToStart() throws {
        guard total > 0 else { return }
        if before == nil && windowStart == 0 {
            selection = 0
            top = 0
        } else {
            try loadFirstPage()
        }
    }

    public func moveToEnd() throws {
        guard total > 0 else { return }
        if after != nil {
            try loadLastPage()
        }
        selection = windowStart + rows.count - 1
        total = selection + 1
        keepSelectionVisible()
    }

    /// PgDn and PgUp scroll by a screen, as less and tig do: the selection moves with the
    /// rows and stays on the same line of the screen (at either end, it goes to the first
    /// or last row). Ctrl-D and Ctrl-U do the same by half a screen.
    public func pageDown() throws { try scroll(by: max(viewportHeight, 1)) }
    public func pageUp() throws { try scroll(by: -max(viewportHeight, 1)) }
    public func halfPageDown() throws { try scroll(by: max(viewportHeight / 2, 1)) }
    public func halfPageUp() throws { try scroll(by: -max(viewportHeight / 2, 1)) }

    private func scroll(by delta: Int) throws {
        guard total > 0 else { return }
        let line = selection - top
        let topBefore = top
        try moveTo(selection + delta)
        let height = max(viewportHeight, 1)
        top = max(0, min(selection - line, max(total - height, 0)))
        if top == topBefore {
            // Nothing left to scroll: the selection goes to the end it was heading for.
            try moveTo(delta > 0 ? total - 1 : 0)
            return
        }
        if selection < top { top = selection }
        if selection >= top + height { top = selection - height + 1 }
    }

    private func moveTo(_ target: Int) throws {
        var target = min(max(target, 0), max(total - 1, 0))
        try ensureLoaded(around: target)
        // The data may have fewer rows than we thought.
        if after == nil { total = windowStart + rows.count }
        target = min(max(target, windowStart), windowStart + rows.count - 1)
        selection = max(target, 0)
        keepSelectionVisible()
    }

    private func keepSelectionVisible() {
        let height = max(viewportHeight, 1)
        if selection < top { top = selection }
        if selection >= top + height { top = selection - height + 1 }
        top = max(0, min(top, max(total - height, 0)))
        if selection < top { top = selection }
    }

    // MARK: Marks

    public func toggleMark() {
        guard let id = selected?.id else { return }
        if marks.contains(id) { marks.remove(id) } else { marks.insert(id) }
    }

    public func clearMarks() { marks.removeAll() }

    /// Forgets marks on conversations that were deleted here.
    public func unmark(_ ids: Set<Int64>) { marks.subtract(ids) }

    /// Marks `ids` again (marks an intermediate filter hid, as narrowing is typed): those that
    /// exist and pass the filter.
    public func restoreMarks(_ ids: Set<Int64>) throws {
        marks = Set(try conversations.conversations(ids: ids.sorted()).filter(filter.admits).map(\.id))
    }

    /// Forgets marks on conversations that no longer exist (deleted by another process).
    public func pruneMarks() throws {
        guard !marks.isEmpty else { return }
        marks = Set(try conversations.conversations(ids: marks.sorted()).map(\.id))
    }

    // MARK: Order and refresh

    /// Changes the order, keeping the selected conversation selected.
    public func setOrder(_ order: ConversationOrder) throws {
        guard order != self.order else { return }
        let keep = selected?.id
        self.order = order
        try reload(keeping: keep)
    }

    /// Fetches the window again around `id` (or, if it is gone, around the nearest row that
    /// is not), keeping it on the same line of the screen.
    ///
    /// Nothing here counts the conversations: `totalChange` is how many were added (or,
    /// negative, removed) by the action, nil when not known (another process's change). The
    /// selection's index is exact near either end; elsewhere it is a guess until the
    /// position runner's answer arrives (`takePosition`).
    public func reload(keeping id: Int64?, fallbacks: [Int64] = [], totalChange: Int? = 0) throws {
        let screenLine = selection - top
        pendingPosition?.job.cancel()
        pendingPosition = nil
        if let totalChange {
            total = max(total + totalChange, 0)
        } else {
            isTotalExact = false
        }
        numbering += 1
        for candidate in ([id].compactMap { $0 } + fallbacks) {
            // Only a row the filter keeps (another process may have renamed it out of it).
            guard let conversation = try conversations.conversation(id: candidate), filter.admits(conversation) else { continue }
            let cursor = Cursor.conversation(conversation, order: order)
            let half = pageSize / 2
            let earlier = try conversations.page(sort: order, filter: filter, at: .before(cursor), limit: half)
            let later = try conversations.page(sort: order, filter: filter, at: .after(cursor), limit: half)
            rows = earlier.items + [conversation] + later.items
            before = earlier.items.isEmpty ? nil : earlier.previous
            after = later.items.isEmpty ? nil : later.next
            let atTop = earlier.previous == nil
            let atBottom = later.next == nil
            if atTop && atBottom {
                total = rows.count
                isTotalExact = true
            }
            let index: Int
            if positionRunner == nil {
                // No other connection can see this database: count here.
                total = try conversations.count(filter: filter)
                isTotalExact = true
                index = try conversations.index(of: conversation, sort: order, filter: filter)
                isIndexExact = true
            } else if atTop {
                index = earlier.items.count
                isIndexExact = true
            } else if atBottom && isTotalExact {
                index = max(total - 1 - later.items.count, earlier.items.count)
                isIndexExact = true
            } else {
                // Where it was, as far as the rows around it allow, until counted.
                var guess = max(selection, earlier.items.count)
                let lastPossible = total - 1 - later.items.count
                if lastPossible >= earlier.items.count { guess = min(guess, lastPossible) }
                index = guess
                isIndexExact = false
            }
            windowStart = index - earlier.items.count
            total = max(total, windowStart + rows.count)
            if let positionRunner, !(isIndexExact && isTotalExact) {
                pendingPosition = (positionRunner.start(conversation, sort: order, filter: filter), index, numbering)
            }
            selection = index
            top = max(0, selection - screenLine)
            keepSelectionVisible()
            return
        }
        try loadFirstPage()
        if positionRunner == nil {
            total = try conversations.count(filter: filter)
            isTotalExact = true
        }
    }

    /// True while a position is being found in the background.
    public var isFindingPosition: Bool { pendingPosition != nil }

    /// Takes in the position found in the background, if it has arrived: renumbers the
    /// window (the rows stay as they are on screen) and sets the total. Returns true when
    /// it arrived.
    @discardableResult
    public func takePosition() -> Bool {
        guard let pending = pendingPosition, let result = pending.job.result else { return false }
        pendingPosition = nil
        // A failure (the database busy, say) leaves the position approximate; the next
        // change looks again.
        guard case .success(let position) = result else { return true }
        var shift = 0
        if pending.numbering == numbering {
            shift = position.index - pending.guessed
            isIndexExact = true
        } else if after == nil && before != nil && !isIndexExact {
            // `G` was pressed meanwhile: the window ends at the last row.
            shift = position.total - (windowStart + rows.count)
            isIndexExact = true
        }
        if windowStart + shift < 0 { shift = -windowStart }
        windowStart += shift
        selection += shift
        top += shift
        total = after == nil ? windowStart + rows.count : max(position.total, windowStart + rows.count)
        isTotalExact = true
        keepSelectionVisible()
        return true
    }

    /// The rows a delete should fall back to when the selected one goes: the next rows,
    /// then the previous ones, from the window.
    public func neighbours(of index: Int, excluding excluded: Set<Int64>) -> [Int64] {
        let offset = index - windowStart
        guard rows.indices.contains(offset) else { return [] }
        let following = rows[(offset + 1)...].map(\.id)
        let preceding = rows[..<offset].reversed().map(\.id)
        return Array((following + preceding).filter { !excluded.contains($0) }.prefix(50))
    }
}
