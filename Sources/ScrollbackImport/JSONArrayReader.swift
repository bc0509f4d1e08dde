import Foundation

/// Reads a JSON array one element at a time from a file read forward in chunks
/// (`FileReader`), so that a large export is never parsed (or held) whole: each element is
/// found by scanning bytes (strings and escapes respected) and parsed on its own, and only
/// it is kept in memory.
struct JSONArrayReader {
    let path: String
    private let file: FileReader
    /// The file offset of the next byte to read.
    private var offset: Int
    private(set) var count = 0
    /// True when the array is the `conversations` member of an object around it.
    private(set) var wrapped = false

    /// - Throws: `ImportError` when the file cannot be read, is empty, or is not a JSON array.
    init(path: String) throws {
        self.path = path
        file = try FileReader(path: path)
        offset = 0
        // A UTF-8 byte order mark is allowed at the start.
        if try file.byte(at: 0) == 0xEF, try file.byte(at: 1) == 0xBB, try file.byte(at: 2) == 0xBF { offset = 3 }
        try skipWhitespace()
        guard let first = try file.byte(at: offset) else { throw ImportError(path: path, problem: "the file is empty") }
        if first == UInt8(ascii: "{"), let start = try Self.topLevelArray("conversations", in: file, objectAt: offset) {
            // `{"conversations": [ … ], …}`: read the array inside.
            offset = start
            wrapped = true
        }
        guard try file.byte(at: offset) == UInt8(ascii: "[") else {
            throw ImportError(path: path, problem: "not a JSON array of conversations", location: "byte \(offset + 1)")
        }
        offset += 1
    }

    /// Where the top-level object's member `name` begins, when it is an array, for the object
    /// at `start` of `file`: found by scanning, however far in, keeping a chunk in memory.
    static func topLevelArray(_ name: String, in file: FileReader, objectAt start: Int) throws -> Int? {
        let wanted = Array(name.utf8)
        var index = start + 1
        var depth = 1
        var inString = false
        var escaped = false
        var key: [UInt8] = []
        while let value = try file.byte(at: index) {
            if inString {
                if escaped {
                    escaped = false
                } else if value == 0x5C {
                    escaped = true
                } else if value == 0x22 {
                    inString = false
                    if depth == 1 && key == wanted {
                        var next = index + 1
                        while let byte = try file.byte(at: next), isWhitespace(byte) { next += 1 }
                        guard try file.byte(at: next) == UInt8(ascii: ":") else { index += 1; continue }
                        next += 1
                        while let byte = try file.byte(at: next), isWhitespace(byte) { next += 1 }
                        return try file.byte(at: next) == UInt8(ascii: "[") ? next : nil
                    }
                }
                // Only a short key is kept: none longer can be the one looked for.
                if inString, key.count <= wanted.count { key.append(value) }
            } else {
                switch value {
                case 0x22:
                    inString = true
                    key = []
                case 0x7B, 0x5B: depth += 1
                case 0x7D, 0x5D:
                    depth -= 1
                    if depth == 0 { return nil }
                default: break
                }
                // Bytes behind are not needed again (a long member before the array).
                if index - file.base > FileReader.chunk { file.discard(before: index) }
            }
            index += 1
        }
        return nil
    }

    /// Where the file's top-level object starts (after a byte order mark and blanks), or nil
    /// when it does not start with one.
    static func objectStart(in file: FileReader) throws -> Int? {
        var at = 0
        while let byte = try file.byte(at: at), isWhitespace(byte) || byte == 0xEF || byte == 0xBB || byte == 0xBF { at += 1 }
        return try file.byte(at: at) == UInt8(ascii: "{") ? at : nil
    }

    /// The file's size when it was opened, and how far it has been read.
    var size: Int { file.size }
    var position: Int { offset }
    /// Bytes held in memory now (for tests of the reader's memory).
    var buffered: Int { file.buffer.count }

    /// Whether the file whose first bytes are `head` holds a JSON array: it starts with one
    /// (after whitespace), or with an object that has a `conversations` array, found
    /// however far into the file that member is.
    static func holdsArray(path: String, head: Data) -> Bool {
        switch head.first(where: { !(isWhitespace($0) || $0 == 0xEF || $0 == 0xBB || $0 == 0xBF) }) {
        case UInt8(ascii: "["): return true
        case UInt8(ascii: "{"): return (try? JSONArrayReader(path: path))?.wrapped == true
        // Only blanks in the first bytes: the reader looks further.
        case nil: return (try? JSONArrayReader(path: path)) != nil
        default: return false
        }
    }

