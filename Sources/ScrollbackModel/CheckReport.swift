/// The result of `Store.check()`: each problem in a sentence; empty when all is well.
public struct CheckReport: Sendable, Equatable {
    public var problems: [String]
    /// Checks that could not run (for example the deep FTS check on a read-only database).
    public var skipped: [String]
    /// True when the search indexes were checked only by their row counts, not by content.
    public var searchIndexesCountedOnly: Bool

    public var isHealthy: Bool { problems.isEmpty }

    public init(problems: [String], skipped: [String], searchIndexesCountedOnly: Bool = false) {
        self.problems = problems
        self.skipped = skipped
        self.searchIndexesCountedOnly = searchIndexesCountedOnly
    }
}
