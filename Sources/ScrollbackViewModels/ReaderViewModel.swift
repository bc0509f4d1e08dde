import ScrollbackModel
import TerminalText

/// One line of the reader, laid out for the current width.
public struct ReaderLine: Equatable, Sendable {
    public enum Style: Equatable, Sendable {
        case header(Role)
        case text
        case code
        case fence
        case blank
        /// A collapsed message (a tool call, traffic for the model): its one line.
        case summary
        /// A file of the message: `▣ plot.png  1024×768 PNG  245 kB` (`attachment` says which).
        case attachment
        /// A row kept for an image under its line (`attachment` says which, `imageRow` which
        /// of its `imageRows`): drawn blank, the front end draws the image over them.
        case image
    }

    /// Safe to draw, at most the width in cells.
    public var text: String
    public var style: Style
    /// The message this line belongs to.
    public var position: Int
    /// For a line of code, which code block of its message (from 0).
    public var block: Int? = nil
    /// A line of a message the person did not see (shown with `z`): drawn dimmed.
    public var dimmed = false
    /// For an attachment's line, which of its message's attachments (from 0).
    public var attachment: Int? = nil
    /// For an image's rows: which row of it (from 0), of how many.
    public var imageRow = 0
    public var imageRows = 0
}

/// A terminal cell's size in pixels, when the terminal can show images: the reader then
/// keeps rows under each image's line for it.
public struct ImageCell: Sendable, Hashable {
    public var width: Int
    public var height: Int
    public init(width: Int, height: Int) {
        self.width = max(width, 1)
        self.height = max(height, 1)
    }

    /// The rows and columns an image of `pixels` takes in a reader `width` columns wide:
    /// the width of the reader at most, half of `height` rows at most, never larger than
    /// its own pixels; nil for an image whose size is not known.
    public func cells(for pixels: (width: Int, height: Int), width: Int, height: Int) -> (columns: Int, rows: Int)? {
        guard pixels.width > 0, pixels.height > 0, width > 0, height > 1 else { return nil }
        let ownColumns = (pixels.width + self.width - 1) / self.width
        var columns = max(min(width, ownColumns), 1)
        // Rows for those columns, the aspect kept.
        // To the nearest row, as the drawing fits the image to whole cells too.
        var rows = max(Int((Double(columns * self.width) * Double(pixels.height) / Double(pixels.width) / Double(self.height)).rounded()), 1)
        let most = max(height / 2, 1)
        if rows > most {
            rows = most
            columns = max(Int((Double(rows * self.height) * Double(pixels.width) / Double(pixels.height) / Double(self.width)).rounded(.down)), 1)
        }
        return (min(columns, width), max(rows, 1))
    }
}

/// An image whose rows are all on screen: where the front end draws it.
public struct ShownImage: Sendable, Hashable {
    public let attachment: AttachmentDTO
    /// Its first row, counted from the reader's first row on screen.
    public let row: Int
    public let columns: Int
    public let rows: Int
}

/// A conversation's messages as lines, paged through the repository like the list: a long
/// conversation is never loaded whole.
///
/// One branch of the conversation's tree is shown: the current one, or the one chosen with
/// `[` and `]` at a message that has other versions (siblings), or from the outline. A
/// branched conversation's shape (ids and parents, no text) is held to find siblings and
/// leaves; the branch itself is paged by the ids along it.
@MainActor
public final class ReaderViewModel {
    public private(set) var conversation: ConversationDTO
    public private(set) var lines: [ReaderLine] = []
    /// The index in `lines` of the first line on screen.
    public private(set) var topLine = 0
    public var viewportHeight = 20 {
        didSet { clampTop() }
    }
    public private(set) var width: Int
    /// Words to highlight (from a search, or what is being found), if any.
    public private(set) var highlights: [String]
    /// What `/` is finding in this conversation: the query, the positions of the messages
    /// that match (ascending) and which of them is the current one.
    public private(set) var find: (query: String, positions: [Int], current: Int)?
    private let searchHighlights: [String]
    /// The message `[`, `]` and the message keys act on: its position along the branch.
    public private(set) var focus = 0
    /// The branch shown.
    public private(set) var branch: MessageBranch
    /// The conversation's shape, when it has more than one branch.
    public private(set) var tree: ConversationTree?
    /// Whether a branch chosen here is kept for the next time (not in `--readonly`, where
    /// it lasts until the reader closes).
    private let remembersChoices: Bool
    /// Choices made here when they are not kept: message → the leaf left there.
    private var choices: [Int64: Int64] = [:]
    /// Whether the messages the person did not see are shown too (`z`), dimmed and marked.
    public private(set) var showsHidden = false
    /// The collapsed messages (tool calls and traffic for the model) opened with Tab.
    private var expanded = Set<Int64>()
    /// The terminal's cell in pixels when it shows images; nil: image attachments are
    /// their line alone.
    public var imageCell: ImageCell? {
        didSet { if imageCell != oldValue { relayoutKeepingTop() } }
    }

