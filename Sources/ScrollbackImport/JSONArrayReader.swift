import Foundation

/// Reads a JSON array one element at a time from a memory-mapped file, so that a large
/// export never has to be parsed (or held as objects) whole: each element is found by
/// scanning bytes (strings and escapes respected) and parsed on its own.
struct JSONArrayReader {
    let path: String
    private let data: Data
    private var offset: Int
    private(set) var count = 0
    /// True when the array is the `conversations` member of an object around it.
    private(set) var wrapped = false

    /// - Throws: `ImportError` when the file cannot be read, is empty, or is not a JSON array.
    init(path: String) throws {
        self.path = path
        data = try mappedContents(of: path)
        // A UTF-8 byte order mark is allowed at the start.
        offset = data.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        skipWhitespace()
        guard offset < data.count else { throw ImportError(path: path, problem: "the file is empty") }
        if data[data.startIndex + offset] == UInt8(ascii: "{"), let start = Self.conversationsArray(in: data, from: offset) {
            // `{"conversations": [ … ], …}`: read the array inside.
            offset = start
            wrapped = true
        }
        guard data[data.startIndex + offset] == UInt8(ascii: "[") else {
            throw ImportError(path: path, problem: "not a JSON array of conversations", location: "byte \(offset + 1)")
        }
        offset += 1
    }

    /// Where the `conversations` array of the top-level object at `start` begins, if it has one.
    static func conversationsArray(in data: Data, from start: Int) -> Int? {
        let key = Array("\"conversations\"".utf8)
        return data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Int? in
            let bytes = raw.bindMemory(to: UInt8.self)
            var index = start + 1
            var depth = 1
            var inString = false
            var escaped = false
            var stringStart = 0
            while index < bytes.count {
                let value = bytes[index]
                if inString {
                    if escaped { escaped = false } else if value == 0x5C { escaped = true } else if value == 0x22 {
                        inString = false
                        if depth == 1 && index + 1 - stringStart == key.count
                            && bytes[stringStart...index].elementsEqual(key)
                        {
                            var next = index + 1
                            while next < bytes.count, isWhitespace(bytes[next]) { next += 1 }
                            guard next < bytes.count, bytes[next] == UInt8(ascii: ":") else { index += 1; continue }
                            next += 1
                            while next < bytes.count, isWhitespace(bytes[next]) { next += 1 }
                            return next < bytes.count && bytes[next] == UInt8(ascii: "[") ? next : nil
                        }
                    }
                } else {
                    switch value {
                    case 0x22:
                        inString = true
                        stringStart = index
                    case 0x7B, 0x5B: depth += 1
                    case 0x7D, 0x5D:
                        depth -= 1
                        if depth == 0 { return nil }
                    default: break
                    }
                }
                index += 1
            }
            return nil
        }
    }

    var size: Int { data.count }
    var position: Int { offset }

    /// Whether the file starts with a JSON array (after whitespace).
    static func startsWithArray(_ data: Data) -> Bool {
        let first = data.drop { isWhitespace($0) || $0 == 0xEF || $0 == 0xBB || $0 == 0xBF }
        if first.first == UInt8(ascii: "[") { return true }
        // Or an object wrapping the array as `conversations`.
        return first.first == UInt8(ascii: "{") && conversationsArray(in: Data(first), from: 0) != nil
    }

    /// The next element as a JSON object, or nil at the end of the array.
    ///
    /// - Throws: `SkipReason` for an element that is not UTF-8 or not valid JSON (reading
    ///   can go on after it); `ImportError` when the array itself is broken.
    mutating func next() throws -> Any? {
        guard let range = try nextRange() else { return nil }
        let slice = data.subdata(in: (data.startIndex + range.lowerBound)..<(data.startIndex + range.upperBound))
        guard String(data: slice, encoding: .utf8) != nil else {
            throw SkipReason("not UTF-8 text (the record at byte \(range.lowerBound + 1))")
        }
        do {
            return try JSONSerialization.jsonObject(with: slice, options: [.fragmentsAllowed])
        } catch {
            throw SkipReason("malformed JSON, such as a lone surrogate \\ud800 (the record at byte \(range.lowerBound + 1))")
        }
    }

    /// Calls `body` with a scanner over the whole file, for reading a record in place.
    func withScanner<T>(_ body: (JSONScanner) throws -> T) rethrows -> T {
        try data.withUnsafeBytes { try body(JSONScanner(bytes: $0)) }
    }

    /// Where the next element is in the file (its bounds found by scanning, not parsed), or
    /// nil at the end of the array.
    ///
    /// - Throws: `ImportError` when the array itself is broken.
    mutating func nextRange() throws -> Range<Int>? {
        skipWhitespace()
        guard offset < data.count else { throw truncated() }
        if byte(offset) == UInt8(ascii: "]") {
            offset += 1
            skipWhitespace()
            // After a wrapped array, the rest of the object (other members) is not read.
            if offset < data.count && !wrapped {
                throw ImportError(path: path, problem: "unexpected text after the array", location: "byte \(offset + 1)")
            }
            return nil
        }
        if count > 0 {
            guard byte(offset) == UInt8(ascii: ",") else {
                throw ImportError(path: path, problem: "malformed JSON: expected , or ]", location: "byte \(offset + 1)")
            }
            offset += 1
            skipWhitespace()
        }
        let start = offset
        var depth = 0
        var inString = false
        var escaped = false
        // Scanned through a raw pointer: byte by byte through Data's subscript is several
        // times slower on a large export.
        var position = offset
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let bytes = raw.bindMemory(to: UInt8.self)
            let end = bytes.count
            scan: while position < end {
                let value = bytes[position]
                position += 1
                if inString {
                    if escaped {
                        escaped = false
                    } else if value == 0x5C {  // backslash
                        escaped = true
                    } else if value == 0x22 {  // quote
                        inString = false
                    }
                    continue
                }
                switch value {
                case 0x22: inString = true
                case 0x7B, 0x5B: depth += 1  // { [
                case 0x7D, 0x5D:  // } ]
                    if depth == 0 {
                        // The end of the array after a bare value.
                        position -= 1
                        break scan
                    }
                    depth -= 1
                    if depth == 0 { break scan }
                case 0x2C:  // ,
                    if depth == 0 {
                        position -= 1
                        break scan
                    }
                default: break
                }
            }
        }
        offset = position
        guard depth == 0, !inString else { throw truncated() }
        // The record's bounds are known: a bad record is skipped and reading goes on.
        count += 1
        return start..<offset
    }

    private func truncated() -> ImportError {
        ImportError(path: path, problem: "truncated JSON: the file ends inside the array", location: "byte \(data.count)")
    }

    private func byte(_ index: Int) -> UInt8 { data[data.startIndex + index] }

    private mutating func skipWhitespace() {
        while offset < data.count && Self.isWhitespace(byte(offset)) { offset += 1 }
    }

    static func isWhitespace(_ value: UInt8) -> Bool {
        value == 0x20 || value == 0x0A || value == 0x0D || value == 0x09
    }
}
