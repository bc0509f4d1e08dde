import Foundation
import ScrollbackModel
import TerminalText

/// The activity overview over the list (`a`): bar charts of the conversations the list's
/// filter lets through (per month, tokens per month, per model, per source, the busiest
/// days), each computed in the background and shown as it is ready. Enter on a bar opens
/// the list filtered to it.
@MainActor
public final class OverviewScreen: BrowserScreenModel {
    /// The conversations it counts: the list's filter when it opened.
    public let filter: ConversationFilter
    public let window: ActivityWindow
    /// Each chart once counted.
    public private(set) var charts: [ActivityChart: ActivityChartData] = [:]
    /// Why a chart could not be counted, in a few words.
    public private(set) var failures: [ActivityChart: String] = [:]
    private var jobs: [ActivityChart: any ActivityJob] = [:]
    /// The lines, as drawn from the top: headings, bars and notes.
    public private(set) var lines: [OverviewLine] = []
    /// The lines that are bars, in order: what the selection moves over.
    private var barLines: [Int] = []
    /// The selected bar (an index of `barLines`).
    public private(set) var selection = 0
    /// The first line shown.
    public private(set) var top = 0
    private var viewportHeight = 0
    /// Whether a key, the wheel or a click has moved the selection.
    private var moved = false
    unowned let browser: BrowserViewModel

    init(filter: ConversationFilter, browser: BrowserViewModel) {
        self.filter = filter
        self.browser = browser
        window = ActivityWindow(filter: filter, now: browser.now())
        viewportHeight = browser.contentHeight
        count()
    }

    /// Counts every chart: in the background, or without a runner (tests, `:memory:`)
    /// here and now. What is still being counted is stopped first; the bars shown stay
    /// until the new ones arrive.
    private func count() {
        for job in jobs.values { job.cancel() }
        jobs = [:]
        for chart in ActivityChart.allCases {
            if let runner = browser.activityRunner {
                jobs[chart] = runner.start(chart, filter: filter, window: window)
            } else {
                take(chart, Result { try browser.repositories.activity.chart(chart, filter: filter, window: window) })
            }
        }
        layOut()
    }

    private func take(_ chart: ActivityChart, _ result: Result<ActivityChartData, any Error>) {
        switch result {
        case .success(let data):
            charts[chart] = data
            failures[chart] = nil
        case .failure(let error):
            failures[chart] = Self.failure(error)
        }
    }

    public var kind: BrowserScreen { .overview }

    public nonisolated static let title = "The activity overview"

    public nonisolated static let bindings: [KeyBinding] =
        KeyBindings.moving(on: .overview, pages: KeyBindings.pages(on: .overview))
        + [
            KeyBinding(
                .open, [.enter, .character("l"), .right], "Open the list filtered to the bar (its month, day, model or source)", hint: "list it",
                on: [.overview]),
            KeyBinding(.back, [.escape, .character("h"), .left], "Back", hint: "back", on: [.overview]),
            KeyBinding(.quit, [.character("q")], "Back", on: [.overview]),
            KeyBinding(.overview, [.character("a")], "Back to the list", on: [.overview]),
        ]

    public nonisolated static let helpNotes = [
        "It counts the conversations the list's filter lets through in the months shown, by the time each",
        "was last updated (UTC); tokens by the time each message was written, where the source recorded a count.",
    ]

    // MARK: Lines

