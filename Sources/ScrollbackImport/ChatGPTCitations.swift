import Foundation

/// ChatGPT's citation markers, as `[1]`-style references with the sources listed under the
/// answer.
///
/// Since 2025 an answer that cites the web or a file holds markers made of private-use
/// characters: U+E200, a kind (`cite`, `filecite`, `entity`…), one or more arguments each
/// after U+E202 (`turn0search3`), and U+E201. ChatGPT draws them as source chips; a terminal
/// would draw them as boxes. The message's `metadata.content_references` says what each
/// marker (its exact `matched_text`) names: web pages (`items` with `title` and `url`), a
/// file (`name`), a word to show (`alt`, for an entity), or nothing (`hidden`).
///
/// Before that (2023 to 2025: Browse with Bing, file search, the first web search) a marker
/// was visible text in lenticular brackets: `【13†source】`, `【4:0†notes.pdf】`,
/// `【31†L27-L35】`. The message's `metadata.citations` names each by where it stands
/// (`start_ix` and `end_ix`, counted in Unicode scalars, as the exporter's Python does) with
/// the page (`metadata.title`, `url`) or file (`name`) it cites; some exports name them
/// in `content_references` by their `matched_text` instead. A bracketed marker nothing
/// names stays as it is: it is readable text, and a person may have typed one.
enum ChatGPTCitations {
    /// One source a marker names, listed once under the answer however often it is cited.
    struct Source: Equatable {
        var title: String?
        var url: String?

        var key: String { url ?? title ?? "" }
        var line: String {
            switch (title.flatMap(Self.shown), url.flatMap(Self.shown)) {
            case (let title?, let url?): "\(title) — \(url)"
            case (let title?, nil): title
            case (nil, let url?): url
            case (nil, nil): "(a source without a name)"
            }
        }

        /// A source's words on one line, or nil when they are blank.
        private static func shown(_ text: String) -> String? {
            let line = text.split(whereSeparator: \.isNewline).joined(separator: " ").trimmingCharacters(in: .whitespaces)
            return line.isEmpty ? nil : line
        }
    }

    /// At most this many references of one message are read (an export of any size stays a
    /// linear pass).
    static let referenceLimit = 10_000

    /// What one marker stands for: the sources it cites, or a word to show.
    private struct Reference {
        var sources: [Source]
        var word: String?
    }

