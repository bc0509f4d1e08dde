import Foundation

/// One line of the results: our figure beside its baseline from the same run.
struct ResultRow: Encodable {
    let section: String
    let name: String
    let ours: Double
    let baseline: Double
    let unit: String
    /// What is compared with the bar: a ratio, or our figure itself.
    let figure: Double
    let figureName: String
    let bar: String
    let passed: Bool
}

struct Report: Encodable {
    var machine: [String: String]
    var quick: Bool
    var sizes: [String: Int]
    var results: [ResultRow] = []

    mutating func add(
        _ section: String, _ name: String, ours: Double, baseline: Double, unit: String, figure: Double, figureName: String,
        atMost: Double? = nil, atLeast: Double? = nil
    ) {
        var passed = true
        var bar = "-"
        if let atMost {
            passed = figure <= atMost
            bar = "≤ \(Self.format(atMost))"
        }
        if let atLeast {
            passed = figure >= atLeast
            bar = "≥ \(Self.format(atLeast))"
        }
        let row = ResultRow(
            section: section, name: name, ours: ours, baseline: baseline, unit: unit, figure: figure, figureName: figureName,
            bar: bar, passed: passed)
        results.append(row)
        print(Self.line(row))
    }

    static func format(_ value: Double) -> String {
        if value == 0 { return "0" }
        if abs(value) >= 1000 { return String(format: "%.0f", value) }
        if abs(value) >= 10 { return String(format: "%.1f", value) }
        return String(format: "%.3f", value)
    }

    static var header: String {
        line(
            ResultRow(
                section: "section", name: "measure", ours: 0, baseline: 0, unit: "unit", figure: 0, figureName: "figure",
                bar: "bar", passed: true), labels: true)
    }

    static func line(_ row: ResultRow, labels: Bool = false) -> String {
        func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
            let count = text.count
            if count >= width { return text }
            let space = String(repeating: " ", count: width - count)
            return right ? space + text : text + space
        }
        return [
            pad(row.section, 10), pad(row.name, 34), pad(labels ? "ours" : format(row.ours), 12, right: true),
            pad(labels ? "baseline" : format(row.baseline), 12, right: true), pad(row.unit, 6), pad(row.figureName, 16),
            pad(labels ? "value" : format(row.figure), 10, right: true), pad(row.bar, 8), labels ? "ok" : row.passed ? "yes" : "NO",
        ].joined(separator: " ")
    }
}