    /// Lays the charts out as lines, keeping the selected bar.
    private func layOut() {
        let selected = barLines.indices.contains(selection) ? lines[barLines[selection]] : nil
        var lines: [OverviewLine] = [.summary]
        for chart in ActivityChart.allCases {
            lines.append(.blank)
            lines.append(.heading(chart))
            if let failure = failures[chart] {
                lines.append(.note(chart, "could not count: " + failure))
            } else if let data = charts[chart] {
                let note = Self.note(data)
                if data.bars.isEmpty || note != nil && data.more == 0 {
                    lines.append(.note(chart, note ?? "none"))
                } else {
                    lines += data.bars.indices.map { .bar(chart, $0) }
                    if let note { lines.append(.note(chart, note)) }
                }
            } else {
                lines.append(.note(chart, "counting…"))
            }
        }
        self.lines = lines
        barLines = lines.indices.filter { if case .bar = lines[$0] { true } else { false } }
        if !moved {
            // Charts arrive in any order: until a key moves, the first bar is selected.
            selection = 0
            top = 0
        } else if let selected, let found = barLines.firstIndex(where: { lines[$0] == selected }) {
            selection = found
        } else {
            selection = min(selection, max(barLines.count - 1, 0))
        }
        keepSelectionShown()
    }

    /// The bar a line shows.
    public func bar(_ line: OverviewLine) -> ActivityBar? {
        guard case .bar(let chart, let index) = line, let data = charts[chart], data.bars.indices.contains(index) else { return nil }
        return data.bars[index]
    }

    /// The line of the selected bar, if any bar is shown.
    public var selectedLine: Int? { barLines.indices.contains(selection) ? barLines[selection] : nil }

    public var selectedBar: ActivityBar? { selectedLine.flatMap { bar(lines[$0]) } }

    /// The lines on screen, from `top`.
    public var visibleLines: ArraySlice<OverviewLine> {
        lines[min(top, lines.count)..<min(top + viewportHeight, lines.count)]
    }

    private func keepSelectionShown() {
        let height = max(viewportHeight, 1)
        top = min(top, max(lines.count - height, 0))
        guard let line = selectedLine else { return }
        // The chart's heading stays in view with its first bar.
        var first = line
        if case .bar(_, 0) = lines[line], line > 0, case .heading = lines[line - 1] { first = line - 1 }
        if first < top { top = first }
        if line >= top + height { top = line - height + 1 }
    }

    private func select(_ index: Int) {
        guard !barLines.isEmpty else { return }
        moved = true
        selection = min(max(index, 0), barLines.count - 1)
        keepSelectionShown()
    }

    /// The bar at or after `line` (before it, going up), for a page's move.
    private func selectLine(_ line: Int, down: Bool) {
        if down {
            select(barLines.firstIndex { $0 >= line } ?? barLines.count - 1)
        } else {
            select(barLines.lastIndex { $0 <= line } ?? 0)
        }
    }

    // MARK: Commands

    public func perform(_ command: BrowserCommand) throws -> ScreenAnswer {
        let page = max(viewportHeight - 1, 1)
        let line = selectedLine ?? 0
        switch command {
        case .down: select(selection + 1)
        case .up: select(selection - 1)
        case .pageDown: selectLine(line + page, down: true)
        case .pageUp: selectLine(line - page, down: false)
        case .halfPageDown: selectLine(line + page / 2, down: true)
        case .halfPageUp: selectLine(line - page / 2, down: false)
        case .top:
            select(0)
            top = 0
        case .bottom: select(barLines.count - 1)
        case .open: try openSelected()
        case .back, .quit, .overview: browser.remove(self)
        default: return .unhandled
        }
        return .handled
    }

    public func perform(_ command: BrowserCommand, times: Int) throws -> Bool {
        switch command {
        case .down: select(selection + times)
        case .up: select(selection - times)
        default: return false
        }
        return true
    }

    /// The list, filtered to the selected bar.
    func openSelected() throws {
        guard let line = selectedLine, let bar = bar(lines[line]) else {
            browser.status = barLines.isEmpty ? (isCounting ? "Still counting: nothing to list yet" : "Nothing to list: no bars") : nil
            return
        }
        guard let narrowed = bar.filter else {
            browser.status = "No filter lists the conversations without a model (f filters)"
            return
        }
        browser.remove(self)
        try browser.listScreen.list.setFilter(narrowed)
        var status = "Filtered — " + UntrustedText.sanitized(narrowed.description)
        // `model:` takes any model holding the name: say which others the list then shows.
        if case .bar(.models, _) = lines[line], let name = narrowed.model, let models = charts[.models] {
            let others = models.bars.compactMap(\.label).filter { $0 != name && $0.range(of: name, options: .caseInsensitive) != nil }
            if !others.isEmpty {
                status += " (also " + others.prefix(3).map { UntrustedText.sanitized($0) }.joined(separator: ", ") + (others.count > 3 ? "…" : "") + ")"
            }
        }
        browser.status = status + " · " + browser.listScreen.escClears
    }

