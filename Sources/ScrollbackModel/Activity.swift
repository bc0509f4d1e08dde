import Foundation

/// The charts of the activity overview (`a` in the browser, `stats --chart`), in the order
/// they are shown.
public enum ActivityChart: String, CaseIterable, Sendable, Hashable {
    /// Conversations updated in each month of the window.
    case months
    /// Tokens (input and output) of the messages written in each month of the window.
    case tokens
    /// Conversations per model.
    case models
    /// Conversations per source.
    case sources
    /// The days of the window with the most conversations updated.
    case days

    /// The chart's heading.
    public var title: String {
        switch self {
        case .months: "Conversations per month"
        case .tokens: "Tokens per month"
        case .models: "Conversations per model"
        case .sources: "Conversations per source"
        case .days: "Busiest days"
        }
    }

    /// What its numbers count: the series, which has a colour of its own where colours exist.
    public var series: ActivitySeries { self == .tokens ? .tokens : .conversations }
}

public enum ActivitySeries: Sendable, Hashable {
    case conversations, tokens
}

/// One bar: its label as the data has it (model and source names are untrusted; nil for
/// the conversations without a model), its number, and the filter that lists what it counts.
public struct ActivityBar: Sendable, Hashable {
    public var label: String?
    public var value: Int64
    /// What Enter on it opens; nil when no filter picks out exactly these (no model known).
    public var filter: ConversationFilter?

    public init(label: String?, value: Int64, filter: ConversationFilter?) {
        self.label = label
        self.value = value
        self.filter = filter
    }

    /// What a chart shows for it: the label, or `–` (as the list shows no model).
    public var shownLabel: String { label ?? "–" }
}

/// The months an overview covers: `count` months from the one starting at `first`
/// (UTC). Without a filter's range, the last 24 months up to the current one; with one,
/// the months it touches (the most recent `maximumMonths` of them).
public struct ActivityWindow: Sendable, Hashable {
    /// The start of each month, then the end of the last: `months.count + 1` times.
    public let bounds: [Timestamp]
    /// True when the filter's range held more months than are shown.
    public let isCut: Bool

    public static let defaultMonths = 24
    public static let maximumMonths = 120

    public var months: Int { max(bounds.count - 1, 0) }
    public var start: Timestamp { bounds.first ?? Timestamp(milliseconds: 0) }
    public var end: Timestamp { bounds.last ?? Timestamp(milliseconds: 0) }

    public init(filter: ConversationFilter, now: Timestamp) {
        let calendar = Self.calendar
        let clock = Date(timeIntervalSince1970: TimeInterval(now.milliseconds) / 1000)
        // The month of the filter's last instant (`until` is exclusive), else this one.
        let lastInstant = filter.until.map { Date(timeIntervalSince1970: TimeInterval($0.milliseconds - 1) / 1000) } ?? clock
        let lastMonthOfRange = Self.monthStart(of: lastInstant)
        // Nothing before 1970, as the filter line takes no date before it: a bar's filter
        // must be one the filter line can say again.
        let epoch = Date(timeIntervalSince1970: 0)
        var lastMonth = max(lastMonthOfRange, epoch)
        var firstMonth: Date
        if let since = filter.since {
            firstMonth = max(Self.monthStart(of: Date(timeIntervalSince1970: TimeInterval(since.milliseconds) / 1000)), epoch)
        } else {
            firstMonth = max(calendar.date(byAdding: .month, value: -(Self.defaultMonths - 1), to: lastMonth) ?? lastMonth, epoch)
        }
        // A range that starts after this month (a `since:` in the future) is its first month.
        if firstMonth > lastMonth { lastMonth = firstMonth }
        var starts: [Date] = []
        var month = lastMonth
        // From the last month back: a range longer than the most shown keeps its latest.
        while month >= firstMonth, starts.count < Self.maximumMonths {
            starts.append(month)
            guard let previous = calendar.date(byAdding: .month, value: -1, to: month) else { break }
            month = previous
        }
        isCut = month >= firstMonth
        starts.reverse()
        let end = calendar.date(byAdding: .month, value: 1, to: lastMonth) ?? lastMonth
        bounds = (starts + [end]).map(Self.timestamp)
    }

