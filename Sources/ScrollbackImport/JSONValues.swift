import Foundation
import ScrollbackModel

/// Typed reads from parsed JSON, forgiving about what real exports leave out.
extension Dictionary where Key == String, Value == Any {
    func string(_ key: String) -> String? { self[key] as? String }
    func object(_ key: String) -> [String: Any]? { self[key] as? [String: Any] }
    func array(_ key: String) -> [Any]? { self[key] as? [Any] }
    func number(_ key: String) -> Double? {
        if let number = self[key] as? NSNumber, !(self[key] is Bool) { return number.doubleValue }
        return nil
    }
}

enum ImportTime {
    /// Float seconds since 1970 (ChatGPT) as milliseconds, keeping the milliseconds.
    static func seconds(_ value: Double?) -> Timestamp? {
        guard let value, value.isFinite else { return nil }
        return Timestamp(milliseconds: Int64((value * 1000).rounded()))
    }

    /// ISO 8601 (`2026-02-01T09:00:00.000000Z`, `…+02:00`) as milliseconds.
    static func iso8601(_ text: String?) -> Timestamp? {
        guard let text else { return nil }
        let scalars = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= scalars.count else { return nil }
            var value = 0
            for byte in scalars[range] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19)
        else { return nil }
        var index = 19
        var millis = 0
        if index < scalars.count, scalars[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < scalars.count, (48...57).contains(scalars[index]) {
                if digits < 3 { millis = millis * 10 + Int(scalars[index] - 48) }
                digits += 1
                index += 1
            }
            while digits < 3 {
                millis *= 10
                digits += 1
            }
        }
        var offsetSeconds = 0
        if index < scalars.count, scalars[index] == UInt8(ascii: "+") || scalars[index] == UInt8(ascii: "-") {
            let sign = scalars[index] == UInt8(ascii: "-") ? -1 : 1
            guard let hours = number((index + 1)..<(index + 3)) else { return nil }
            let minutes = number((index + 4)..<(index + 6)) ?? 0
            offsetSeconds = sign * (hours * 3600 + minutes * 60)
        }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = Int64(timegm(&parts)) - Int64(offsetSeconds)
        return Timestamp(milliseconds: seconds * 1000 + Int64(millis))
    }
}

enum ImportText {
    /// A title from the first user message: its first line, at most 80 characters.
    static func title(from messages: [ImportedMessage]) -> String {
        guard let first = messages.first(where: { $0.role == .user }) ?? messages.first else { return "Untitled" }
        let line = first.content.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { return "Untitled" }
        return trimmed.count > 80 ? String(trimmed.prefix(79)) + "…" : trimmed
    }

    static func isBlank(_ text: String) -> Bool {
        text.allSatisfy { $0.isWhitespace }
    }
}
