/// Numbers as people read them.
public enum NumberText {
    /// `1234567` as `1,234,567`.
    public static func grouped(_ number: some BinaryInteger) -> String {
        let digits = String(number.magnitude)
        var result = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0 && (digits.count - offset) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return number < 0 ? "-" + result : result
    }

    /// Short, for a chart's column: `9,999` as it is, then `12.3k`, `456k`, `1.2M`, `3.4B`,
    /// `5.6T` (one decimal below 100 of the unit, rounded down, so that it never reads more
    /// than there is).
    public static func compact(_ number: Int64) -> String {
        let magnitude = number.magnitude
        guard magnitude >= 10_000 else { return grouped(number) }
        let units: [(UInt64, String)] = [(1_000_000_000_000_000, "P"), (1_000_000_000_000, "T"), (1_000_000_000, "B"), (1_000_000, "M"), (1_000, "k")]
        let (size, name) = units.first { magnitude >= $0.0 } ?? (1_000, "k")
        let whole = magnitude / size
        let text = whole >= 100 ? "\(whole)" : "\(whole).\(magnitude % size / (size / 10))"
        return (number < 0 ? "-" : "") + text + name
    }
}
