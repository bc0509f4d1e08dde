import ScrollbackModel

/// Search results: fetched a page at a time as the selection moves down.
@MainActor
public final class SearchViewModel {
    public let query: String
    public private(set) var hits: [SearchHit] = []
    public private(set) var selection = 0
    /// Index of the first hit on screen.
    public private(set) var top = 0
    /// Hits on screen (each takes two lines).
    public var viewportHits = 10 {
        didSet { keepSelectionVisible() }
    }
    /// True when every match has been fetched.
    public private(set) var isComplete = false
    /// The most hits kept; past it the list stops growing.
    public static let maximumHits = 5_000

    private let repository: any SearchRepository
    private var next: Cursor?
    static let pageSize = 100
    private var pageSize: Int { Self.pageSize }

    public init(query: String, repository: any SearchRepository) {
        self.query = query
        self.repository = repository
    }

    /// The words of the query, for highlighting.
    public var terms: [String] { query.split(whereSeparator: { $0.isWhitespace }).map(String.init) }

    /// Indexing progress (0 to 1) as a whole percentage, 0...99: never 100 while not done,
    /// and any value a damaged reading gives is in range.
    public nonisolated static func indexingPercent(_ progress: Double) -> Int {
        guard progress.isFinite else { return 0 }
        let percent = (progress * 100).rounded(.down)
        return percent <= 0 ? 0 : percent >= 99 ? 99 : Int(percent)
    }

    public var selected: SearchHit? { hits.indices.contains(selection) ? hits[selection] : nil }

    public var visibleHits: [(index: Int, hit: SearchHit)] {
        (top..<min(top + max(viewportHits, 0), hits.count)).map { ($0, hits[$0]) }
    }

    public func run() throws {
        show(try repository.search(query, after: nil, limit: pageSize))
    }

    /// Shows a first page fetched elsewhere (by a background search).
    public func show(_ page: Page<SearchHit>) {
        hits = page.items
        next = page.next
        isComplete = next == nil
        selection = 0
        top = 0
    }

    public func move(by delta: Int) throws {
        guard !hits.isEmpty else { return }
        let target = selection + delta
        while target >= hits.count - 1, let cursor = next, hits.count < Self.maximumHits {
            let page = try repository.search(query, after: cursor, limit: pageSize)
            hits += page.items
            next = page.next
            if page.items.isEmpty { next = nil }
        }
        isComplete = next == nil
        selection = min(max(target, 0), hits.count - 1)
        keepSelectionVisible()
    }

    public func moveToStart() { selection = 0; keepSelectionVisible() }

    private func keepSelectionVisible() {
        let height = max(viewportHits, 1)
        if selection < top { top = selection }
        if selection >= top + height { top = selection - height + 1 }
    }
}