    /// The next element as a JSON object, or nil at the end of the array.
    ///
    /// - Throws: `SkipReason` for an element that is not UTF-8 or not valid JSON (reading
    ///   can go on after it); `ImportError` when the array itself is broken.
    mutating func next() throws -> Any? {
        guard let range = try nextRange() else { return nil }
        let at = file.base + range.lowerBound + 1
        let slice = file.buffer.withUnsafeBufferPointer { Data(buffer: UnsafeBufferPointer(rebasing: $0[range])) }
        guard String(data: slice, encoding: .utf8) != nil else {
            throw SkipReason("not UTF-8 text (the record at byte \(at))")
        }
        do {
            return try JSONSerialization.jsonObject(with: slice, options: [.fragmentsAllowed])
        } catch {
            throw SkipReason("malformed JSON, such as a lone surrogate \\ud800 (the record at byte \(at))")
        }
    }

    /// Calls `body` with a scanner over the bytes read, for reading in place the record whose
    /// range `nextRange` returned last.
    func withScanner<T>(_ body: (JSONScanner) throws -> T) rethrows -> T {
        try file.buffer.withUnsafeBytes { try body(JSONScanner(bytes: $0, origin: file.base)) }
    }

    /// Where the next element is among the bytes read (its bounds found by scanning, not
    /// parsed; for `withScanner`, until the next call), or nil at the end of the array.
    ///
    /// - Throws: `ImportError` when the array itself is broken, or the file ends early.
    mutating func nextRange() throws -> Range<Int>? {
        // The records before are done with.
        if offset - file.base >= FileReader.chunk { file.discard(before: offset) }
        try skipWhitespace()
        guard let first = try file.byte(at: offset) else { throw truncated() }
        if first == UInt8(ascii: "]") {
            offset += 1
            try skipWhitespace()
            // After a wrapped array, the rest of the object (other members) is not read.
            if try file.byte(at: offset) != nil && !wrapped {
                throw ImportError(path: path, problem: "unexpected text after the array", location: "byte \(offset + 1)")
            }
            try file.checkUnchanged()
            return nil
        }
        if count > 0 {
            guard first == UInt8(ascii: ",") else {
                throw ImportError(path: path, problem: "malformed JSON: expected , or ]", location: "byte \(offset + 1)")
            }
            offset += 1
            try skipWhitespace()
        }
        let start = offset
        var depth = 0
        var inString = false
        var escaped = false
        var done = false
        // Scanned through a raw pointer (byte by byte through a subscript is several times
        // slower on a large export), reading on whenever the record goes past the bytes read.
        var position = offset - file.base
        while !done {
            if position >= file.buffer.count {
                guard try file.fill() else { throw truncated() }
            }
            file.buffer.withUnsafeBufferPointer { bytes in
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
                            done = true
                            break scan
                        }
                        depth -= 1
                        if depth == 0 {
                            done = true
                            break scan
                        }
                    case 0x2C:  // ,
                        if depth == 0 {
                            position -= 1
                            done = true
                            break scan
                        }
                    default: break
                    }
                }
            }
        }
        offset = file.base + position
        // The record's bounds are known: a bad record is skipped and reading goes on.
        count += 1
        return (start - file.base)..<(offset - file.base)
    }

    private func truncated() -> ImportError {
        if file.end < file.size { return file.endedEarly(at: file.end) }
        return ImportError(path: path, problem: "truncated JSON: the file ends inside the array", location: "byte \(file.end)")
    }

    /// Moves past whitespace, however much: what it skips is not kept (a file of gigabytes of
    /// spaces between records costs a chunk of memory, not its size).
    private mutating func skipWhitespace() throws {
        while true {
            if offset >= file.end {
                file.discard(before: offset)
                guard try file.fill() else { return }
            }
            let base = file.base
            let next = file.buffer.withUnsafeBufferPointer { bytes in
                var index = max(0, offset - base)
                while index < bytes.count, Self.isWhitespace(bytes[index]) { index += 1 }
                return base + index
            }
            offset = next
            if offset < file.end { return }
        }
    }

    static func isWhitespace(_ value: UInt8) -> Bool {
        value == 0x20 || value == 0x0A || value == 0x0D || value == 0x09
    }
}
