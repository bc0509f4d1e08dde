import ScrollbackModel
import ScrollbackStorage

/// The page tokens the CLI prints (`more: … --after TOKEN`): a storage cursor with a check
/// of the database it came from and of the query that made it (command, order, filter,
/// search words), so that a token pasted into another query or against another database is
/// refused instead of quietly showing a page of something else.
///
/// Form: `CURSOR.DDDDDDDDQQQQQQQQ`, the two checks in hex (FNV-1a, the same on every run).
struct PageToken {
    /// What the token is bound to.
    struct Scope {
        let databaseID: String
        let query: String
    }

    static func make(_ cursor: Cursor, scope: Scope) -> String {
        // The second check covers the cursor too: an edited token is refused, not followed.
        cursor.token + "." + hex(check(scope.databaseID)) + hex(check(scope.query + "\u{1F}" + cursor.token))
    }

    /// The cursor in `text`, when it was made for this database and query.
    static func cursor(from text: String, option: String, scope: Scope) throws -> Cursor {
        let start = "run the command without \(option) to start from the first page"
        guard let dot = text.lastIndex(of: "."), text.distance(from: dot, to: text.endIndex) == 17 else {
            throw UsageError(message: "\(option): '\(OutputFormat.line(String(text.prefix(40))))' is not a page token printed by this version of scrollback; \(start)", command: nil)
        }
        let checks = String(text[text.index(after: dot)...])
        let body = String(text[..<dot])
        guard checks.prefix(8) == hex(check(scope.databaseID)) else {
            throw UsageError(message: "\(option): this page token is from another database, or was changed; \(start)", command: nil)
        }
        guard checks.suffix(8) == hex(check(scope.query + "\u{1F}" + body)) else {
            throw UsageError(
                message: "\(option): this page token is for another query (another order, filter or search), or was changed; \(start)",
                command: nil)
        }
        do {
            return try Cursor(token: body)
        } catch {
            throw UsageError(message: "\(option): '\(OutputFormat.line(String(text.prefix(40))))' is not a page token printed by this version of scrollback; \(start)", command: nil)
        }
    }

    /// 32 bits of FNV-1a 64 of the UTF-8 bytes.
    static func check(_ text: String) -> UInt32 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return UInt32(truncatingIfNeeded: hash ^ (hash >> 32))
    }

    static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}

/// Words for a shell: a command line that works when pasted.
enum ShellWords {
    /// `word` as one shell word: as it is when it is safe, else in single quotes; a
    /// control character as `$'\x1b'`, so that nothing in it acts on a terminal.
    static func quoted(_ word: String) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:@%+=,")
        if !word.isEmpty && word.allSatisfy({ safe.contains($0) }) { return word }
        var result = ""
        var open = false
        for scalar in word.unicodeScalars {
            let value = scalar.value
            let isControl = value < 0x20 || value == 0x7F || (0x80..<0xA0).contains(value)
            if isControl || scalar.properties.generalCategory == .format || scalar.properties.generalCategory == .lineSeparator
                || scalar.properties.generalCategory == .paragraphSeparator
            {
                if open { result += "'"; open = false }
                if value < 0x100 {
                    result += "$'\\x" + (value < 16 ? "0" : "") + String(value, radix: 16) + "'"
                } else {
                    let digits = String(value, radix: 16)
                    let (escape, width) = value > 0xFFFF ? ("U", 8) : ("u", 4)
                    result += "$'\\" + escape + String(repeating: "0", count: width - digits.count) + digits + "'"
                }
                continue
            }
            if scalar == "'" {
                if open { result += "'"; open = false }
                result += "\\'"
                continue
            }
            if !open { result += "'"; open = true }
            result.unicodeScalars.append(scalar)
        }
        if open { result += "'" }
        return result
    }

    static func line(_ words: [String]) -> String { words.map(quoted).joined(separator: " ") }
}