    /// Fetches attachments' bytes another machine holds, when their lines are laid out
    /// (`[sync] fetch_attachments`); nil where this browser cannot (`fetchUnavailable` says why).
    public var fetcher: (any AttachmentFetcher)?
    /// Why this browser fetches nothing (read-only, sync off, no secrets), for the lines of
    /// files another machine holds.
    public var fetchUnavailable: String?

    /// A fetch began or ended: the lines of awaited files say so.
    public func fetchNotesChanged() { relayoutKeepingTop() }

    /// What the lines of `message`'s awaited files say, each asked for on the way.
    private func fetchNotes(for message: MessageDTO) -> [String: String] {
        var notes: [String: String] = [:]
        for attachment in message.attachments where !attachment.isStored {
            guard let hash = attachment.awaited else { continue }
            if let fetcher {
                fetcher.request(sha256: hash, size: attachment.size, name: UntrustedText.sanitized(attachment.name), again: false)
                if let note = fetcher.note(for: hash) { notes[hash] = note }
            } else if let fetchUnavailable {
                notes[hash] = fetchUnavailable
            }
        }
        return notes
    }

    private let messages: any MessageRepository
    private var loaded: [MessageDTO] = []
    /// For each loaded message, its first line in `lines`.
    private var lineStarts: [Int] = []
    private var before: Cursor?
    private var after: Cursor?
    private let pageSize: Int
    private let maximumLoaded: Int

    /// - Parameter leaf: the branch to show (its last message); nil: the current branch.
    public init(
        conversation: ConversationDTO, messages: any MessageRepository, width: Int, highlights: [String] = [],
        pageSize: Int = 100, maximumLoaded: Int = 400, leaf: Int64? = nil, remembersChoices: Bool = true
    ) throws {
        self.conversation = conversation
        self.messages = messages
        self.width = max(width, 1)
        self.highlights = highlights
        searchHighlights = highlights
        self.pageSize = max(pageSize, 2)
        self.maximumLoaded = max(maximumLoaded, 3 * pageSize)
        self.remembersChoices = remembersChoices
        branch = try messages.branch(of: conversation, leaf: leaf)
        if branch.path != nil {
            let tree = try messages.tree(conversationID: conversation.id)
            self.tree = Self.branching(tree)
        }
    }

    /// The tree, when there is one to choose branches in (more than one branch).
    private static func branching(_ tree: ConversationTree) -> ConversationTree? {
        tree.count > 0 && tree.branches.count > 1 ? tree : nil
    }

    // MARK: Hidden messages

    /// Shows (or hides again) the messages the person did not see, on the same branch, the
    /// focused message kept in view (or the nearest seen one above it, when it goes).
    public func setShowsHidden(_ shown: Bool) throws {
        guard shown != showsHidden else { return }
        let focusedID = focusedMessage?.id
        let fullTree = try messages.tree(conversationID: conversation.id, showingHidden: true)
        var leaf = branch.leaf
        if shown, let seenLeaf = leaf {
            leaf = fullTree.leaf(showingHiddenOf: seenLeaf, current: conversation.currentLeafID)
        }
        showsHidden = shown
        let fresh = try messages.branch(of: conversation, leaf: leaf, showingHidden: shown)
        let tree = fresh.path != nil ? try messages.tree(conversationID: conversation.id, showingHidden: shown) : nil
        self.tree = tree.flatMap(Self.branching)
        var place = 0
        if let focusedID, let path = fresh.path {
            // The focused message, or the nearest one above it that is shown.
            var at: Int64? = focusedID
            var steps = 0
            while let id = at, !path.contains(id), steps <= fullTree.count {
                at = fullTree.parent(of: id)
                steps += 1
            }
            place = at.flatMap { path.firstIndex(of: $0) } ?? 0
        } else if let focusedID, let message = try messages.messages(ids: [focusedID]).first {
            place = message.position
        }
        branch = fresh
        try open(at: max(0, min(place, max(fresh.count - 1, 0))))
        focus = max(0, min(place, max(fresh.count - 1, 0)))
    }

