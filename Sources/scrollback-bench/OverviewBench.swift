import Foundation
import ScrollbackModel
import ScrollbackStorage

/// "overview": each chart of the activity overview (one grouped query) beside a `count(*)`
/// of the same rows in the same run, on the big database: unfiltered (the last 24 months),
/// and filtered to a model over a year.
enum OverviewBench {
    static func run(big: String, quick: Bool, report: inout Report) throws {
        let store = try Store.open(path: big, readOnly: true)
        let raw = try RawSQLite(path: big)
        let now = Timestamp.now()
        let rounds = quick ? 3 : 9
        var year = ConversationFilter(model: "gpt-4o")
        year.since = Timestamp(milliseconds: now.milliseconds - 365 * 86_400_000)
        for (name, filter) in [("last 24 months", ConversationFilter.none), ("model:gpt-4o over a year", year)] {
            let window = ActivityWindow(filter: filter, now: now)
            let (start, end) = (window.start.milliseconds, window.end.milliseconds)
            // The same rows, counted: the conversations in the window, the messages with
            // token counts in it.
            let like = "%" + (filter.model ?? "") + "%"
            let inWindow = "pinned IN (1, 0) AND updated_at >= ?1 AND updated_at < ?2" + (filter.model == nil ? "" : " AND model LIKE ?3")
            let text = filter.model == nil ? [] : [like]
            let conversations = "SELECT count(*) FROM conversation WHERE \(inWindow)"
            let messages =
                "SELECT count(*) FROM message WHERE created_at >= ?1 AND created_at < ?2 AND (input_tokens IS NOT NULL OR output_tokens IS NOT NULL)"
                + (filter.isEmpty ? "" : " AND conversation_id IN (SELECT id FROM conversation WHERE \(inWindow))")
            let integers = [start, end]
            for chart in ActivityChart.allCases {
                let statement = try RawSQLite.Statement(raw, chart == .tokens ? messages : conversations)
                // Warm both once, then alternate so that the page cache treats them alike.
                _ = statement.first(integers, text: text)
                _ = try store.activity.chart(chart, filter: filter, window: window)
                var ours: [Double] = []
                var counts: [Double] = []
                for _ in 0..<rounds {
                    counts.append(Measure.time { _ = statement.first(integers, text: text) })
                    ours.append(try Measure.time { _ = try store.activity.chart(chart, filter: filter, window: window) })
                }
                let (median, baseline) = (Measure.median(ours), Measure.median(counts))
                report.add(
                    "overview", "\(chart.title.lowercased()), \(name): chart ÷ count(*) of its rows", ours: median, baseline: baseline, unit: "ms",
                    figure: median / max(baseline, 0.000_1), figureName: "ratio", atMost: 3)
            }
        }
    }
}
