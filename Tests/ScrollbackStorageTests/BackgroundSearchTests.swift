import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

@Suite("Background search jobs")
struct BackgroundSearchTests {
    @Test("cancel racing the end of a search never touches a closed connection (run under TSan/ASan too)")
    func cancelAgainstCompletion() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        let store = try Store.open(path: path)
        for index in 0..<40 {
            try store.addConversation(title: "title \(index)", createdAt: Int64(index), messages: ["needle \(index) haystack"])
        }
        let runner = BackgroundSearchRunner(path: path)
        var finished = 0
        for round in 0..<200 {
            let job = runner.start("needle", limit: 10)
            // Cancel at a different moment each round: before, during and after the query.
            if round % 4 != 0 { usleep(UInt32(round % 7) * 150) }
            job.cancel()
            while job.result == nil { usleep(200) }
            if case .success(let page) = job.result { finished += page.items.isEmpty ? 0 : 1 }
        }
        // Some searches finished before their cancel arrived, the rest were interrupted; the
        // proof is that none crashed or hung, and that the runner still works.
        _ = finished
        let job = runner.start("needle", limit: 10)
        while job.result == nil { usleep(200) }
        #expect(try job.result?.get().items.count == 10)
    }
}