    /// Opens or closes the focused message when it is collapsed to a line (a tool call,
    /// traffic for the model); false when the focused message is not one.
    @discardableResult
    public func toggleExpanded() -> Bool {
        guard let message = focusedMessage, Self.collapses(message.kind) else { return false }
        if expanded.remove(message.id) == nil { expanded.insert(message.id) }
        let anchor = topPosition
        relayout()
        if let anchor, let index = loaded.firstIndex(where: { $0.position == anchor }) { topLine = lineStarts[index] }
        clampTop()
        return true
    }

    /// Whether messages of `kind` show as one line until opened.
    static func collapses(_ kind: MessageKind) -> Bool {
        kind == .tool || kind == .internal || kind == .unknown
    }

    /// The number of messages of the branch shown.
    public var branchCount: Int { branch.count }

    /// How many messages are loaded (bounded by `maximumLoaded` and a page).
    var loadedCount: Int { loaded.count }

    /// Loads the messages from `position` on and shows that message at the top.
    public func open(at position: Int = 0) throws {
        let start: PagePosition =
            position > 0 ? .after(Cursor.message(conversationID: conversation.id, position: position - 1)) : .first
        let page = try messages.page(branch, at: start, limit: pageSize)
        loaded = page.items
        after = page.next
        before = position > 0 && !page.items.isEmpty ? Cursor.message(conversationID: conversation.id, position: page.items[0].position) : nil
        relayout()
        topLine = 0
        focus = loaded.first?.position ?? 0
        try fillAround()
    }

    /// The position of the message at the top of the screen.
    public var topPosition: Int? {
        lines.indices.contains(topLine) ? lines[topLine].position : loaded.first?.position
    }

    public var visibleLines: ArraySlice<ReaderLine> {
        let end = min(topLine + max(viewportHeight, 0), lines.count)
        return topLine < end ? lines[topLine..<end] : []
    }

    public var isAtEnd: Bool { after == nil && topLine + viewportHeight >= lines.count }

    // MARK: Scrolling

    public func scroll(by delta: Int) throws {
        topLine += delta
        try fillAround()
        clampTop()
        keepFocusVisible()
    }

    public func pageDown() throws { try scroll(by: max(viewportHeight - 1, 1)) }
    public func pageUp() throws { try scroll(by: -max(viewportHeight - 1, 1)) }
    public func halfPageDown() throws { try scroll(by: max(viewportHeight / 2, 1)) }
    public func halfPageUp() throws { try scroll(by: -max(viewportHeight / 2, 1)) }

    public func toStart() throws {
        if before != nil { try open(at: 0) } else { topLine = 0 }
        focus = 0
    }

    public func toEnd() throws {
        if after != nil {
            let page = try messages.page(branch, at: .last, limit: pageSize)
            loaded = page.items
            before = page.previous
            after = nil
            relayout()
        }
        topLine = max(0, lines.count - viewportHeight)
        try fillAround()
        topLine = max(0, lines.count - viewportHeight)
        focus = loaded.last?.position ?? 0
    }

    /// Lays the lines out again for a new width, keeping the same message at the top.
    public func resize(width: Int, height: Int) {
        let heightChanged = height != viewportHeight
        viewportHeight = height
        // Images take half the height at most: a new height lays them out again.
        guard max(width, 1) != self.width || (heightChanged && imageCell != nil) else { return }
        self.width = max(width, 1)
        relayoutKeepingTop()
    }

    /// Lays every loaded message out again, the same message at the top.
    private func relayoutKeepingTop() {
        let anchor = topPosition
        relayout()
        if let anchor, let index = loaded.firstIndex(where: { $0.position == anchor }) {
            topLine = lineStarts[index]
        }
        clampTop()
    }

