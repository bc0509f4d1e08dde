import Foundation

enum JSONLines {
    /// Thrown by a `forEachLine` body to end the walk early.
    struct Stop: Error {}
    /// Thrown by `forEachLine` when a line is longer than it was told to read.
    struct TooLong: Error {}

    /// Calls `body` with each non-empty line of a file (nil when the line is not UTF-8), its
    /// 1-based number, the bytes read so far and the file's size.
    ///
    /// The file is read forward in chunks (`FileReader`), never memory-mapped: memory holds one
    /// line and a chunk, not the file. The bytes the file held when it was opened are read;
    /// any added since are not.
    ///
    /// - Throws: `ImportError` when the file cannot be read, or ends before that size
    ///   (another program shortened it while it was read).
    ///
    /// - Parameter longestLine: a line longer than this ends the walk with `TooLong` (for
    ///   recognizing a format by its first lines without holding a file with no line breaks).
    static func forEachLine(path: String, longestLine: Int = .max, _ body: (Data?, Int, Int, Int) throws -> Void) throws {
        let file = try FileReader(path: path)
        var start = 0
        var number = 0
        while start < file.size {
            let end = try lineEnd(from: start, in: file, longest: longestLine)
            number += 1
            let line = file.buffer.withUnsafeBufferPointer { bytes in
                Data(buffer: UnsafeBufferPointer(rebasing: bytes[(start - file.base)..<(end - file.base)]))
            }
            if !line.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) {
                let text = String(data: line, encoding: .utf8) != nil ? line : nil
                do {
                    try body(text, number, end, file.size)
                } catch is Stop {
                    return
                }
            }
            start = end + 1
        }
        try file.checkUnchanged()
    }

    /// The file offset of the newline that ends the line starting at `start`, or the file's
    /// size when its last line has none; the whole line is in `file.buffer` on return.
    private static func lineEnd(from start: Int, in file: FileReader, longest: Int) throws -> Int {
        // Where the search for the newline goes on from: the bytes before hold none.
        var searched = start
        while true {
            let limit = min(file.end, file.size)
            if searched < limit {
                let found = file.buffer.withUnsafeBytes { bytes -> Int? in
                    guard let base = bytes.baseAddress, let hit = memchr(base + (searched - file.base), 0x0A, limit - searched) else {
                        return nil
                    }
                    return file.base + base.distance(to: UnsafeRawPointer(hit))
                }
                if let found { return found }
            }
            if limit >= file.size { return file.size }
            if limit - start > longest { throw TooLong() }
            searched = limit
            // The lines before are done with: the buffer holds this line and a chunk.
            file.discard(before: start)
            guard try file.fill() else { throw file.endedEarly(at: file.end) }
        }
    }
}
