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
}