    /// The images whose rows are all on screen, top first.
    public var shownImages: [ShownImage] {
        guard imageCell != nil else { return [] }
        var shown: [ShownImage] = []
        let end = min(topLine + viewportHeight, lines.count)
        var index = topLine
        while index < end {
            let line = lines[index]
            if line.style == .image, line.imageRow == 0, index + line.imageRows <= end, let which = line.attachment,
                let message = loaded.first(where: { $0.position == line.position }), which < message.attachments.count
            {
                let attachment = message.attachments[which]
                let columns = imageCell?.cells(
                    for: (attachment.width ?? 0, attachment.height ?? 0), width: width, height: viewportHeight)?.columns ?? width
                shown.append(ShownImage(attachment: attachment, row: index - topLine, columns: columns, rows: line.imageRows))
            }
            index += 1
        }
        return shown
    }

    private func clampTop() {
        if after == nil { topLine = min(topLine, max(0, lines.count - viewportHeight)) }
        topLine = max(0, min(topLine, max(lines.count - 1, 0)))
    }

    /// Loads pages before or after as the screen nears either end, and drops far ones.
    private func fillAround() throws {
        let margin = max(viewportHeight * 2, 40)
        while topLine + viewportHeight + margin > lines.count, let cursor = after {
            let page = try messages.page(branch, at: .after(cursor), limit: pageSize)
            after = page.items.isEmpty ? nil : page.next
            append(page.items)
        }
        while topLine < margin, let cursor = before {
            let page = try messages.page(branch, at: .before(cursor), limit: pageSize)
            before = page.items.isEmpty ? nil : page.previous
            let added = prepend(page.items)
            topLine += added
        }
        dropFar()
    }

    private func dropFar() {
        guard loaded.count > maximumLoaded, let topPosition else { return }
        guard let topIndex = loaded.firstIndex(where: { $0.position == topPosition }) else { return }
        let dropFront = max(0, topIndex - pageSize)
        if dropFront > 0 {
            let removedLines = lineStarts[dropFront]
            loaded.removeFirst(dropFront)
            before = Cursor.message(conversationID: conversation.id, position: loaded[0].position)
            lines.removeFirst(removedLines)
            lineStarts = lineStarts.dropFirst(dropFront).map { $0 - removedLines }
            topLine -= removedLines
        }
        if loaded.count > maximumLoaded {
            let keep = maximumLoaded
            let cutLine = lineStarts[keep]
            loaded.removeLast(loaded.count - keep)
            lineStarts.removeLast(lineStarts.count - keep)
            lines.removeLast(lines.count - cutLine)
            after = loaded.last.map { Cursor.message(conversationID: conversation.id, position: $0.position) }
        }
    }

    // MARK: Finding

    /// Starts finding `query`: the first match at or after the top of the screen (else the
    /// first) becomes current and is shown.
    ///
    /// - Parameter keeping: the position of the match that was current (finding again after
    ///   another process changed the conversation): it stays current, and the screen stays.
    public func setFind(query: String, positions: [Int], keeping: Int? = nil) throws {
        guard !positions.isEmpty else {
            clearFind()
            return
        }
        if let keeping, let kept = positions.firstIndex(of: keeping) {
            find = (query, positions, kept)
            return
        }
        let here = topPosition ?? 0
        let current = positions.firstIndex { $0 >= here } ?? 0
        find = (query, positions, current)
        highlights = query.split(whereSeparator: { $0.isWhitespace }).map(String.init)
        try show(position: positions[current])
    }

    /// The matches found again in what is shown now (after `z`), the screen left where it
    /// is: the next match is the first at or below the top.
    public func refreshFind(positions: [Int]) {
        guard let query = find?.query else { return }
        guard !positions.isEmpty else {
            clearFind()
            return
        }
        let here = topPosition ?? 0
        find = (query, positions, positions.firstIndex { $0 >= here } ?? 0)
    }

    public func clearFind() {
        find = nil
        highlights = searchHighlights
    }

    /// Moves to the next (or previous) match, wrapping at either end; returns true when it
    /// wrapped.
    @discardableResult
    public func moveToMatch(forward: Bool) throws -> Bool {
        guard var find, !find.positions.isEmpty else { return false }
        var next = find.current + (forward ? 1 : -1)
        var wrapped = false
        if next >= find.positions.count {
            next = 0
            wrapped = true
        } else if next < 0 {
            next = find.positions.count - 1
            wrapped = true
        }
        find.current = next
        self.find = find
        try show(position: find.positions[next])
        return wrapped
    }

