import Foundation
import ScrollbackModel

/// A coding agent's session file, read from an offset to its last whole line: the agent may
/// be writing it now, so a last line without its newline waits for it (unless it is a whole
/// JSON value already: a finished file whose last line has no newline).
struct SessionFile {
    /// One line: its bytes (without the newline) and where it starts in the file.
    struct Line {
        var bytes: Data
        var offset: Int
    }

    /// The file as it was when read: what tells a later import whether it only grew.
    struct Fingerprint: Equatable, Sendable {
        var device: Int64
        var inode: Int64
        var size: Int64
        var modifiedNanoseconds: Int64
    }

    /// The bytes of the window before an offset that a later read checks: 4 KiB.
    static let window = 4_096

    /// The file's device, inode, size and modification time, by `stat` (nothing is opened).
    static func fingerprint(_ path: String) throws -> Fingerprint {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw ImportError(path: path, problem: "cannot read it (\(String(cString: strerror(errno))))")
        }
        guard status.st_mode & S_IFMT == S_IFREG else { throw ImportError(path: path, problem: "not a regular file") }
        let seconds = Int64(status.st_mtim.tv_sec), nanoseconds = Int64(status.st_mtim.tv_nsec)
        return Fingerprint(
            device: Int64(truncatingIfNeeded: status.st_dev), inode: Int64(truncatingIfNeeded: status.st_ino),
            size: Int64(status.st_size), modifiedNanoseconds: seconds.multipliedReportingOverflow(by: 1_000_000_000).partialValue &+ nanoseconds)
    }

    /// A 64-bit FNV-1a hash of the `window` bytes before `offset` (fewer at the start of the
    /// file): that they are the same says the file was not rewritten before that point.
    static func windowHash(_ path: String, before offset: Int) throws -> [UInt8] {
        guard offset > 0 else { return [] }
        guard let handle = FileHandle(forReadingAtPath: path) else { throw ImportError(path: path, problem: "cannot read the file") }
        defer { try? handle.close() }
        let start = max(0, offset - window)
        try handle.seek(toOffset: UInt64(start))
        let bytes = try handle.read(upToCount: offset - start) ?? Data()
        guard bytes.count == offset - start else { return [] }
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return withUnsafeBytes(of: hash.bigEndian) { Array($0) }
    }

    /// The whole lines from `offset` on, and the offset after the last one read. Read in
    /// chunks; lines longer than `longestLine` are refused (a file with no line breaks).
    static func lines(_ path: String, from offset: Int, longestLine: Int = 512 << 20, _ body: (Line) throws -> Void) throws -> Int {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw ImportError(path: path, problem: "cannot read the file") }
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(max(offset, 0)))
        var pending = Data()
        var pendingStart = max(offset, 0)
        var readTo = max(offset, 0)
        while true {
            let chunk = try handle.read(upToCount: 1 << 20) ?? Data()
            if chunk.isEmpty { break }
            pending.append(chunk)
            var lineStart = pending.startIndex
            while let newline = pending[lineStart...].firstIndex(of: 0x0A) {
                let line = pending[lineStart..<newline]
                let at = pendingStart + (lineStart - pending.startIndex)
                if !line.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { try body(Line(bytes: Data(line), offset: at)) }
                lineStart = newline + 1
                readTo = pendingStart + (lineStart - pending.startIndex)
            }
            let consumed = lineStart - pending.startIndex
            pending = Data(pending[lineStart...])
            pendingStart += consumed
            if pending.count > longestLine {
                throw ImportError(path: path, problem: "a line longer than \(longestLine >> 20) MiB at byte \(pendingStart): not a session file")
            }
        }
        // A last line without its newline: taken when it is whole JSON, else it waits.
        if !pending.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }),
            (try? JSONSerialization.jsonObject(with: pending)) != nil
        {
            try body(Line(bytes: pending, offset: pendingStart))
            readTo = pendingStart + pending.count
        }
        return readTo
    }
}

/// Reads session files on a thread of its own, at most two ahead of the one taking them.
final class SessionPrefetch: @unchecked Sendable {
    private let condition = NSCondition()
    private var results: [Int: Result<Importer.SessionRead, any Error>] = [:]
    private var taken = 0
    private var cancelled = false

    init(_ plans: [Importer.SessionPlan]) {
        Thread.detachNewThread { [self] in
            for (index, plan) in plans.enumerated() {
                condition.lock()
                while index - taken >= 2 && !cancelled { condition.wait() }
                let stop = cancelled
                condition.unlock()
                if stop { return }
                let read = Result { try Importer.readSession(plan) }
                condition.lock()
                results[index] = read
                condition.broadcast()
                condition.unlock()
            }
        }
    }

    /// The read of plan `index` (in order), waiting for it.
    func take(_ index: Int) -> Result<Importer.SessionRead, any Error> {
        condition.lock()
        defer { condition.unlock() }
        while results[index] == nil { condition.wait() }
        let read = results.removeValue(forKey: index) ?? .failure(ImportError(path: "", problem: "not read"))
        taken = index + 1
        condition.broadcast()
        return read
    }

    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }
}
