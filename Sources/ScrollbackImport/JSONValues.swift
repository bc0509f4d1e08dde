import Foundation
import ScrollbackModel

/// Typed reads from parsed JSON, forgiving about what real exports leave out.
extension Dictionary where Key == String, Value == Any {
    func string(_ key: String) -> String? { self[key] as? String }
    func object(_ key: String) -> [String: Any]? { self[key] as? [String: Any] }
    func array(_ key: String) -> [Any]? { self[key] as? [Any] }
    /// A number, not `true`/`false`. On Linux a parsed 0 or 1 also casts to Bool, so a
    /// boolean is told by its type code ("c"), not by `is Bool` (which skipped records whose
    /// time was 0).
    func number(_ key: String) -> Double? {
        guard let number = self[key] as? NSNumber, String(cString: number.objCType) != "c" else { return nil }
        return number.doubleValue
    }
}

enum ImportTime {
    /// 9999-12-31T23:59:59.999Z: the last time a record may carry (four-digit years).
    static let latest: Int64 = 253_402_300_799_999

    /// Float seconds since 1970 (ChatGPT) as milliseconds, keeping the milliseconds; nil when
    /// absent.
    ///
    /// - Throws: `SkipReason` when the number is not a time in the years 1970–9999.
    static func seconds(_ value: Double?, field: String) throws(SkipReason) -> Timestamp? {
        guard let value else { return nil }
        // Range-checked before the conversion: `Int64(1e16 * 1000)` traps.
        let milliseconds = (value * 1000).rounded()
        guard milliseconds.isFinite, milliseconds >= 0, milliseconds <= Double(latest) else {
            throw SkipReason("\(field) \(value) is not a time between the years 1970 and 9999")
        }
        return Timestamp(milliseconds: Int64(milliseconds))
    }

    /// An ISO 8601 text (Claude's and scrollback's times) as milliseconds; nil when absent.
    ///
    /// - Throws: `SkipReason` when the text is there but not a valid time in 1970–9999.
    static func iso8601(_ text: String?, field: String) throws(SkipReason) -> Timestamp? {
        guard let text else { return nil }
        guard let time = iso8601(text) else {
            throw SkipReason("\(field) '\(text.prefix(40))' is not a valid time between the years 1970 and 9999")
        }
        return time
    }

    /// The first `count` messages, read from lines without a time before the first line that
    /// has one (a session's snapshot or meta lines), take that line's `time`: not 1970.
    static func date(_ messages: inout [ImportedMessage], first count: Int, at time: Timestamp?) {
        guard let time else { return }
        for index in messages.indices.prefix(count) { messages[index].createdAt = time }
    }

    /// ISO 8601 (`2026-02-01T09:00:00.000000Z`, `…+02:00`, `…+0200`, or no zone for UTC) as
    /// milliseconds, strictly: month 13, day 45, hour 25 or text after the time make it
    /// nil, as does a year outside 1970–9999.
    static func iso8601(_ text: String) -> Timestamp? {
        let bytes = Array(text.utf8)
        func byte(_ index: Int) -> UInt8? { index < bytes.count ? bytes[index] : nil }
        func number(_ start: Int, _ length: Int) -> Int? {
            guard start + length <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start..<(start + length)] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        let dash = UInt8(ascii: "-"), colon = UInt8(ascii: ":")
        guard let year = number(0, 4), byte(4) == dash, let month = number(5, 2), byte(7) == dash,
              let day = number(8, 2), byte(10) == UInt8(ascii: "T") || byte(10) == UInt8(ascii: "t"),
              let hour = number(11, 2), byte(13) == colon, let minute = number(14, 2), byte(16) == colon,
              let second = number(17, 2)
        else { return nil }
        guard year >= 1, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year), hour <= 23,
              minute <= 59, second <= 60
        else { return nil }
        var index = 19
        var millis = 0
        if byte(index) == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while let next = byte(index), (48...57).contains(next) {
                if digits < 3 { millis = millis * 10 + Int(next - 48) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in min(digits, 3)..<3 { millis *= 10 }
        }
        var offsetMinutes = 0
        switch byte(index) {
        case nil:
            break  // no zone: UTC (llm's older logs)
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign = byte(index) == dash ? -1 : 1
            guard let hours = number(index + 1, 2), hours <= 23 else { return nil }
            index += 3
            if byte(index) == colon { index += 1 }
            guard let minutes = number(index, 2), minutes <= 59 else { return nil }
            index += 2
            offsetMinutes = sign * (hours * 60 + minutes)
        default:
            return nil
        }
        guard index == bytes.count else { return nil }
        let days = daysSince1970(year: year, month: month, day: day)
        let seconds = ((days * 24 + hour) * 60 + minute - offsetMinutes) * 60 + second
        let milliseconds = Int64(seconds) * 1000 + Int64(millis)
        guard milliseconds >= 0, milliseconds <= latest else { return nil }
        return Timestamp(milliseconds: milliseconds)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (year ≥ 1).
    static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let shifted = month <= 2 ? year - 1 : year
        let era = shifted / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
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

    /// `body` fenced so that nothing in it ends the block early (`CodeFence.fenced`).
    static func fenced(_ body: String, language: String = "") -> String {
        CodeFence.fenced(body, language: language)
    }

    /// A tool call's main argument as its one-line header shows it: the first line, at most
    /// 100 characters; an argument of several lines says so (` …`): `ls` alone would hide an
    /// `rm` on the next line.
    static func callArgument(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        if line.count > 100 { return String(line.prefix(99)) + "…" }
        return text.trimmingCharacters(in: .whitespacesAndNewlines).contains(where: \.isNewline) ? line + " …" : line
    }

    /// A name on one line: line breaks and tabs as spaces, runs of them as one, at most 200
    /// characters (a name from a file must not start a line of its own in the text).
    static func oneLine(_ name: String) -> String {
        let words = name.split(whereSeparator: { $0.isNewline || $0 == "\t" || $0 == " " })
        let line = words.joined(separator: " ")
        return line.count > 200 ? String(line.prefix(199)) + "…" : line
    }

    static func isBlank(_ text: String) -> Bool {
        text.allSatisfy { $0.isWhitespace }
    }
}