    /// Shows the message at `position` at the top of the screen (as far as the end allows).
    public func show(position: Int) throws {
        if let index = loaded.firstIndex(where: { $0.position == position }) {
            topLine = lineStarts[index]
            try fillAround()
            clampTop()
        } else {
            try open(at: position)
        }
        focus = position
    }

    // MARK: Messages and branches

    /// How message headers write times (strftime), when not the standard way.
    public var dateFormat: String?
    /// The zone message headers write times in.
    public var zone: LocalZone = .process

    /// The focused message, when it is loaded (it always is, but for an empty conversation).
    public var focusedMessage: MessageDTO? {
        loaded.first { $0.position == focus }
    }

    /// The code block "under the cursor": of the focused message, the first one with a line
    /// on screen, else its first. Its text as stored, which of how many it is.
    public var codeBlockUnderCursor: (text: String, index: Int, count: Int)? {
        guard let message = focusedMessage else { return nil }
        let blocks = MarkdownTranscript.codeBlocks(in: message.content)
        guard !blocks.isEmpty else { return nil }
        let end = min(topLine + viewportHeight, lines.count)
        let onScreen = topLine < end ? lines[topLine..<end].first { $0.position == focus && $0.style == .code }?.block : nil
        let index = min(max(onScreen ?? 0, 0), blocks.count - 1)
        return (blocks[index], index, blocks.count)
    }

    /// Where the focused message stands among its versions (siblings), when it has others.
    public var focusedSiblings: (index: Int, count: Int)? {
        guard let tree, let id = focusedMessage?.id, let place = tree.siblingPlace(of: id), place.count > 1 else { return nil }
        return place
    }

    /// Moves the focus to the next (or previous) message and shows its start; false at the
    /// end (or the start).
    @discardableResult
    public func moveFocus(by delta: Int) throws -> Bool {
        let target = focus + delta
        guard target >= 0, target < branch.count else { return false }
        let index = loaded.firstIndex { $0.position == target }
        if let index, lineStarts[index] >= topLine, lineStarts[index] < topLine + viewportHeight {
            // On screen already: only the focus moves.
            focus = target
            return true
        }
        try show(position: target)
        return true
    }

    /// Shows the previous (-1) or next (+1) version of the focused message, and below it the
    /// branch that version was last read on, else its newest one. Returns nil when it has no
    /// other version that way; else the new place among its versions.
    public func switchSibling(by delta: Int) throws -> (index: Int, count: Int)? {
        guard let tree, let focused = focusedMessage else { return nil }
        let siblings = tree.children(of: tree.parent(of: focused.id))
        guard let at = siblings.firstIndex(of: focused.id), siblings.indices.contains(at + delta) else { return nil }
        let target = siblings[at + delta]
        let remembered = try choices[target] ?? (remembersChoices ? messages.rememberedLeaf(conversationID: conversation.id, message: target) : nil)
        let leaf = remembered.flatMap { tree.isAncestor(target, of: $0) && tree.children(of: $0).isEmpty ? $0 : nil }
            ?? tree.newestLeaf(under: target) ?? target
        try showBranch(endingAt: leaf, leaving: branch.leaf.map { (focused.id, $0) })
        return (at + delta, siblings.count)
    }

    /// Shows the branch ending at `leaf`, keeping the focused message's place on screen when
    /// it is on the new branch (else the message where the branches part). The choice is
    /// kept for the conversation (or until the reader closes, when choices are not kept).
    public func showBranch(endingAt leaf: Int64, leaving: (message: Int64, leaf: Int64)? = nil) throws {
        guard let tree, tree.contains(leaf) else { return }
        let path = tree.path(to: leaf)
        // When the choice cannot be kept (another process holds the database), the branch is
        // shown all the same, and `choiceFailure` says why.
        var failure: (any Error)?
        if remembersChoices {
            do {
                try messages.choose(conversationID: conversation.id, leaf: leaf, length: path.count, leaving: leaving)
                conversation.currentLeafID = leaf
                conversation.branchLength = path.count
                if let leaving { choices[leaving.message] = nil }
            } catch {
                failure = error
            }
        }
        if let leaving, !remembersChoices || failure != nil {
            choices[leaving.message] = leaving.leaf
        }
        try show(MessageBranch(conversationID: conversation.id, leaf: leaf, path: path, count: path.count))
        highlights = find != nil ? highlights : searchHighlights
        choiceFailure = failure
    }

