/// File path pieces, by hand: Foundation's `NSString` path methods trap on a path of one
/// character (`--out a`, `--db w`), so nothing here uses them.
public enum PathText {
    /// The folder part: `a/b/c` → `a/b`, `/a` → `/`, `a` → `` (the current folder).
    public static func parent(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        if slash == trimmed.startIndex { return "/" }
        var folder = trimmed[..<slash]
        while folder.count > 1 && folder.hasSuffix("/") { folder = folder.dropLast() }
        return String(folder)
    }

    /// The last part: `a/b/c` → `c`, `a/` → `a`, `/` → `/`.
    public static func lastComponent(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/"), trimmed.count > 1 else { return String(trimmed) }
        return String(trimmed[trimmed.index(after: slash)...])
    }

    /// `folder/name`, with one slash between.
    public static func appending(to folder: String, _ name: String) -> String {
        if folder.isEmpty { return name }
        return folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }

    /// A title as a safe part of a file name: lower-case letters and numbers joined by `-`,
    /// at most `limit` characters. Never a `/`, a `.`, a control or format character,
    /// whatever the title holds; empty when it has no letter or number.
    public static func slug(of title: String, limit: Int = 40) -> String {
        var slug = ""
        for character in title.lowercased() {
            // Letters and numbers only (no marks, controls, format characters or dots); the
            // scalar test keeps out characters that merely combine into a letter.
            if (character.isLetter || character.isNumber)
                && character.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || $0.properties.numericType != nil })
            {
                slug.append(character)
            } else if !slug.isEmpty && slug.last != "-" {
                slug.append("-")
            }
            if slug.count >= limit { break }
        }
        while slug.last == "-" { slug.removeLast() }
        return slug
    }
}