    public func wheel(by delta: Int) throws { select(selection + delta) }

    public func click(line: Int, open: Bool) throws {
        let index = top + line
        guard let found = barLines.firstIndex(of: index) else { return }
        select(found)
        if open { try openSelected() }
    }

    public func footer(width: Int) -> ScreenFooter {
        var left = "counting…"
        if let line = selectedLine, let bar = bar(lines[line]), case .bar(let chart, _) = lines[line] {
            let noun = chart.series == .tokens ? "tokens" : (bar.value == 1 ? "conversation" : "conversations")
            left = "\(NumberText.grouped(selection + 1)) of \(NumberText.grouped(barLines.count)) · \(UntrustedText.sanitized(bar.shownLabel)): \(NumberText.grouped(bar.value)) \(noun)"
        } else if jobs.isEmpty {
            left = "nothing to chart"
        }
        return ScreenFooter(left: left, hints: [.open, .back])
    }

    public func resize(width: Int, contentHeight: Int) {
        viewportHeight = contentHeight
        keepSelectionShown()
    }

    /// Takes in the charts counted since; true when one arrived.
    public func poll() -> Bool {
        var changed = false
        for (chart, job) in jobs {
            guard let result = job.result else { continue }
            jobs[chart] = nil
            take(chart, result)
            changed = true
        }
        if changed { layOut() }
        return changed
    }

    /// Another process changed the data: every chart is counted again (the ones shown stay
    /// until the new ones arrive).
    public func dataChanged() throws { count() }

    /// Whether a chart is still being counted.
    public var isCounting: Bool { !jobs.isEmpty }

    /// Stops what is still being counted (the screen was left).
    public func leave() {
        for job in jobs.values { job.cancel() }
        jobs = [:]
    }

    static func failure(_ error: any Error) -> String {
        UntrustedText.sanitized((error as? any LocalizedError)?.errorDescription ?? String(describing: error))
    }

    // MARK: Totals

    /// The summary line's words: conversations and tokens in the window, and its months.
    public var summary: String { Self.summary(charts: charts, window: window) }

    public nonisolated static func summary(charts: [ActivityChart: ActivityChartData], window: ActivityWindow) -> String {
        var parts: [String] = []
        if let months = charts[.months] {
            parts.append("\(NumberText.grouped(months.total)) conversation\(months.total == 1 ? "" : "s")")
        }
        if let tokens = charts[.tokens], tokens.total > 0 {
            parts.append("\(NumberText.compact(tokens.total)) tokens")
        }
        let range = "\(ActivityWindow.monthLabel(window.start)) to \(ActivityWindow.monthLabel(window.bounds[max(window.months - 1, 0)]))"
        parts.append(range + (window.isCut ? " (the last \(window.months) months)" : ""))
        return parts.joined(separator: " · ")
    }

    /// A chart's heading: its title and, but for the busiest days, its total.
    public nonisolated static func heading(_ chart: ActivityChart, _ data: ActivityChartData?) -> String {
        guard let data, chart != .days, data.total > 0 else { return chart.title }
        return chart.title + " · " + (chart.series == .tokens ? NumberText.compact(data.total) : NumberText.grouped(data.total))
    }

    /// What stands under a chart without bars (or, for the models and sources, after the
    /// bars shown); nil when its bars say it all.
    public nonisolated static func note(_ data: ActivityChartData) -> String? {
        let chart = data.chart
        if data.bars.isEmpty || data.total == 0 {
            switch chart {
            case .tokens: return "no token counts (the sources of these conversations record none)"
            case .months: return "no conversation was updated in these months"
            default: return "none"
            }
        }
        guard data.more > 0 else { return nil }
        let noun = chart == .models ? "model" : "source"
        return "and \(NumberText.grouped(data.more)) more \(noun)\(data.more == 1 ? "" : "s")"
    }
}

