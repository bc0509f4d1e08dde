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
    static func resolve(_ text: String, references: [Any]) -> String {
        guard text.unicodeScalars.contains(where: isMarkerScalar) else { return text }
        var named: [String: Reference] = [:]
        for case let reference as [String: Any] in references.prefix(referenceLimit) {
            guard let matched = reference.string("matched_text"), named[matched] == nil,
                matched.unicodeScalars.first?.value == 0xE200, matched.unicodeScalars.last?.value == 0xE201
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
        var numbers: [String: Int] = [:]
        var listed: [Source] = []
        var result = String.UnicodeScalarView()
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
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
            guard let reference = named[marker] else { continue }  // names nothing: it goes
            if let word = reference.word {
                result.append(contentsOf: word.unicodeScalars)
                continue
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
        guard !listed.isEmpty else { return String(result) }
        let lines = listed.enumerated().map { "[\($0.offset + 1)] \($0.element.line)" }
        return String(result) + "\n\nSources:\n" + lines.joined(separator: "\n")
    }

    /// Where the marker starting at `start` (its U+E200) ends: its U+E201, when it comes
    /// within 200 characters on the same line (a marker is short); nil for one cut short.
    private static func markerEnd(in scalars: [Unicode.Scalar], from start: Int) -> Int? {
        scalars[start...].prefix(200).prefix { $0 != "\n" }.firstIndex { $0.value == 0xE201 }
    }

    /// The private-use characters markers are made of: U+E200 to U+E204.
    static func isMarkerScalar(_ scalar: Unicode.Scalar) -> Bool {
        (0xE200...0xE204).contains(scalar.value)
    }
}
