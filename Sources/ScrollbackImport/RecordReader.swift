import Foundation
import ScrollbackExport
import ScrollbackModel

/// One record of an export, read and parsed: a conversation, or why it is skipped.
struct ReadRecord: Sendable {
    var conversation: Result<ImportedConversation, SkipReason>
    /// How the record is named in a skip ("record 12", "line 7").
    var name: String
    /// Records read so far, bytes read so far, and the file's size: for progress.
    var records: Int
    var bytesDone: Int
    var bytesTotal: Int
    /// A piece of a file (scrollback's JSON Lines), instead of a conversation.
    var piece: Result<IncomingPiece, SkipReason>? = nil
}

/// A piece of a file's bytes from scrollback's JSON Lines export, checked and decoded.
struct IncomingPiece: Sendable {
    let sha256: String
    let size: Int
    let index: Int
    let count: Int
    let bytes: [UInt8]

    /// The largest file a piece may declare: 1 TiB.
    static let largestFile: Int64 = 1 << 40

    init(line: Data) throws(SkipReason) {
        let piece: FilePiece
        do {
            piece = try JSONDecoder().decode(FilePiece.self, from: line)
        } catch {
            throw SkipReason("not a piece of a file: a field is missing or not of its kind")
        }
        guard piece.format == "scrollback-file", piece.version == 1 else { throw SkipReason("not a version 1 piece of a file") }
        guard FilePiece.isHash(piece.sha256) else { throw SkipReason("a piece's sha256 is not 64 lower-case hexadecimal digits") }
        guard (0...Self.largestFile).contains(piece.size), let size = Int(exactly: piece.size) else {
            throw SkipReason("a piece's file size is not between 0 and 1 TiB")
        }
        guard Int64(piece.count) == FilePiece.count(forSize: piece.size), (0..<piece.count).contains(piece.index) else {
            throw SkipReason("a piece's index or count does not fit its file's size")
        }
        guard let data = Data(base64Encoded: piece.data) else { throw SkipReason("a piece's data is not base64") }
        let expected = min(FilePiece.chunkSize, size - piece.index * FilePiece.chunkSize)
        guard data.count == expected else {
            throw SkipReason("piece \(piece.index + 1) of the file \(piece.sha256.prefix(12)) holds \(data.count) bytes, not \(expected)")
        }
        sha256 = piece.sha256
        self.size = size
        index = piece.index
        count = piece.count
        bytes = Array(data)
    }
}

/// Reads and parses the records of an export on a thread of its own while the caller's
/// thread stores them: parsing is as long as storing, and each runs on its own core.
///
/// At most about `capacity` bytes of parsed records wait, so memory stays bounded however
/// large the export; a record is not held back when it alone is larger.
final class RecordReader: @unchecked Sendable {
    private let condition = NSCondition()
    private var waiting: [ReadRecord] = []
    private var first = 0
    private var waitingBytes = 0
    private var finished = false
    private var failure: (any Error)?
    private var cancelled = false
    private let capacity: Int

    /// Starts `read` on a new thread; it calls its argument with each record, in order, and
    /// stops early when that returns false (the caller has stopped taking them).
    init(capacity: Int = 32 << 20, _ read: @escaping @Sendable (_ deliver: (ReadRecord) -> Bool) throws -> Void) {
        self.capacity = capacity
        Thread.detachNewThread { [self] in
            // Ctrl-C and SIGTERM are the storing thread's to act on, between records (the
            // CLI holds them there); delivered here, they ended the process at once.
            var interrupts = sigset_t()
            sigemptyset(&interrupts)
            sigaddset(&interrupts, SIGINT)
            sigaddset(&interrupts, SIGTERM)
            pthread_sigmask(SIG_BLOCK, &interrupts, nil)
            do {
                try read { self.put($0) }
                finish(nil)
            } catch {
                finish(error)
            }
        }
    }

    /// The next record, waiting for it; nil after the last.
    ///
    /// - Throws: what the reading thread threw (the file cannot be read, the array is broken).
    func next() throws -> ReadRecord? {
        condition.lock()
        defer { condition.unlock() }
        while first == waiting.count && !finished { condition.wait() }
        if first < waiting.count {
            let record = waiting[first]
            first += 1
            waitingBytes -= Self.weight(of: record)
            if first > 1_024 && first * 2 > waiting.count {
                waiting.removeFirst(first)
                first = 0
            }
            condition.broadcast()
            return record
        }
        if let failure { throw failure }
        return nil
    }

    /// Stops the reading thread at its next record; the records not taken are dropped.
    func cancel() {
        condition.lock()
        defer { condition.unlock() }
        cancelled = true
        waiting = []
        first = 0
        waitingBytes = 0
        condition.broadcast()
    }

    private func put(_ record: ReadRecord) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !cancelled && waitingBytes > 0 && waitingBytes + Self.weight(of: record) > capacity { condition.wait() }
        if cancelled { return false }
        waiting.append(record)
        waitingBytes += Self.weight(of: record)
        condition.broadcast()
        return true
    }

    private func finish(_ error: (any Error)?) {
        condition.lock()
        defer { condition.unlock() }
        finished = true
        failure = error
        condition.broadcast()
    }

    /// About the memory a parsed record holds.
    private static func weight(of record: ReadRecord) -> Int {
        if case .success(let piece) = record.piece { return 256 + piece.bytes.count }
        guard case .success(let conversation) = record.conversation else { return 256 }
        // A message's own fields (role, time, ids, its place in the tree, usage) take about
        // 200 bytes besides its text.
        return conversation.messages.reduce(512 + conversation.title.utf8.count) { $0 + 200 + $1.content.utf8.count }
    }
}
