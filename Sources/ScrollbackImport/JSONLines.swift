import Foundation

enum JSONLines {
    /// Calls `body` with each non-empty line of a memory-mapped file, its 1-based number,
    /// the bytes read so far and the file's size.
    static func forEachLine(path: String, _ body: (Data, Int, Int, Int) throws -> Void) throws {
        let data = try mappedContents(of: path)
        var start = data.startIndex
        var number = 0
        while start < data.endIndex {
            let end = data[start...].firstIndex(of: 0x0A) ?? data.endIndex
            number += 1
            let line = data[start..<end]
            if !line.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) {
                guard String(data: line, encoding: .utf8) != nil else {
                    throw ImportError(path: path, problem: "not UTF-8 text", location: "line \(number)")
                }
                try body(Data(line), number, end - data.startIndex, data.count)
            }
            start = end < data.endIndex ? data.index(after: end) : end
        }
    }
}
