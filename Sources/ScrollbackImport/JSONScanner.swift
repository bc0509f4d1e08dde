import Foundation

/// Walks JSON text in place (a record among the bytes read) without building objects: finds where
/// values start and end, lists an object's members, and decodes the few strings and numbers
/// a reader asks for. Used where parsing a whole record would cost many times its size.
struct JSONScanner {
    let bytes: UnsafeRawBufferPointer
    /// The file offset of `bytes`' first byte, for saying where in the file something is.
    var origin = 0

    /// The 1-based position in the file of `bytes[index]`.
    func fileByte(_ index: Int) -> Int { origin + index + 1 }

    struct Malformed: Error {
        let offset: Int
    }

    func isWhitespace(_ value: UInt8) -> Bool { value == 0x20 || value == 0x0A || value == 0x0D || value == 0x09 }

    func skipWhitespace(_ index: Int) -> Int {
        var index = index
        while index < bytes.count, isWhitespace(bytes[index]) { index += 1 }
        return index
    }

    /// The index just after the string that starts (with its quote) at `index`, and whether
    /// it holds an escape.
    func stringEnd(_ index: Int) throws(Malformed) -> (end: Int, escaped: Bool) {
        var position = index + 1
        var escaped = false
        while position < bytes.count {
            let value = bytes[position]
            if value == 0x5C {
                escaped = true
                position += 2
                continue
            }
            if value == 0x22 { return (position + 1, escaped) }
            position += 1
        }
        throw Malformed(offset: index)
    }

    /// The index just after the value that starts at `index` (whitespace skipped first).
    func valueEnd(_ index: Int) throws(Malformed) -> Int {
        let start = skipWhitespace(index)
        guard start < bytes.count else { throw Malformed(offset: start) }
        switch bytes[start] {
        case 0x22:
            return try stringEnd(start).end
        case 0x7B, 0x5B:  // { [
            var depth = 0
            var position = start
            while position < bytes.count {
                let value = bytes[position]
                if value == 0x22 {
                    position = try stringEnd(position).end
                    continue
                }
                if value == 0x7B || value == 0x5B {
                    depth += 1
                } else if value == 0x7D || value == 0x5D {
                    depth -= 1
                    if depth == 0 { return position + 1 }
                }
                position += 1
            }
            throw Malformed(offset: start)
        default:
            // A number, true, false or null: up to the next delimiter.
            var position = start
            while position < bytes.count {
                let value = bytes[position]
                if value == 0x2C || value == 0x7D || value == 0x5D || isWhitespace(value) { break }
                position += 1
            }
            guard position > start else { throw Malformed(offset: start) }
            return position
        }
    }

    /// Calls `body` with each member of the object at `range` (its key, and its value's
    /// range without surrounding whitespace).
    func forEachMember(of range: Range<Int>, _ body: (String, Range<Int>) throws -> Void) throws {
        var index = skipWhitespace(range.lowerBound)
        guard index < range.upperBound, bytes[index] == 0x7B else { throw Malformed(offset: index) }
        index = skipWhitespace(index + 1)
        if index < range.upperBound, bytes[index] == 0x7D { return }
        while index < range.upperBound {
            guard bytes[index] == 0x22 else { throw Malformed(offset: index) }
            let keyEnd = try stringEnd(index).end
            guard let key = string(index..<keyEnd) else { throw Malformed(offset: index) }
            index = skipWhitespace(keyEnd)
            guard index < range.upperBound, bytes[index] == 0x3A else { throw Malformed(offset: index) }
            let valueStart = skipWhitespace(index + 1)
            let valueEnd = try valueEnd(valueStart)
            guard valueEnd <= range.upperBound else { throw Malformed(offset: valueStart) }
            try body(key, valueStart..<valueEnd)
            index = skipWhitespace(valueEnd)
            guard index < range.upperBound else { break }
            if bytes[index] == 0x7D { return }
            guard bytes[index] == 0x2C else { throw Malformed(offset: index) }
            index = skipWhitespace(index + 1)
        }
        throw Malformed(offset: range.lowerBound)
    }

    /// Whether the value at `range` is an object.
    func isObject(_ range: Range<Int>) -> Bool { !range.isEmpty && bytes[range.lowerBound] == 0x7B }

    /// Whether the value at `range` is an array with no elements.
    func isEmptyArray(_ range: Range<Int>) -> Bool {
        guard !range.isEmpty, bytes[range.lowerBound] == 0x5B else { return false }
        let next = skipWhitespace(range.lowerBound + 1)
        return next < range.upperBound && bytes[next] == 0x5D
    }

    /// The string at `range` (quotes included), or nil when the value is not a string or not
    /// valid (bad UTF-8, a lone surrogate).
    func string(_ range: Range<Int>) -> String? {
        guard range.count >= 2, bytes[range.lowerBound] == 0x22, bytes[range.upperBound - 1] == 0x22 else { return nil }
        let inner = UnsafeRawBufferPointer(rebasing: bytes[(range.lowerBound + 1)..<(range.upperBound - 1)])
        if !inner.contains(0x5C) {
            return String(validating: inner, as: UTF8.self)
        }
        return (try? JSONSerialization.jsonObject(with: data(range), options: [.fragmentsAllowed])) as? String
    }

    /// Whether the value at `range` is JSON's `null`.
    func isNull(_ range: Range<Int>) -> Bool {
        range.count == 4 && bytes[range.lowerBound] == 0x6E  // n(ull): the scanner checked the word
    }

    /// The number at `range`, or nil when the value is not a number.
    func number(_ range: Range<Int>) -> Double? {
        guard let first = range.first.map({ bytes[$0] }), first == 0x2D || (0x30...0x39).contains(first) else { return nil }
        guard let text = String(validating: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self) else { return nil }
        return Double(text)
    }

    /// A copy of the bytes at `range`.
    func data(_ range: Range<Int>) -> Data {
        Data(UnsafeRawBufferPointer(rebasing: bytes[range]))
    }
}
