import Foundation

/// Which conversations a list, search or export shows: by source, model, updated time
/// and pin. Empty, it lets every conversation through.
public struct ConversationFilter: Sendable, Hashable {
    /// `chatgpt`, `claude`, `llm`, `demo`…: the importer a conversation came from.
    public var source: String?
    /// A case-insensitive part of the model's name (`gpt-4o` matches `GPT-4o-mini`).
    public var model: String?
    /// A case-insensitive part of the folder a coding agent's session ran in
    /// (`scrollback` matches `/home/me/src/scrollback`).
    public var project: String?
    /// Updated at or after this time.
    public var since: Timestamp?
    /// Updated before this time.
    public var until: Timestamp?
    /// Pinned conversations only.
    public var pinnedOnly: Bool
    /// Words the title must hold, each as `/` finds a word (`rust asy` finds "Async Rust";
    /// case and accents ignored; a phrase in double quotes): the list's narrowing (`\`).
    public var title: String?

    public init(
        source: String? = nil, model: String? = nil, since: Timestamp? = nil, until: Timestamp? = nil,
        pinnedOnly: Bool = false, title: String? = nil, project: String? = nil
    ) {
        self.source = source
        self.model = model
        self.project = project
        self.since = since
        self.until = until
        self.pinnedOnly = pinnedOnly
        self.title = title.flatMap(Self.titleWords)
    }

    /// The words of a title narrowing as kept: white space at the ends trimmed, nil when
    /// nothing is left that could be matched.
    public static func titleWords(_ text: String) -> String? {
        // Punctuation or emoji alone ("----", "🍕") is looked for too, as search does: the
        // index cannot propose those titles, so every row is read.
        let query = SearchQuery(text)
        guard !query.isEmpty else { return nil }
        // Each term once, as the condition has it: a word pasted 5,000 times is one word in
        // the filter line and in a `more:` line.
        return query.terms.map { $0.isPhrase ? "\"\($0.text)\"" : $0.text }.joined(separator: " ")
    }

    public static let none = ConversationFilter()

    /// Whether `conversation` passes, exactly as the database's query decides.
    public func admits(_ conversation: ConversationDTO) -> Bool {
        if pinnedOnly && !conversation.pinned { return false }
        if let title, !SearchQuery(title).matches(conversation.title) { return false }
        if let since, conversation.updatedAt < since { return false }
        if let until, conversation.updatedAt >= until { return false }
        if let source, Self.folded(conversation.source) != Self.folded(source) { return false }
        if let model, !Self.contains(conversation.model, model) { return false }
        if let project, !Self.contains(conversation.project, project) { return false }
        return true
    }

    /// Whether `text` holds `part`, as SQL's LIKE '%part%' finds it: ASCII letters folded,
    /// the rest compared as they are.
    private static func contains(_ text: String?, _ part: String) -> Bool {
        guard let text else { return false }
        let (haystack, needle) = (folded(text), folded(part))
        guard needle.count <= haystack.count else { return false }
        return needle.isEmpty
            || (0...(haystack.count - needle.count)).contains(where: { haystack[$0..<($0 + needle.count)].elementsEqual(needle) })
    }

    public var isEmpty: Bool { self == .none }

    /// The filter as the browser's filter line writes it: `source:claude model:gpt-4o
    /// since:2025-01-01 pinned` (times as UTC dates, or date and time when not midnight).
    public var description: String {
        var words: [String] = []
        if let source { words.append("source:" + Self.quotedIfNeeded(source)) }
        if let model { words.append("model:" + Self.quotedIfNeeded(model)) }
        if let project { words.append("project:" + Self.quotedIfNeeded(project)) }
        if let since { words.append("since:" + Self.dateText(since)) }
        if let until {
            // The last day taken in, as `until:` reads a date: up to the end of that day.
            let iso = until.iso8601
            let last = Timestamp(milliseconds: until.milliseconds &- 1)
            let text = iso.hasSuffix("T00:00:00.000Z") ? String(last.iso8601.prefix(10)) : Self.exactText(last)
            words.append("until:" + text)
        }
        if pinnedOnly { words.append("pinned") }
        if let title { words.append("title:" + Self.quotedIfNeeded(title)) }
        return words.joined(separator: " ")
    }