    /// Shows `branch` instead of the one shown, the focused place where it is on screen.
    private func show(_ branch: MessageBranch) throws {
        let row = loaded.firstIndex { $0.position == focus }.map { lineStarts[$0] - topLine } ?? 0
        let place = min(focus, max(branch.count - 1, 0))
        self.branch = branch
        try open(at: place)
        if let index = loaded.firstIndex(where: { $0.position == place }) {
            topLine = max(lineStarts[index] - max(row, 0), 0)
            try fillAround()
            clampTop()
        }
        focus = place
    }

    /// After another process changed the database (`fresh` is the conversation now): its
    /// new messages, branches and texts are there, on the branch shown (on to its newest leaf
    /// when answers came below it), the focused place kept. The pages on screen are read
    /// again (and a branched conversation's shape), nothing more.
    public func reload(_ fresh: ConversationDTO) throws {
        // Read again even when nothing is counted differently: a newer export may have
        // changed a text in place.
        conversation = fresh
        let shown = branch.leaf
        let fresh = try messages.branch(of: fresh, leaf: nil, showingHidden: showsHidden)
        guard fresh.path != nil else {
            tree = nil
            try show(fresh)
            return
        }
        let tree = try messages.tree(conversationID: conversation.id, showingHidden: showsHidden)
        self.tree = Self.branching(tree)
        var leaf = shown.flatMap { tree.contains($0) ? $0 : nil } ?? fresh.leaf
        if let below = leaf, !tree.children(of: below).isEmpty { leaf = tree.newestLeaf(under: below) }
        let path = leaf.map { tree.path(to: $0) } ?? []
        try show(MessageBranch(conversationID: conversation.id, leaf: leaf, path: path, count: path.count))
    }

    /// Why the last branch chosen could not be kept for the conversation (it is kept until
    /// the reader closes instead); nil when it was.
    public private(set) var choiceFailure: (any Error)?

    /// Opens on the branch through the message `id` (a search hit), with it focused: the
    /// branch it was last read on, else its newest; not kept as the conversation's choice.
    public func open(message id: Int64) throws {
        if let tree, tree.contains(id), branch.path?.contains(id) != true {
            let remembered = try choices[id] ?? (remembersChoices ? messages.rememberedLeaf(conversationID: conversation.id, message: id) : nil)
            let leaf = remembered.flatMap { tree.isAncestor(id, of: $0) ? $0 : nil } ?? tree.newestLeaf(under: id) ?? id
            let path = tree.path(to: leaf)
            branch = MessageBranch(conversationID: conversation.id, leaf: leaf, path: path, count: path.count)
        }
        var position = branch.path?.firstIndex(of: id)
        if position == nil { position = try messages.messages(ids: [id]).first?.position }
        let place = position ?? 0
        try open(at: place)
        focus = place
    }

    /// The positions along the branch shown of the messages `ids` (in order), for finding.
    public func positions(of ids: [Int64]) -> [Int]? {
        guard let path = branch.path else { return nil }
        var index: [Int64: Int] = [:]
        for (position, id) in path.enumerated() { index[id] = position }
        return ids.compactMap { index[$0] }.sorted()
    }

    /// After scrolling: the focus stays on a message with a line on screen.
    private func keepFocusVisible() {
        let visible = topLine..<min(topLine + max(viewportHeight, 1), lines.count)
        guard !visible.isEmpty else { return }
        if let index = loaded.firstIndex(where: { $0.position == focus }) {
            let start = lineStarts[index]
            let end = index + 1 < lineStarts.count ? lineStarts[index + 1] : lines.count
            if start < visible.upperBound && end > visible.lowerBound { return }
        }
        // The first message whose header is on screen, else the one at the top.
        let header = visible.first { if case .header = lines[$0].style { return true } else { return false } }
        focus = lines[header ?? visible.lowerBound].position
    }

    // MARK: Layout

    private func relayout() {
        lines = []
        lineStarts = []
        append(loaded, storing: false)
    }

    private func append(_ new: [MessageDTO], storing: Bool = true) {
        if storing { loaded += new }
        for message in new {
            lineStarts.append(lines.count)
            lines += Self.layout(
                message, width: width, siblings: siblings(of: message), dateFormat: dateFormat, zone: zone, collapsed: isCollapsed(message),
                images: imageCell.map { ($0, viewportHeight) }, notes: fetchNotes(for: message))
        }
    }

