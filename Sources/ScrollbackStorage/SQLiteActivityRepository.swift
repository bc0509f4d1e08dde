import Foundation
import ScrollbackModel

/// `ActivityRepository` over one SQLite connection: each chart one query, over an index
/// where one holds what it counts (`conversation_by_updated` for time,
/// `conversation_by_model`, `conversation_by_source`), so that a chart costs about what
/// counting its rows does. The tokens are read from the messages.
public final class SQLiteActivityRepository: ActivityRepository {
    let database: Database

    init(database: Database) {
        self.database = database
    }

    /// The most models or sources a chart shows; the rest are counted as `more`.
    public static let mostBars = 12
    /// The most busiest days shown.
    public static let busiestDays = 7
    static let day: Int64 = 86_400_000

    public func chart(_ chart: ActivityChart, filter: ConversationFilter, window: ActivityWindow) throws -> ActivityChartData {
        try database.read {
            guard let (sql, arguments) = try statement(chart, filter: filter, window: window) else {
                return ActivityChartData(chart: chart, bars: [])
            }
            switch chart {
            case .months, .tokens:
                var values = [Int64](repeating: 0, count: window.months)
                // The tokens come by month number (year × 12 + month − 1), the months by place.
                let first = chart == .tokens ? ActivityWindow.monthNumber(window.start) : 0
                let rows = try database.query(sql, arguments) { ($0.int(0) - first, chart == .tokens ? Store.tokenSum($0.double(1)) : $0.int64(1)) }
                for (index, value) in rows where values.indices.contains(index) { values[index] = value }
                return ActivityChartData(chart: chart, bars: monthBars(values, filter: filter, window: window))
            case .models, .sources:
                let rows = try database.query(sql, arguments) { ($0.optionalText(0), $0.int64(1)) }
                return grouped(chart, rows, filter: filter, window: window)
            case .days:
                let rows = try database.query(sql, arguments) { ($0.int64(0), $0.int64(1)) }
                return days(rows, filter: filter)
            }
        }
    }

    /// The one query of `chart`, with its arguments; nil when the window holds no month.
    ///
    /// The months, tokens and days are a count (a sum) of an index range for each month or
    /// day of the window, each a subquery of one query: no sort, no more rows read than a
    /// `count(*)` of the window would. (Named, the time index: with a model filter the
    /// planner would rather walk all of `conversation_by_model`, which holds the model and
    /// the time, for every month and day.) The models and sources walk the column's index (by
    /// name, then time), grouping as they go, when the filter leaves every condition to it;
    /// else the window's range of the time index, its rows grouped.
    /// (In the days' query the numbered parameters come first in the text: a plain `?`
    /// takes the number after the largest seen before it.)
    func statement(_ chart: ActivityChart, filter: ConversationFilter, window: ActivityWindow) throws -> (String, [SQLValue])? {
        guard window.months > 0 else { return nil }
        // The filter's own times are taken into the window's (each month's range is cut to
        // them): a second bound on the time would leave SQLite one of the two for the range,
        // and a walk from `since:` to each day, for every day.
        let (conditions, arguments) = try conditions(filter.timeless)
        let (since, until) = (filter.since?.milliseconds ?? Int64.min, filter.until?.milliseconds ?? Int64.max)
        switch chart {
        case .months:
            let (with, windowArguments) = bounds(window, since: since, until: until)
            return (
                """
                \(with)
                SELECT n, (SELECT count(*) FROM conversation INDEXED BY conversation_by_updated WHERE \(conditions) AND updated_at >= lo AND updated_at < hi) FROM bounds
                """, windowArguments + arguments
            )
        case .tokens:
            // The messages with a count written in the window, of the conversations that
            // pass the filter, by month: one read of the message table (no index holds the
            // counts: a partial one cost imports 13%), grouped by each row's month.
            let (conditions, arguments) = try self.conditions(filter)
            var sql = """
                SELECT CAST(strftime('%Y', created_at / 1000, 'unixepoch') AS INTEGER) * 12
                           + CAST(strftime('%m', created_at / 1000, 'unixepoch') AS INTEGER) - 1 AS month,
                       total(input_tokens) + total(output_tokens)
                  FROM message
                 WHERE created_at >= ? AND created_at < ? AND (input_tokens IS NOT NULL OR output_tokens IS NOT NULL)
                """
            var all: [SQLValue] = [.integer(window.start.milliseconds), .integer(window.end.milliseconds)]
            if !filter.isEmpty {
                sql += " AND conversation_id IN (SELECT id FROM conversation WHERE \(conditions))"
                all += arguments
            }
            return (sql + " GROUP BY month", all)
        case .models, .sources:
            let column = chart == .models ? "model" : "source"
            let walk = filter.source == nil && filter.model == nil && filter.project == nil && filter.title == nil && !filter.pinnedOnly
            let (conditions, arguments) = walk ? try self.conditions(filter.timeless, halves: false) : (conditions, arguments)
            return (
                """
                SELECT \(column), count(*) FROM conversation INDEXED BY conversation_by_\(walk ? column : "updated")
                 WHERE \(conditions) AND updated_at >= ? AND updated_at < ? GROUP BY \(column)
                """, arguments + [.integer(max(window.start.milliseconds, since)), .integer(min(window.end.milliseconds, until))]
            )
        case .days:
            return (
                """
                WITH RECURSIVE days(lo) AS (SELECT ?1 UNION ALL SELECT lo + \(Self.day) FROM days WHERE lo + \(Self.day) < ?2)
                SELECT lo, c FROM (
                    SELECT lo, (SELECT count(*) FROM conversation INDEXED BY conversation_by_updated
                                 WHERE updated_at >= max(lo, ?3) AND updated_at < min(lo + \(Self.day), ?4) AND \(conditions)) AS c
                      FROM days)
                 WHERE c > 0 ORDER BY c DESC, lo DESC LIMIT \(Self.busiestDays)
                """, [.integer(window.start.milliseconds), .integer(window.end.milliseconds), .integer(since), .integer(until)] + arguments
            )
        }
    }

