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
    }

    /// Safe to draw, at most the width in cells.
    public var text: String
    public var style: Style
    /// The message this line belongs to.
    public var position: Int
}

/// A conversation's messages as lines, paged through the repository like the list: a long
/// conversation is never loaded whole.
@MainActor
public final class ReaderViewModel {
    public let conversation: ConversationDTO
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

    private let messages: any MessageRepository
    private var loaded: [MessageDTO] = []
    /// For each loaded message, its first line in `lines`.
    private var lineStarts: [Int] = []
    private var before: Cursor?
    private var after: Cursor?
    private let pageSize: Int
    private let maximumLoaded: Int

    public init(
        conversation: ConversationDTO, messages: any MessageRepository, width: Int, highlights: [String] = [],
        pageSize: Int = 100, maximumLoaded: Int = 400
    ) {
        self.conversation = conversation
        self.messages = messages
        self.width = max(width, 1)
        self.highlights = highlights
        searchHighlights = highlights
        self.pageSize = max(pageSize, 2)
        self.maximumLoaded = max(maximumLoaded, 3 * pageSize)
    }

    /// Loads the messages from `position` on and shows that message at the top.
    public func open(at position: Int = 0) throws {
        let start: PagePosition =
            position > 0 ? .after(Cursor.message(conversationID: conversation.id, position: position - 1)) : .first
        let page = try messages.page(conversationID: conversation.id, at: start, limit: pageSize)
        loaded = page.items
        after = page.next
        before = position > 0 && !page.items.isEmpty ? Cursor.message(conversationID: conversation.id, position: page.items[0].position) : nil
        relayout()
        topLine = 0
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
    }

    public func pageDown() throws { try scroll(by: max(viewportHeight - 1, 1)) }
    public func pageUp() throws { try scroll(by: -max(viewportHeight - 1, 1)) }
    public func halfPageDown() throws { try scroll(by: max(viewportHeight / 2, 1)) }
    public func halfPageUp() throws { try scroll(by: -max(viewportHeight / 2, 1)) }

    public func toStart() throws {
        if before != nil { try open(at: 0) } else { topLine = 0 }
    }

    public func toEnd() throws {
        if after != nil {
            let page = try messages.page(conversationID: conversation.id, at: .last, limit: pageSize)
            loaded = page.items
            before = page.previous
            after = nil
            relayout()
        }
        topLine = max(0, lines.count - viewportHeight)
        try fillAround()
        topLine = max(0, lines.count - viewportHeight)
    }

    /// Lays the lines out again for a new width, keeping the same message at the top.
    public func resize(width: Int, height: Int) {
        viewportHeight = height
        guard max(width, 1) != self.width else { return }
        let anchor = topPosition
        self.width = max(width, 1)
        relayout()
        if let anchor, let index = loaded.firstIndex(where: { $0.position == anchor }) {
            topLine = lineStarts[index]
        }
        clampTop()
    }

    private func clampTop() {
        if after == nil { topLine = min(topLine, max(0, lines.count - viewportHeight)) }
        topLine = max(0, min(topLine, max(lines.count - 1, 0)))
    }

    /// Loads pages before or after as the screen nears either end, and drops far ones.
    private func fillAround() throws {
        let margin = max(viewportHeight * 2, 40)
        while topLine + viewportHeight + margin > lines.count, let cursor = after {
            let page = try messages.page(conversationID: conversation.id, at: .after(cursor), limit: pageSize)
            after = page.items.isEmpty ? nil : page.next
            append(page.items)
        }
        while topLine < margin, let cursor = before {
            let page = try messages.page(conversationID: conversation.id, at: .before(cursor), limit: pageSize)
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
    public func setFind(query: String, positions: [Int]) throws {
        guard !positions.isEmpty else {
            clearFind()
            return
        }
        let here = topPosition ?? 0
        let current = positions.firstIndex { $0 >= here } ?? 0
        find = (query, positions, current)
        highlights = query.split(whereSeparator: { $0.isWhitespace }).map(String.init)
        try show(position: positions[current])
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
            lines += Self.layout(message, width: width)
        }
    }

    /// Returns the number of lines added at the front.
    private func prepend(_ new: [MessageDTO]) -> Int {
        guard !new.isEmpty else { return 0 }
        var added: [ReaderLine] = []
        var starts: [Int] = []
        for message in new {
            starts.append(added.count)
            added += Self.layout(message, width: width)
        }
        loaded = new + loaded
        lineStarts = starts + lineStarts.map { $0 + added.count }
        lines = added + lines
        return added.count
    }

    /// A header, the text wrapped by cells (code blocks wrapped hard and kept apart), then
    /// a blank line.
    static func layout(_ message: MessageDTO, width: Int) -> [ReaderLine] {
        var result: [ReaderLine] = []
        var header = "\(message.role.rawValue) · \(TimeText.absolute(message.createdAt))"
        if let model = message.model { header += " · " + UntrustedText.sanitized(model) }
        result.append(ReaderLine(text: DisplayWidth.truncated(header, to: width), style: .header(message.role), position: message.position))
        var inCode = false
        let text = UntrustedText.sanitized(message.content, keepNewlines: true)
        for sourceLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(sourceLine)
            if line.trimmingPrefix(while: { $0 == " " }).hasPrefix("```") {
                inCode.toggle()
                result.append(ReaderLine(text: DisplayWidth.truncated(line, to: width), style: .fence, position: message.position))
                continue
            }
            if inCode {
                // Code keeps its spaces, is cut into lines of the width (never re-flowed) and
                // is set apart by a gutter, which shows without colour too.
                let gutter = width > 4 ? "│ " : ""
                let codeWidth = width - DisplayWidth.of(gutter)
                var piece = ""
                var used = 0
                for character in line {
                    let cells = DisplayWidth.of(character)
                    if used + cells > codeWidth && !piece.isEmpty {
                        result.append(ReaderLine(text: gutter + piece, style: .code, position: message.position))
                        piece = ""
                        used = 0
                    }
                    piece.append(character)
                    used += cells
                }
                let last = gutter + DisplayWidth.truncated(piece, to: codeWidth, ellipsis: false)
                result.append(ReaderLine(text: last, style: .code, position: message.position))
            } else {
                for wrapped in DisplayWidth.wrapped(line, width: width) {
                    result.append(
                        ReaderLine(
                            text: DisplayWidth.truncated(wrapped, to: width, ellipsis: false),
                            style: wrapped.isEmpty ? .blank : .text, position: message.position))
                }
            }
        }
        result.append(ReaderLine(text: "", style: .blank, position: message.position))
        return result
    }
}

extension String {
    fileprivate func trimmingPrefix(while predicate: (Character) -> Bool) -> Substring {
        self[(firstIndex { !predicate($0) } ?? endIndex)...]
    }
}