    private func isCollapsed(_ message: MessageDTO) -> Bool {
        Self.collapses(message.kind) && !expanded.contains(message.id)
    }

    private func siblings(of message: MessageDTO) -> (index: Int, count: Int)? {
        guard let place = tree?.siblingPlace(of: message.id), place.count > 1 else { return nil }
        return place
    }

    /// Returns the number of lines added at the front.
    private func prepend(_ new: [MessageDTO]) -> Int {
        guard !new.isEmpty else { return 0 }
        var added: [ReaderLine] = []
        var starts: [Int] = []
        for message in new {
            starts.append(added.count)
            added += Self.layout(
                message, width: width, siblings: siblings(of: message), dateFormat: dateFormat, zone: zone, collapsed: isCollapsed(message),
                images: imageCell.map { ($0, viewportHeight) }, notes: fetchNotes(for: message))
        }
        loaded = new + loaded
        lineStarts = starts + lineStarts.map { $0 + added.count }
        lines = added + lines
        return added.count
    }

    /// A header, the text wrapped by cells (code blocks wrapped hard and kept apart), then
    /// a blank line.
    ///
    /// A message the person did not see says what it is in its header and is dimmed; a
    /// collapsed one (`collapses`) is its header and one line: its first words and how many
    /// lines it has.
    static func layout(
        _ message: MessageDTO, width: Int, siblings: (index: Int, count: Int)? = nil, dateFormat: String? = nil, zone: LocalZone = .process,
        collapsed: Bool = false, images: (cell: ImageCell, height: Int)? = nil, notes: [String: String] = [:]
    ) -> [ReaderLine] {
        let dimmed = !message.kind.isSeen
        let result = layoutLines(
            message, width: width, siblings: siblings, dateFormat: dateFormat, zone: zone, collapsed: collapsed, images: images, notes: notes)
        guard dimmed else { return result }
        return result.map { line in
            var line = line
            line.dimmed = true
            return line
        }
    }

    /// The header's word for a kind: nothing for text.
    static func kindLabel(_ kind: MessageKind) -> String? {
        switch kind {
        case .text: nil
        case .document, .tool: kind.rawValue
        case .reasoning, .internal, .unknown: "hidden \(kind.rawValue)"
        }
    }

