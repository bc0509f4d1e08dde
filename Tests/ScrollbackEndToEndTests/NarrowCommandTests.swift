import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// `--title WORDS` on `list` and `search`: the browser's narrowing by title from the command
/// line, with the same rule, and a `more:` line that pastes back as it is.
@Suite("--title on the command line")
struct NarrowCommandTests {
    static func runner() throws -> BinaryRunner {
        let runner = try BinaryRunner()
        let store = try Store.open(path: runner.databasePath)
        let titles = ["Async Rust in practice", "Trusting the compiler", "rust: async traits", "Café au lait"]
        for index in 0..<40 {
            _ = try store.addConversation(
                title: "\(titles[index % titles.count]) \(index)", createdAt: 1_700_000_000_000 + Int64(index) * 60_000,
                messages: ["about \(titles[index % titles.count].lowercased())"])
        }
        return runner
    }

    @Test("list --title shows the titles that hold every word, as search finds words; --json the same; more: pastes back")
    func list() throws {
        let runner = try Self.runner()
        let result = try runner.run(["list", "--title", "rust async", "--limit", "7"])
        #expect(result.status == 0, "\(result.error)")
        let rows = result.output.split(separator: "\n").dropFirst()
        #expect(rows.count == 7 && rows.allSatisfy { $0.contains("Async Rust") || $0.contains("rust: async") }, "\(result.output)")
        #expect(!result.output.contains("Trusting"))
        let more = try #require(result.error.split(separator: "\n").first { $0.hasPrefix("more: ") })
        #expect(more.contains("--title 'rust async'"), "\(more)")
        let json = try runner.json(["list", "--title", "CAFE", "--limit", "50"])
        let conversations = try #require(json["conversations"] as? [[String: Any]])
        #expect(conversations.count == 10 && conversations.allSatisfy { ($0["title"] as? String)?.hasPrefix("Café au lait") == true })
        // Pasting the more: line (its words, as a shell splits them) gives the next page.
        let words = more.dropFirst("more: ".count).split(separator: " ").map(String.init)
        let tokenIndex = try #require(words.firstIndex(of: "--after"))
        let next = try runner.run(["list", "--sort", "updated", "--limit", "7", "--title", "rust async", "--after", words[tokenIndex + 1]])
        #expect(next.status == 0 && next.output.split(separator: "\n").count == 1 + 7, "\(next.error)")
        // A token of another narrowing is refused.
        let other = try runner.run(["list", "--limit", "7", "--title", "rust", "--after", words[tokenIndex + 1]])
        #expect(other.status != 0)
    }

    @Test("search --title: the hits of conversations whose titles hold the words; export --title writes those conversations")
    func search() throws {
        let runner = try Self.runner()
        let export = try runner.run(["export", "--format", "jsonl", "--title", "cafe"])
        #expect(export.status == 0, "\(export.error)")
        let titles = export.output.split(separator: "\n").compactMap { line -> String? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return (object["conversation"] as? [String: Any])?["title"] as? String ?? object["title"] as? String
        }
        #expect(titles.count == 10 && titles.allSatisfy { $0.hasPrefix("Café au lait") }, "\(export.output.prefix(300))")
        let json = try runner.json(["search", "about", "--title", "trusting", "--limit", "100"])
        let hits = try #require(json["hits"] as? [[String: Any]])
        #expect(hits.count == 10)
        #expect(hits.allSatisfy { (($0["conversation"] as? [String: Any])?["title"] as? String)?.hasPrefix("Trusting") == true })
    }

    @Test("bad --title: blank or given twice: exit 2 with what to do; punctuation alone is looked for; nothing matching says so")
    func badTitles() throws {
        let runner = try Self.runner()
        for words in ["  ", ""] {
            let result = try runner.run(["list", "--title", words])
            #expect(result.status == 2, "\(words)")
            #expect(result.error.contains("--title needs the words to find in titles (it was blank)"), "\(result.error)")
        }
        // Quotes alone are no words either, and it says what quotes are for.
        for words in ["\"", "\"\"", " \" \" "] {
            let result = try runner.run(["list", "--title", words])
            #expect(result.status == 2 && result.error.contains("quotes alone only mark a phrase"), "\(result.error)")
            #expect(!result.error.contains("blank"), "\(result.error)")
        }
        // A lone combining mark is no word either, and no quote is blamed; what shows nothing is blank.
        let mark = try runner.run(["list", "--title", "\u{301}"])
        #expect(mark.status == 2 && mark.error.contains("only marks with no letter under them") && !mark.error.contains("quote"), "\(mark.error)")
        for invisible in ["\u{200B}", "\"\u{200B}\"", " \u{2060} "] {
            let result = try runner.run(["list", "--title", invisible])
            #expect(result.status == 2 && result.error.contains("(it was blank)") || result.error.contains("quotes alone"), "\(result.error)")
        }
        // A one-word phrase is that word: said once.
        let phrase = try runner.run(["list", "--title", "rust Rúst \"rust\"", "--limit", "3"])
        let phraseMore = try #require(phrase.error.split(separator: "\n").first { $0.hasPrefix("more: ") })
        #expect(phraseMore.contains("--title rust ") && !phraseMore.contains("\"rust\""), "\(phraseMore)")
        // A word pasted 5,000 times is one word, in the more: line too.
        let pasted = try runner.run(["list", "--title", Array(repeating: "rust", count: 5_000).joined(separator: " "), "--limit", "3"])
        #expect(pasted.status == 0, "\(pasted.error)")
        let more = try #require(pasted.error.split(separator: "\n").first { $0.hasPrefix("more: ") })
        #expect(more.contains("--title rust ") && more.count < 300, "\(more.prefix(300))")
        // Punctuation alone is looked for, as search does.
        #expect(try runner.run(["list", "--title", "..."]).error.hasPrefix("No conversations match title:..."))
        #expect(try runner.run(["list", "--title", ":"]).output.split(separator: "\n").count == 11, "the rust: titles")
        let twice = try runner.run(["list", "--title", "rust", "--title", "cafe"])
        #expect(twice.status == 2, "\(twice.error)")
        let none = try runner.run(["list", "--title", "quetzalcoatl\u{1B}]0;X\u{07}"])
        #expect(none.status == 0)
        #expect(none.error.hasPrefix("No conversations match title:"), "\(none.error)")
        #expect(!none.error.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, "\(none.error.debugDescription)")
    }
}
