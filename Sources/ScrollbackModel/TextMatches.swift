import Foundation

/// Where search terms occur in a piece of text.
public enum TextMatches {
    /// Every case-insensitive occurrence of any of `terms` in `text`, as ranges of
    /// Characters (grapheme clusters), sorted, with overlapping ones merged.
    public static func ranges(of terms: [String], in text: String) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        for term in terms where !term.isEmpty {
            var searchStart = text.startIndex
            while searchStart < text.endIndex,
                let found = text.range(of: term, options: [.caseInsensitive], range: searchStart..<text.endIndex)
            {
                let lower = text[..<found.lowerBound].count
                let upper = lower + text[found].count
                if upper > lower { ranges.append(lower..<upper) }
                searchStart = found.upperBound > found.lowerBound ? found.upperBound : text.index(after: found.lowerBound)
            }
        }
        ranges.sort { $0.lowerBound < $1.lowerBound }
        var merged: [Range<Int>] = []
        for range in ranges {
            if let last = merged.last, range.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }
}
