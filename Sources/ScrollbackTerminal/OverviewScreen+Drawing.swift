import Foundation
import ScrollbackModel
import ScrollbackViewModels
import TerminalText

/// Drawing the activity overview: the totals, then each chart's heading and bars.
extension OverviewScreen: ScreenDrawing {
    func draw(_ browser: BrowserViewModel, on screen: any Screen) {
        let what = filter.isEmpty ? "every conversation" : UntrustedText.sanitized(filter.description)
        BrowserRenderer.drawHeader("Activity · " + what, right: BrowserRenderer.readOnlyLabel(browser, width: screen.width), on: screen)
        let width = max(screen.width - 2, 0)
        var rows: [ActivityChart: [ActivityRow]] = [:]
        for (offset, line) in visibleLines.enumerated() {
            let row = 1 + offset
            guard row < screen.height - 1 else { break }
            let selected = top + offset == selectedLine
            switch line {
            case .summary:
                screen.draw(DisplayWidth.truncated(summary, to: width), row: row, column: 1, style: TextStyle(bold: true))
            case .blank:
                break
            case .heading(let chart):
                let text = OverviewScreen.heading(chart, charts[chart])
                screen.draw(DisplayWidth.truncated(text, to: width), row: row, column: 1, style: TextStyle(bold: true, underline: true))
            case .note(_, let text):
                screen.draw(DisplayWidth.truncated(text, to: max(width - 2, 0)), row: row, column: 3, style: BrowserRenderer.palette[.hint])
            case .bar(let chart, let index):
                guard let data = charts[chart] else { break }
                if rows[chart] == nil { rows[chart] = ActivityRow.rows(data, width: width, unicode: true) }
                guard let chartRows = rows[chart], chartRows.indices.contains(index) else { break }
                let bar = chartRows[index]
                let base = selected ? BrowserRenderer.palette[.selection] : TextStyle.plain
                if selected { screen.draw(String(repeating: " ", count: screen.width), row: row, column: 0, style: base) }
                let barStyle = BrowserRenderer.palette[chart.series == .tokens ? .tokens : .conversations]
                screen.draw(bar.label, row: row, column: 1, style: base)
                let barColumn = 1 + DisplayWidth.of(bar.label) + 1
                // The colour is the bar's own; the cells after it stay the row's.
                let mark = String(bar.bar.prefix { $0 != " " })
                screen.draw(mark, row: row, column: barColumn, style: barStyle)
                screen.draw(bar.number, row: row, column: barColumn + DisplayWidth.of(bar.bar) + 1, style: base)
            }
        }
    }
}