    /// `text` with each marker `references` name replaced by its numbers (`[1][2]`) or its
    /// word, markers nothing names taken out, and the sources listed at the end, numbered in
    /// the order the answer first cites them. One pass over the text.
    static func resolve(_ text: String, references: [Any], citations: [Any] = []) -> String {
        guard text.unicodeScalars.contains(where: { isMarkerScalar($0) || $0 == bracketOpen }) else { return text }
        var named: [String: Reference] = [:]
        for case let reference as [String: Any] in references.prefix(referenceLimit) {
            guard let matched = reference.string("matched_text")?.trimmingCharacters(in: .whitespaces), named[matched] == nil,
                (matched.unicodeScalars.first?.value == 0xE200 && matched.unicodeScalars.last?.value == 0xE201)
                    || isBracketMarker(Array(matched.unicodeScalars)[...])
            else { continue }
            var sources: [Source] = []
            for case let item as [String: Any] in (reference.array("items") ?? []).prefix(100) {
                sources.append(Source(title: item.string("title") ?? item.string("attribution"), url: item.string("url")))
            }
            if sources.isEmpty, reference.string("url") != nil || reference.string("title") != nil {
                sources.append(Source(title: reference.string("title"), url: reference.string("url")))
            }
            if sources.isEmpty, reference.string("type") == "file", let name = reference.string("name") {
                sources.append(Source(title: name, url: nil))
            }
            // An entity or a plain word is shown as its word; a web page's `alt` is a Markdown
            // link of the same source, which the list says.
            let type = reference.string("type") ?? ""
            let word = sources.isEmpty && ["entity", "alt_text"].contains(type) ? reference.string("alt") : nil
            named[matched] = Reference(sources: sources, word: word)
        }
        let scalars = Array(text.unicodeScalars)
        // The older citations, by where their bracketed markers start.
        var placed: [Int: (end: Int, reference: Reference)] = [:]
        for case let citation as [String: Any] in citations.prefix(referenceLimit) {
            guard let start = citation.number("start_ix"), let end = citation.number("end_ix"),
                start >= 0, end <= Double(scalars.count), start < end, end - start <= 200,
                start.rounded() == start, end.rounded() == end
            else { continue }
            let (from, to) = (Int(start), Int(end))
            guard placed[from] == nil, isBracketMarker(scalars[from..<to]) else { continue }
            let cited = citation["metadata"] as? [String: Any] ?? [:]
            let title = cited.string("title").flatMap { ImportText.isBlank($0) ? nil : $0 } ?? cited.string("name")
            let url = cited.string("url").flatMap { ImportText.isBlank($0) ? nil : $0 }
            guard title != nil || url != nil else { continue }
            placed[from] = (end: to - 1, reference: Reference(sources: [Source(title: title, url: url)], word: nil))
        }
        var numbers: [String: Int] = [:]
        var listed: [Source] = []
        var result = String.UnicodeScalarView()
        var index = 0
        func cite(_ reference: Reference) {
            if let word = reference.word {
                result.append(contentsOf: word.unicodeScalars)
                return
            }
            var cited: [Int] = []
            for source in reference.sources {
                let number = numbers[source.key] ?? {
                    listed.append(source)
                    numbers[source.key] = listed.count
                    return listed.count
                }()
                if !cited.contains(number) { cited.append(number) }
            }
            result.append(contentsOf: cited.map { "[\($0)]" }.joined().unicodeScalars)
        }
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == Self.bracketOpen {
                // Named where it stands, else by its text; else it stays.
                if let found = placed[index] {
                    cite(found.reference)
                    index = found.end + 1
                    continue
                }
                if let end = bracketEnd(in: scalars, from: index), let reference = named[String(String.UnicodeScalarView(scalars[index...end]))] {
                    cite(reference)
                    index = end + 1
                    continue
                }
            }
            guard isMarkerScalar(scalar) else {
                result.append(scalar)
                index += 1
                continue
            }
            guard scalar.value == 0xE200, let end = markerEnd(in: scalars, from: index) else {
                index += 1  // a stray marker character
                continue
            }
            let marker = String(String.UnicodeScalarView(scalars[index...end]))
            index = end + 1
            if let reference = named[marker] {
                cite(reference)
            } else if let word = entityWord(marker) {
                // An entity nothing names still holds its word: `["city","Paris",…]`.
                result.append(contentsOf: word.unicodeScalars)
            }  // else it names nothing: it goes
        }
        guard !listed.isEmpty else { return String(result) }
        let lines = listed.enumerated().map { "[\($0.offset + 1)] \($0.element.line)" }
        return String(result) + "\n\nSources:\n" + lines.joined(separator: "\n")
    }

    /// The word an `entity` marker holds in its argument (a JSON list: the kind, the word,
    /// a description), on one line; nil for any other marker or one that cannot be read.
    static func entityWord(_ marker: String) -> String? {
        let parts = marker.unicodeScalars.split(whereSeparator: { (0xE200...0xE202).contains($0.value) }).map { String(String.UnicodeScalarView($0)) }
        guard parts.count == 2, parts[0] == "entity",
            let list = (try? JSONSerialization.jsonObject(with: Data(parts[1].utf8))) as? [Any], list.count >= 2,
            let word = list[1] as? String, !ImportText.isBlank(word)
        else { return nil }
        return ImportText.oneLine(word)
    }

    /// Where the marker starting at `start` (its U+E200) ends: its U+E201, when it comes
    /// within 200 characters on the same line (a marker is short); nil for one cut short.
    private static func markerEnd(in scalars: [Unicode.Scalar], from start: Int) -> Int? {
        scalars[start...].prefix(200).prefix { $0 != "\n" }.firstIndex { $0.value == 0xE201 }
    }

    /// Where the bracketed marker starting at `start` (its 【) ends: its 】, within 100
    /// characters on the same line, a † between; nil when there is none.
    private static func bracketEnd(in scalars: [Unicode.Scalar], from start: Int) -> Int? {
        guard let end = scalars[start...].prefix(100).prefix(while: { $0 != "\n" }).firstIndex(of: bracketClose),
            isBracketMarker(scalars[start...end])
        else { return nil }
        return end
    }

    /// Whether `scalars` are one bracketed marker: 【, a number (`13`, `4:0`), †, a name
    /// or line range without brackets, 】.
    static func isBracketMarker(_ scalars: ArraySlice<Unicode.Scalar>) -> Bool {
        guard scalars.count >= 4, scalars.first == bracketOpen, scalars.last == bracketClose,
            let dagger = scalars.firstIndex(of: "\u{2020}")
        else { return false }
        let number = scalars[(scalars.startIndex + 1)..<dagger]
        let name = scalars[(dagger + 1)..<(scalars.endIndex - 1)]
        return !number.isEmpty && number.allSatisfy { ("0"..."9").contains($0) || $0 == ":" }
            && !name.isEmpty && !name.contains { $0 == bracketOpen || $0 == bracketClose || $0 == "\n" }
    }

    static let bracketOpen: Unicode.Scalar = "\u{3010}"
    static let bracketClose: Unicode.Scalar = "\u{3011}"

    /// The private-use characters markers are made of: U+E200 to U+E204, in the block
    /// ChatGPT keeps for them (to U+E2FF); one outside a marker is dropped, never shown as
    /// a box.
    static func isMarkerScalar(_ scalar: Unicode.Scalar) -> Bool {
        (0xE200...0xE2FF).contains(scalar.value)
    }
}
