import Foundation
import ScrollbackModel
import ScrollbackStorage
import ScrollbackViewModels
import TerminalText

/// `scrollback stats --chart`: the browser's activity overview (`a`) as text: each chart as
/// it is counted, bars of eighths of a block on a UTF-8 terminal, `#` into a pipe or under
/// another locale, in colour where the terminal shows it.
extension StatsCommand {
    struct ChartJSON: Encodable {
        let filter: String
        let from: String
        let to: String
        let charts: [Chart]

        struct Chart: Encodable {
            let chart: String
            let title: String
            let total: Int64
            let more: Int
            let bars: [Bar]
        }

        /// `label` is left out for the conversations without a model.
        struct Bar: Encodable {
            let label: String?
            let value: Int64
        }
    }

    /// Where the output goes, as the chart is drawn for it.
    struct ChartOutput {
        var width: Int
        var unicode: Bool
        var color: Bool

        /// The terminal's columns (else `COLUMNS`, else 80, from 20 to 400); block
        /// characters only on a terminal whose locale is UTF-8; colour only on a terminal
        /// that shows it and without `NO_COLOR`.
        init(console: Console, environment: [String: String]) {
            var columns = 0
            if console.outputIsTerminal {
                var size = winsize()
                if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 { columns = Int(size.ws_col) }
            }
            if columns <= 0, let text = environment["COLUMNS"], let value = Int(text), value > 0 { columns = value }
            width = min(max(columns > 0 ? columns : 80, 20), 400)
            let locale = [environment["LC_ALL"], environment["LC_CTYPE"], environment["LANG"]].compactMap { $0 }.first { !$0.isEmpty } ?? ""
            let utf8 = locale.lowercased().contains("utf-8") || locale.lowercased().contains("utf8")
            unicode = console.outputIsTerminal && utf8
            let terminal = environment["TERM"] ?? ""
            color = console.outputIsTerminal && (environment["NO_COLOR"].map(\.isEmpty) ?? true) && !terminal.isEmpty && terminal != "dumb"
        }
    }

    /// SGR colours of the two series: blue for conversations, magenta for tokens (the
    /// browser's standard palette).
    static func colored(_ text: String, _ series: ActivitySeries) -> String {
        let mark = text.prefix { $0 != " " }
        guard !mark.isEmpty else { return text }
        return "\u{1B}[\(series == .tokens ? 35 : 34)m" + mark + "\u{1B}[39m" + text.dropFirst(mark.count)
    }

    /// The chart's own words as `output` can show them: without block characters, its
    /// separators are ASCII too (a terminal under `LANG=C` shows `·` as two bytes of noise).
    static func fit(_ text: String, _ output: ChartOutput, width: Int? = nil) -> String {
        let width = width ?? output.width
        guard !output.unicode else { return DisplayWidth.truncated(text, to: width) }
        return DisplayWidth.truncated(text.replacingOccurrences(of: " · ", with: " - ").replacingOccurrences(of: "…", with: "..."), to: width, ellipsis: false)
    }

    func runChart() throws {
        let store = try context.openStore(forReading: true)
        let filter = try context.filter()
        let window = ActivityWindow(filter: filter, now: .now())
        let console = context.console
        if context.wantsJSON {
            var charts: [ChartJSON.Chart] = []
            for chart in ActivityChart.allCases {
                let data = try store.activity.chart(chart, filter: filter, window: window)
                charts.append(
                    ChartJSON.Chart(
                        chart: chart.rawValue, title: chart.title, total: data.total, more: data.more,
                        bars: data.bars.map { ChartJSON.Bar(label: $0.label, value: $0.value) }))
            }
            console.line(
                try OutputFormat.json(
                    ChartJSON(filter: filter.description, from: window.start.iso8601, to: window.end.iso8601, charts: charts), for: console))
            return
        }
        let output = ChartOutput(console: console, environment: context.environment)
        let what = filter.isEmpty ? "every conversation" : OutputFormat.line(filter.description)
        console.line(Self.fit("Activity · " + what, output))
        var charts: [ActivityChart: ActivityChartData] = [:]
        for chart in ActivityChart.allCases {
            let data = try store.activity.chart(chart, filter: filter, window: window)
            charts[chart] = data
            if chart == .tokens {
                // The totals line needs both counts; it comes before the charts after them.
                console.line(Self.fit(OverviewScreen.summary(charts: charts, window: window), output))
                for line in Self.chartLines(charts[.months], output: output) + Self.chartLines(data, output: output) { console.line(line) }
            } else if chart != .months {
                for line in Self.chartLines(data, output: output) { console.line(line) }
            }
            console.flush()
        }
    }

    /// A chart's lines: a blank, the heading, the bars and what is said under them.
    static func chartLines(_ data: ActivityChartData?, output: ChartOutput) -> [String] {
        guard let data else { return [] }
        var lines = ["", fit(OverviewScreen.heading(data.chart, data), output)]
        let note = OverviewScreen.note(data)
        if data.bars.isEmpty || note != nil && data.more == 0 {
            return lines + ["  " + fit(note ?? "none", output, width: output.width - 2)]
        }
        for row in ActivityRow.rows(data, width: output.width, unicode: output.unicode) {
            let bar = output.color ? colored(row.bar, data.chart.series) : row.bar
            lines.append(row.label + " " + bar + " " + row.number)
        }
        if let note { lines.append("  " + fit(note, output, width: output.width - 2)) }
        return lines
    }
}
