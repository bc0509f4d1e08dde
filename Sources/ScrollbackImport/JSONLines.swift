import Foundation

enum JSONLines {
    /// Thrown by a `forEachLine` body to end the walk early.
    struct Stop: Error {}

    /// Calls `body` with each non-empty line of a memory-mapped file (nil when the line is
    /// not UTF-8), its 1-based number, the bytes read so far and the file's size.
    static func forEachLine(path: String, _ body: (Data?, Int, Int, Int) throws -> Void) throws {
        let data = try mappedContents(of: path)
        var start = data.startIndex
        var number = 0
        while start < data.endIndex {
            let end = data[start...].firstIndex(of: 0x0A) ?? data.endIndex
            number += 1
            let line = data[start..<end]
            if !line.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) {
                let text = String(data: line, encoding: .utf8) != nil ? Data(line) : nil
                do {
                    try body(text, number, end - data.startIndex, data.count)
                } catch is Stop {
                    return
                }
            }
            start = end < data.endIndex ? data.index(after: end) : end
        }
    }
}