    /// `date` in whole milliseconds, held to what a timestamp can say.
    static func timestamp(_ date: Date) -> Timestamp {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        guard milliseconds.isFinite else { return Timestamp(milliseconds: 0) }
        return Timestamp(milliseconds: Int64(exactly: milliseconds) ?? (milliseconds > 0 ? Int64.max : Int64.min))
    }

    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        return calendar
    }()

    /// Midnight UTC on the first of `date`'s month; the earliest date a calendar keeps for
    /// a time beyond what it can count.
    static func monthStart(of date: Date) -> Date {
        let parts = calendar.dateComponents([.year, .month], from: date)
        return calendar.date(from: parts) ?? date
    }

    /// `2025-03` for the month starting at `start`.
    public static func monthLabel(_ start: Timestamp) -> String {
        let parts = calendar.dateComponents([.year, .month], from: Date(timeIntervalSince1970: TimeInterval(start.milliseconds) / 1000))
        return String(format: "%04d-%02d", parts.year ?? 0, parts.month ?? 0)
    }

    /// The month of `start` as year × 12 + month − 1 (UTC), as the tokens' query numbers them.
    public static func monthNumber(_ start: Timestamp) -> Int {
        let parts = calendar.dateComponents([.year, .month], from: Date(timeIntervalSince1970: TimeInterval(start.milliseconds) / 1000))
        return (parts.year ?? 0) * 12 + (parts.month ?? 1) - 1
    }

    /// `2025-03-14` for the day starting at `start`.
    public static func dayLabel(_ start: Timestamp) -> String {
        let parts = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: TimeInterval(start.milliseconds) / 1000))
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }

    /// `filter` narrowed to `from..<to` (what it already allows of it).
    public static func narrowed(_ filter: ConversationFilter, from: Timestamp, to: Timestamp) -> ConversationFilter {
        var narrowed = filter
        narrowed.since = max(filter.since ?? from, from)
        narrowed.until = min(filter.until ?? to, to)
        return narrowed
    }
}

extension ConversationFilter {
    /// The filter without its times (the overview cuts its months and days to them).
    public var timeless: ConversationFilter {
        var filter = self
        filter.since = nil
        filter.until = nil
        return filter
    }
}

/// One chart's bars, computed by one query.
public struct ActivityChartData: Sendable, Hashable {
    public var chart: ActivityChart
    public var bars: [ActivityBar]
    /// Bars left out (the models and sources beyond the most shown), and what they count.
    public var more: Int
    public var rest: Int64

    public init(chart: ActivityChart, bars: [ActivityBar], more: Int = 0, rest: Int64 = 0) {
        self.chart = chart
        self.bars = bars
        self.more = more
        self.rest = rest
    }

    /// What the chart counts in all, the bars left out too (saturating).
    public var total: Int64 {
        bars.reduce(rest) { $0.addingReportingOverflow($1.value).overflow ? Int64.max : $0 + $1.value }
    }
}

/// The grouped counts behind the overview: one query per chart.
public protocol ActivityRepository {
    /// `chart` over the conversations that pass `filter`, in `window`.
    func chart(_ chart: ActivityChart, filter: ConversationFilter, window: ActivityWindow) throws -> ActivityChartData
}

/// One chart being computed on a connection of its own.
public protocol ActivityJob: AnyObject, Sendable {
    /// The chart once computed (or failed); nil while it is.
    var result: Result<ActivityChartData, any Error>? { get }
    /// Stops the work; its result is then never used.
    func cancel()
}

/// Computes charts in the background, so that no key waits for a count.
public protocol ActivityRunner: Sendable {
    func start(_ chart: ActivityChart, filter: ConversationFilter, window: ActivityWindow) -> any ActivityJob
}