    /// In quotes when it holds a space, a quote or a backslash (`\"` and `\\` inside).
    private static func quotedIfNeeded(_ text: String) -> String {
        guard text.contains(where: { $0.isWhitespace || $0 == "\"" || $0 == "\\" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// `2025-01-31`, or the exact time when it is not midnight UTC.
    static func dateText(_ time: Timestamp) -> String {
        let iso = time.iso8601
        if iso.hasSuffix("T00:00:00.000Z") { return String(iso.prefix(10)) }
        return exactText(time)
    }

    /// `2025-01-31T10:00Z`, with seconds and milliseconds only when they are not zero.
    static func exactText(_ time: Timestamp) -> String {
        let iso = time.iso8601
        if iso.hasSuffix(":00.000Z") { return String(iso.prefix(16)) + "Z" }
        return iso
    }
}

/// A mistake in a filter: says which word and what would work.
public struct FilterError: Error, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension ConversationFilter {
    /// The filter line's words: `source:NAME`, `model:NAME`, `project:FOLDER`, `since:DATE`, `until:DATE`,
    /// `pinned`, `title:WORDS`. A value with spaces is quoted (`model:"gpt 4"`). Any other
    /// word is a word of the title (`rust since:2w` is `title:rust since:2w`).
    public static func parse(_ text: String, now: Timestamp) throws -> ConversationFilter {
        var filter = ConversationFilter()
        var titleWords: [String] = []
        for word in try words(of: text) {
            if word == "pinned" || word == "pinned:" || word == "pinned:yes" {
                filter.pinnedOnly = true
                continue
            }
            guard !word.isEmpty else { continue }
            guard let colon = word.firstIndex(of: ":") else {
                // A title's word, as narrowing takes it (a phrase when it held a space).
                titleWords.append(word.contains(where: \.isWhitespace) ? "\"" + word + "\"" : word)
                continue
            }
            let name = String(word[..<colon]).lowercased()
            guard Self.names.contains(name) else {
                // A mistyped name is said, not searched for in titles.
                throw FilterError(
                    "unknown filter '\(name):'; use source:, model:, project:, since:, until:, title: or pinned (title:\(word) finds it in titles)")
            }
            let value = String(word[word.index(after: colon)...])
            guard !value.isEmpty else { throw FilterError("'\(name):' needs a value") }
            switch name {
            case "source": filter.source = try source(value)
            case "model": filter.model = value
            case "project": filter.project = value
            case "since": filter.since = try time(value, now: now, end: false)
            case "until": filter.until = try time(value, now: now, end: true)
            default: titleWords.append(value)
            }
        }
        if !titleWords.isEmpty {
            guard let words = Self.titleWords(titleWords.joined(separator: " ")) else {
                throw FilterError("'\(titleWords.joined(separator: " ").prefix(100))' has nothing to find in a title")
            }
            filter.title = words
        }
        try filter.validate()
        return filter
    }

    /// The names of the filter line's `name:value` words.
    private static let names: Set<String> = ["source", "model", "project", "since", "until", "title"]

    /// A source name as given (`--source`, `source:`): any text an import kept (matched
    /// with ASCII case folded), but not one that looks like an option or holds a control
    /// character.
    public static func source(_ text: String) throws -> String {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.count <= 100, !trimmed.hasPrefix("-"),
            !trimmed.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else {
            throw FilterError("'\(text.prefix(100))' is not a source name (chatgpt, claude, llm, jsonl, demo…)")
        }
        return trimmed
    }

    /// The UTF-8 bytes with ASCII letters folded to lower case, as SQLite's NOCASE and LIKE
    /// compare them.
    static func folded(_ text: String) -> [UInt8] { text.utf8.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 } }

    /// Refuses a range that holds nothing.
    public func validate() throws {
        if let since, let until, since >= until {
            let shown = ConversationFilter(until: until).description.dropFirst("until:".count)
            throw FilterError("since \(Self.dateText(since)) is not before until \(shown): nothing can match")
        }
    }

    /// Splits on spaces, keeping quoted parts together (quotes removed).
    static func words(of text: String) throws -> [String] {
        var words: [String] = []
        var current = ""
        var quoted = false
        var started = false
        var escaped = false
        for character in text {
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" && quoted {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
                started = true
            } else if character.isWhitespace && !quoted {
                if started { words.append(current) }
                current = ""
                started = false
            } else {
                current.append(character)
                started = true
            }
        }
        if quoted { throw FilterError("a quote is not closed") }
        if started { words.append(current) }
        return words
    }

    /// A time for `since` or `until`: an ISO date (`2025-01-31`, `2025-01`, `2025`), a date
    /// and time (`2025-01-31T10:00Z`), or a time ago (`7d`, `2w`, `3m`, `1y`). A date
    /// means its start for `since` and its end for `until` (`until:2025-01` takes in all
    /// of January). Dates are UTC, as scrollback shows them.
    public static func time(_ text: String, now: Timestamp, end: Bool) throws -> Timestamp {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        // Before 1970 is the same as 1970: nothing scrollback stores is older.
        // `until` a time ago takes in that very instant, as `until` a time of day does: so
        // `--since 3m --until 3m` is that one instant, not an empty range.
        if let ago = try relative(trimmed, now: now) { return Timestamp(milliseconds: max(ago.milliseconds, 0) + (end ? 1 : 0)) }
        if let date = calendarDate(trimmed, end: end) {
            // `until` a time takes in that very instant.
            return end && trimmed.contains("T") ? Timestamp(milliseconds: date.milliseconds + 1) : date
        }
        throw FilterError(
            "'\(text)' is not a date: use 2025-01-31, 2025-01, 2025, 2025-01-31T10:00Z (the years 1970 to 9999), or 7d, 2w, 3m, 1y for days, weeks, months, years ago")
    }

    private static func relative(_ text: String, now: Timestamp) throws -> Timestamp? {
        guard let unit = text.last, "dwmy".contains(unit), text.count >= 2 else { return nil }
        let digits = text.dropLast()
        guard digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
        guard digits.count <= 5, let amount = Int(digits), amount <= 20_000 else {
            throw FilterError("'\(text)' is too far back (at most 20000 of a unit)")
        }
        let day: Int64 = 86_400_000
        switch unit {
        case "d": return Timestamp(milliseconds: now.milliseconds - Int64(amount) * day)
        case "w": return Timestamp(milliseconds: now.milliseconds - Int64(amount) * 7 * day)
        default:
            // Calendar months and years, in UTC: 1m from March 31 is the last of February.
            var seconds = time_t(now.milliseconds.dividedRoundingDown(by: 1000))
            var parts = tm()
            gmtime_r(&seconds, &parts)
            let months = unit == "m" ? amount : amount * 12
            let totalMonths = Int(parts.tm_year) * 12 + Int(parts.tm_mon) - months
            let year = Int(Int64(totalMonths).dividedRoundingDown(by: 12))
            let month = totalMonths - year * 12
            let lastDay = daysIn(month: month + 1, year: year + 1900)
            parts.tm_year = Int32(clamping: year)
            parts.tm_mon = Int32(clamping: month)
            parts.tm_mday = min(parts.tm_mday, Int32(clamping: lastDay))
            let result = timegm(&parts)
            let remainder = now.milliseconds - now.milliseconds.dividedRoundingDown(by: 1000) * 1000
            return Timestamp(milliseconds: Int64(result) * 1000 + remainder)
        }
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// `YYYY`, `YYYY-MM`, `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM[:SS]Z`.
    private static func calendarDate(_ text: String, end: Bool) -> Timestamp? {
        let parts = text.split(separator: "T", maxSplits: 1, omittingEmptySubsequences: false)
        let fields = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard (1...3).contains(fields.count), fields.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            fields[0].count == 4, fields.dropFirst().allSatisfy({ $0.count == 2 }),
            let year = Int(fields[0]), (1970...9999).contains(year)
        else { return nil }
        let month = fields.count > 1 ? Int(fields[1]) ?? 0 : 1
        let day = fields.count > 2 ? Int(fields[2]) ?? 0 : 1
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day) else { return nil }
        var hour = 0, minute = 0, second = 0, milliseconds = 0
        if parts.count == 2 {
            guard fields.count == 3, parts[1].hasSuffix("Z") else { return nil }
            var time = parts[1].dropLast()
            // Milliseconds, as scrollback prints times: `10:00:00.123Z`.
            var fraction = 0
            if let dot = time.firstIndex(of: ".") {
                let digits = time[time.index(after: dot)...]
                guard digits.count == 3, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(digits) else { return nil }
                fraction = value
                time = time[..<dot]
            }
            let clock = time.split(separator: ":", omittingEmptySubsequences: false)
            guard (2...3).contains(clock.count), clock.allSatisfy({ $0.count == 2 && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
                let h = Int(clock[0]), let m = Int(clock[1]), h < 24, m < 60
            else { return nil }
            let s = clock.count == 3 ? Int(clock[2]) ?? 60 : 0
            guard s < 60 else { return nil }
            (hour, minute, second) = (h, m, s)
            milliseconds = fraction
        }
        var value = tm()
        value.tm_year = Int32(year - 1900)
        value.tm_mon = Int32(month - 1)
        value.tm_mday = Int32(day)
        value.tm_hour = Int32(hour)
        value.tm_min = Int32(minute)
        value.tm_sec = Int32(second)
        if end && parts.count == 1 {
            // The end of the day, month or year named: the start of the next one.
            switch fields.count {
            case 1: value.tm_year += 1
            case 2: value.tm_mon += 1
            default: value.tm_mday += 1
            }
        }
        return Timestamp(milliseconds: Int64(timegm(&value)) * 1000 + Int64(milliseconds))
    }
}