/// A line of the overview.
public enum OverviewLine: Hashable, Sendable {
    /// The totals.
    case summary
    case blank
    case heading(ActivityChart)
    /// Bar `index` of the chart.
    case bar(ActivityChart, Int)
    /// A line under a chart's heading: counting, none, more.
    case note(ActivityChart, String)
}

/// One bar's row as text: the label, the bar and the number, fitted to a width. The
/// browser's overview and `stats --chart` both draw these.
public struct ActivityRow: Equatable, Sendable {
    public var label: String
    public var bar: String
    public var number: String

    /// The widest a label column is.
    public static let labelWidth = 24
    static let eighths = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]

    /// The rows of `data` on `width` columns: labels (made safe) in a column as wide as the
    /// widest (names at most `labelWidth`, or a third of the width), numbers right-aligned in
    /// theirs, bars in what is left, scaled to the largest bar. `unicode`: eighths of a
    /// block; else `#` a cell.
    public static func rows(_ data: ActivityChartData, width: Int, unicode: Bool) -> [ActivityRow] {
        let labels = data.bars.map { UntrustedText.sanitized(unicode ? $0.shownLabel : $0.label ?? "-") }
        let numbers = data.bars.map { data.chart.series == .tokens ? NumberText.compact($0.value) : NumberText.grouped($0.value) }
        // Dates are never cut (the bars give way); names are, past a third of the width.
        let widest = labels.map { DisplayWidth.of($0) }.max() ?? 0
        let labelColumn = data.chart == .models || data.chart == .sources ? min(widest, labelWidth, max(width / 3, 4)) : widest
        let numberColumn = numbers.map { DisplayWidth.of($0) }.max() ?? 0
        let cells = max(width - labelColumn - numberColumn - 2, 0)
        let largest = data.bars.map(\.value).max() ?? 0
        return data.bars.indices.map { index in
            ActivityRow(
                label: fitted(labels[index], to: labelColumn, unicode: unicode), bar: bar(data.bars[index].value, of: largest, cells: cells, unicode: unicode),
                number: DisplayWidth.rightAligned(numbers[index], to: numberColumn))
        }
    }

    /// `text` cut to `width` cells and padded to them: a cut name ends in `…`, or without
    /// Unicode in `~` (two names that start alike must not look the same).
    static func fitted(_ text: String, to width: Int, unicode: Bool) -> String {
        if unicode || DisplayWidth.of(text) <= width { return DisplayWidth.fitted(text, to: width) }
        guard width > 1 else { return DisplayWidth.fitted(text, to: width, ellipsis: false) }
        return DisplayWidth.fitted(DisplayWidth.truncated(text, to: width - 1, ellipsis: false) + "~", to: width, ellipsis: false)
    }

    /// `value` of `largest` on `cells` cells, padded to them; a value above nothing shows
    /// at least its smallest mark.
    static func bar(_ value: Int64, of largest: Int64, cells: Int, unicode: Bool) -> String {
        guard cells > 0 else { return "" }
        let fraction = largest > 0 ? min(max(Double(value) / Double(largest), 0), 1) : 0
        var text: String
        if unicode {
            var units = Int((fraction * Double(cells * 8)).rounded())
            if value > 0 { units = max(units, 1) }
            text = String(repeating: "█", count: units / 8) + eighths[units % 8]
        } else {
            var units = Int((fraction * Double(cells)).rounded())
            if value > 0 { units = max(units, 1) }
            text = String(repeating: "#", count: units)
        }
        return text + String(repeating: " ", count: max(cells - DisplayWidth.of(text), 0))
    }

    /// The row as one line: label, bar, number, a space between.
    public var text: String { label + " " + bar + " " + number }
}
