import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackCLI
@testable import ScrollbackStorage
import TestSupport

@Suite("Search hits with their dates; the browser's position")
struct SearchDateTests {
    @Test("each hit has its date: the message's time, or the conversation's for a title hit; plain and JSON")
    func dates() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["demo", "--count", "40", "--seed", "3"]).status == 0)
        let id = try #require((try runner.json(["list"])["conversations"] as? [[String: Any]])?.first?["id"] as? String)
        #expect(try runner.run(["rename", id, "zebra crossing plan"]).status == 0)
        let json = try runner.json(["search", "zebra"])
        let hits = try #require(json["hits"] as? [[String: Any]])
        let title = try #require(hits.first { $0["message"] == nil || $0["message"] is NSNull })
        let conversation = try #require(title["conversation"] as? [String: Any])
        #expect(title["date"] as? String == conversation["createdAt"] as? String)
        let messageHits = try #require((try runner.json(["search", "the", "--limit", "30"])["hits"] as? [[String: Any]]))
        #expect(!messageHits.isEmpty)
        for hit in messageHits {
            let message = hit["message"] as? [String: Any]
            let expected = (message?["createdAt"] ?? (hit["conversation"] as? [String: Any])?["createdAt"]) as? String
            #expect(hit["date"] as? String == expected)
            #expect((hit["date"] as? String)?.hasSuffix("Z") == true)
        }
        // Plain: the date after the short id, as `list` shows times (the runner's TZ is UTC).
        let plain = try runner.run(["search", "zebra"])
        #expect(plain.status == 0)
        let iso = try #require(conversation["createdAt"] as? String)
        let shown = String(iso.prefix(16)).replacingOccurrences(of: "T", with: " ")
        // A title hit is the title with the match marked, then a line that says so.
        let lines = plain.output.split(separator: "\n")
        #expect(lines.first?.contains("  \(shown)  [zebra] crossing plan") == true, "\(plain.output)")
        #expect(lines.dropFirst().first?.hasPrefix("          title match, ") == true, "\(plain.output)")
        // No note about indexing off a terminal (and none is due here).
        #expect(!plain.error.contains("index"))
    }

    @Test("the note while the index is rebuilt")
    func indexingNote() {
        #expect(SearchCommand.indexingNote(0.376) == "the search index is being rebuilt (37%); results are complete but slower")
        #expect(SearchCommand.indexingNote(1.5) == "the search index is being rebuilt (99%); results are complete but slower")
    }

    @Test("after a sort change far down the list, the footer settles on the exact position")
    func positionArrives() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["demo", "--count", "2000", "--seed", "4"]).status == 0)
        let tmux = try TmuxSession(width: 80, height: 24, arguments: ["--db", runner.databasePath])
        _ = try tmux.waitFor(text: "1 of 2,000")
        for _ in 0..<30 { try tmux.send("PageDown") }
        _ = try tmux.waitFor("the 661st") { BrowserEndToEndTests.footer($0).hasPrefix(" 661 of 2,000") }
        let store = try Store.open(path: runner.databasePath, readOnly: true)
        let selected = try #require(
            try store.conversations.page(sort: .updated, at: .first, limit: 661).items.last)
        let expected = try store.conversations.index(of: selected, sort: .created) + 1
        try tmux.send("s")
        // (The position may be the same in both orders: the header says which is shown.)
        let screen = try tmux.waitFor("the exact position by created") { screen in
            screen[0].contains("by created")
                && (BrowserEndToEndTests.footer(screen).hasPrefix(" Sorted by created")
                    || BrowserEndToEndTests.footer(screen).hasPrefix(" \(Self.grouped(expected)) of 2,000"))
        }
        #expect(screen[0].contains("by created"))
        // The status goes with the next key; the position is exact by then.
        try tmux.send("j")
        _ = try tmux.waitFor("one down") { BrowserEndToEndTests.footer($0).hasPrefix(" \(Self.grouped(expected + 1)) of 2,000") }
        try tmux.send("q")
    }

    static func grouped(_ number: Int) -> String {
        let digits = Array(String(number))
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result += "," }
            result.append(digit)
        }
        return result
    }
}