    private static func layoutLines(
        _ message: MessageDTO, width: Int, siblings: (index: Int, count: Int)?, dateFormat: String?, zone: LocalZone, collapsed: Bool,
        images: (cell: ImageCell, height: Int)?, notes: [String: String]
    ) -> [ReaderLine] {
        var result: [ReaderLine] = []
        var header = ""
        // First, so that it shows at any width.
        if let siblings { header += "‹ \(NumberText.grouped(siblings.index + 1))/\(NumberText.grouped(siblings.count)) › " }
        let time = dateFormat.map { TimeText.formatted(message.createdAt, format: $0, zone: zone) } ?? TimeText.absolute(message.createdAt, zone: zone)
        header += message.role.rawValue
        if let kind = kindLabel(message.kind), kind != message.role.rawValue { header += " · " + kind }
        header += " · \(time)"
        if let model = message.model { header += " · " + UntrustedText.sanitized(model) }
        if let usage = usageText(message.usage) { header += " · " + usage }
        result.append(ReaderLine(text: DisplayWidth.truncated(header, to: width), style: .header(message.role), position: message.position))
        // Its files, each a line after the text (the text of a message of files alone is none).
        // An image's rows follow its line where the terminal shows images.
        let attachments = message.attachments.enumerated().flatMap { index, attachment in
            var lines = [
                ReaderLine(
                    text: AttachmentText.line(attachment, width: width, note: attachment.awaited.flatMap { notes[$0] }), style: .attachment,
                    position: message.position, attachment: index)
            ]
            if let images, attachment.isStored, attachment.mime?.hasPrefix("image/") == true,
                var cells = images.cell.cells(for: (attachment.width ?? 0, attachment.height ?? 0), width: width, height: images.height)
            {
                // One too large to decode gets a row, where it says so (a JPEG is drawn smaller).
                if attachment.mime != "image/jpeg", FileFacts.isTooLarge(width: attachment.width ?? 0, height: attachment.height ?? 0) {
                    cells.rows = 1
                }
                for row in 0..<cells.rows {
                    lines.append(
                        ReaderLine(
                            text: "", style: .image, position: message.position, attachment: index, imageRow: row, imageRows: cells.rows))
                }
            }
            return lines
        }
        if collapsed {
            result.append(ReaderLine(text: summary(of: message.content, width: width), style: .summary, position: message.position))
            result += attachments
            result.append(ReaderLine(text: "", style: .blank, position: message.position))
            return result
        }
        var fence = CodeFence()
        var block = -1
        let text = UntrustedText.sanitized(message.content, keepNewlines: true)
        for sourceLine in DisplayWidth.lines(of: text) where !(text.isEmpty && !attachments.isEmpty) {
            let line = String(sourceLine)
            let kind = fence.step(line)
            if kind == .opens || kind == .closes {
                if kind == .opens { block += 1 }
                result.append(ReaderLine(text: DisplayWidth.truncated(line, to: width), style: .fence, position: message.position))
                continue
            }
            if kind == .code {
                // Code keeps its spaces, is cut into lines of the width (never re-flowed) and
                // is set apart by a gutter, which shows without colour too.
                let gutter = width > 4 ? "│ " : ""
                let codeWidth = width - DisplayWidth.of(gutter)
                var piece = ""
                var used = 0
                for character in line {
                    let cells = DisplayWidth.of(character)
                    if used + cells > codeWidth && !piece.isEmpty {
                        result.append(ReaderLine(text: gutter + piece, style: .code, position: message.position, block: block))
                        piece = ""
                        used = 0
                    }
                    piece.append(character)
                    used += cells
                }
                let last = gutter + DisplayWidth.truncated(piece, to: codeWidth, ellipsis: false)
                result.append(ReaderLine(text: last, style: .code, position: message.position, block: block))
            } else {
                for wrapped in DisplayWidth.wrapped(line, width: width) {
                    result.append(
                        ReaderLine(
                            text: DisplayWidth.truncated(wrapped, to: width, ellipsis: false),
                            style: wrapped.isEmpty ? .blank : .text, position: message.position))
                }
            }
        }
        result += attachments
        result.append(ReaderLine(text: "", style: .blank, position: message.position))
        return result
    }
}

extension ReaderViewModel {
    /// A collapsed message's line: `▸ ` and its first words (an arrow line joined with the
    /// line after it: `→ browser  search("…")`), then how many lines more it has, in the width.
    static func summary(of content: String, width: Int) -> String {
        let lines = UntrustedText.sanitized(content, keepNewlines: true).split(separator: "\n").map {
            $0.trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty }
        var first = lines.first ?? ""
        var shown = 1
        if first.hasPrefix("→ ") || first.hasPrefix("← "), lines.count > 1 {
            first += "  " + lines[1]
            shown = 2
        }
        let rest = lines.count - shown
        var more = rest > 0 ? " · +\(NumberText.grouped(rest)) line\(rest == 1 ? "" : "s") (Tab)" : ""
        // Narrow: the words first, the count short.
        if width - DisplayWidth.of(more) - 2 < 8 && rest > 0 { more = " +\(NumberText.grouped(rest))" }
        let room = max(width - DisplayWidth.of(more) - 2, 1)
        return DisplayWidth.truncated("▸ " + DisplayWidth.truncated(first, to: room) + more, to: width)
    }

    /// `1,234 in · 567 out · 3.2 s`: the parts the source recorded, nil when none.
    static func usageText(_ usage: MessageUsage) -> String? {
        var parts: [String] = []
        if let input = usage.inputTokens { parts.append("\(NumberText.grouped(input)) in") }
        if let output = usage.outputTokens { parts.append("\(NumberText.grouped(output)) out") }
        if let duration = usage.durationMilliseconds {
            parts.append(duration < 10_000 ? "\(duration / 1000).\(duration % 1000 / 100) s" : "\(NumberText.grouped(duration / 1000)) s")
        }
        return parts.isEmpty ? nil : parts.joined(separator: " · ")
    }
}

extension String {
    fileprivate func trimmingPrefix(while predicate: (Character) -> Bool) -> Substring {
        self[(firstIndex { !predicate($0) } ?? endIndex)...]
    }
}