    /// The conditions every chart's conversations meet: the pin condition as an equality on
    /// either half of the pinned-first time index (so that a time range is a range in each),
    /// then the filter's.
    /// Without `halves`, no pin condition unless the filter has one (a walk of an index
    /// without `pinned`).
    private func conditions(_ filter: ConversationFilter, halves: Bool = true) throws -> (sql: String, arguments: [SQLValue]) {
        let (sql, arguments) = try ConversationListQuery(sort: .updated, filter: filter).filterConditions(in: database)
        return ((filter.pinnedOnly ? "pinned = 1" : halves ? "pinned IN (1, 0)" : "1") + sql, arguments)
    }

    /// `WITH bounds(n, lo, hi) AS (VALUES (0, ?, ?), …)`: the window's months.
    /// Each month's range cut to `since..<until`.
    private func bounds(_ window: ActivityWindow, since: Int64 = .min, until: Int64 = .max) -> (sql: String, arguments: [SQLValue]) {
        let rows = (0..<window.months).map { "(\($0), ?, ?)" }.joined(separator: ", ")
        let arguments = (0..<window.months).flatMap {
            [SQLValue.integer(max(window.bounds[$0].milliseconds, since)), .integer(min(window.bounds[$0 + 1].milliseconds, until))]
        }
        return ("WITH bounds(n, lo, hi) AS (VALUES \(rows))", arguments)
    }

    private func monthBars(_ values: [Int64], filter: ConversationFilter, window: ActivityWindow) -> [ActivityBar] {
        values.enumerated().map { index, value in
            let (start, end) = (window.bounds[index], window.bounds[index + 1])
            return ActivityBar(
                label: ActivityWindow.monthLabel(start), value: value, filter: ActivityWindow.narrowed(filter, from: start, to: end))
        }
    }

    /// Conversations per model or source, most first, then by name; the unknown model last
    /// among equals. An empty model is no model.
    private func grouped(_ chart: ActivityChart, _ rows: [(String?, Int64)], filter: ConversationFilter, window: ActivityWindow) -> ActivityChartData {
        var counts: [String?: Int64] = [:]
        for (name, count) in rows {
            let key = name.flatMap { $0.isEmpty ? nil : $0 }
            counts[key, default: 0] += count
        }
        let sorted = counts.sorted { left, right in
            if left.value != right.value { return left.value > right.value }
            switch (left.key, right.key) {
            case (nil, _): return false
            case (_, nil): return true
            case (let l?, let r?): return l < r
            }
        }
        // A bar lists the window's conversations of its name (a model's filter takes every
        // model holding the name).
        let inWindow = ActivityWindow.narrowed(filter, from: window.start, to: window.end)
        let shown = sorted.prefix(Self.mostBars).map { name, count -> ActivityBar in
            var narrowed: ConversationFilter? = nil
            if let name {
                var next = inWindow
                if chart == .models { next.model = name } else { next.source = name }
                narrowed = next
            }
            return ActivityBar(label: name, value: count, filter: narrowed)
        }
        let rest = sorted.dropFirst(shown.count).reduce(Int64(0)) { $0.addingReportingOverflow($1.value).overflow ? Int64.max : $0 + $1.value }
        return ActivityChartData(chart: chart, bars: shown, more: sorted.count - shown.count, rest: rest)
    }

    /// The days of the window with the most conversations updated, most first (the later
    /// day first among equals).
    private func days(_ rows: [(Int64, Int64)], filter: ConversationFilter) -> ActivityChartData {
        let bars = rows.map { lo, count in
            let day = Timestamp(milliseconds: lo)
            let next = Timestamp(milliseconds: lo.addingReportingOverflow(Self.day).overflow ? Int64.max : lo + Self.day)
            return ActivityBar(label: ActivityWindow.dayLabel(day), value: count, filter: ActivityWindow.narrowed(filter, from: day, to: next))
        }
        return ActivityChartData(chart: .days, bars: bars)
    }
}
