import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackImport

/// The queue between the thread that parses an export and the one that stores it.
@Suite("Import: the reading thread")
struct RecordReaderTests {
    static func record(_ index: Int, text: String = "") -> ReadRecord {
        let conversation = ImportedConversation(
            source: "test", sourceID: "\(index)", title: "t\(index)", model: nil, createdAt: Timestamp(milliseconds: 0),
            updatedAt: Timestamp(milliseconds: 0), messages: [ImportedMessage(role: .user, content: text, createdAt: Timestamp(milliseconds: 0))])
        return ReadRecord(conversation: .success(conversation), name: "record \(index)", records: index, bytesDone: index, bytesTotal: 1_000)
    }

    /// What the reading thread did, for the test's thread to look at.
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var delivered = 0
        private var mostAhead = 0
        private var taken = 0
        let stopped = DispatchSemaphore(value: 0)
        func deliver(_ accepted: Bool) {
            lock.withLock {
                if accepted { delivered += 1 }
                mostAhead = max(mostAhead, delivered - taken)
            }
        }
        func take() { lock.withLock { taken += 1 } }
        var counts: (delivered: Int, mostAhead: Int) { lock.withLock { (delivered, mostAhead) } }
    }

    @Test("records come in order, and the reading thread waits when a few megabytes are ahead")
    func orderAndBound() throws {
        let log = Log()
        // Each record weighs about 100 kB: at most a few dozen fit in a 2 MB queue.
        let reader = RecordReader(capacity: 2 << 20) { deliver in
            for index in 0..<500 { log.deliver(deliver(Self.record(index, text: String(repeating: "x", count: 100_000)))) }
            log.stopped.signal()
        }
        var names: [String] = []
        while let record = try reader.next() {
            log.take()
            names.append(record.name)
        }
        #expect(names == (0..<500).map { "record \($0)" })
        #expect(log.stopped.wait(timeout: .now() + 600) == .success)
        #expect(log.counts.delivered == 500)
        #expect(log.counts.mostAhead <= 2 << 20 / 100_000 + 2)
    }

    @Test("cancel stops the reading thread at its next record")
    func cancelStops() throws {
        let log = Log()
        let reader = RecordReader(capacity: 1 << 20) { deliver in
            for index in 0..<1_000_000 {
                guard deliver(Self.record(index, text: String(repeating: "y", count: 10_000))) else { break }
                log.deliver(true)
            }
            log.stopped.signal()
        }
        for _ in 0..<3 { _ = try reader.next() }
        reader.cancel()
        #expect(log.stopped.wait(timeout: .now() + 600) == .success)
        #expect(log.counts.delivered < 1_000)
    }

    @Test("an error of the reading thread reaches the taker after the records before it")
    func errorAfterRecords() throws {
        let reader = RecordReader { deliver in
            _ = deliver(Self.record(0))
            _ = deliver(Self.record(1))
            throw ImportError(path: "x.json", problem: "the file ends early")
        }
        #expect(try reader.next()?.name == "record 0")
        #expect(try reader.next()?.name == "record 1")
        #expect(throws: ImportError(path: "x.json", problem: "the file ends early")) { try reader.next() }
    }
}
