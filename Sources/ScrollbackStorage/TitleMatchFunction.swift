import CSQLite
import ScrollbackModel

/// `scrollback_title_matches(title, words)`: 1 when `title` holds every term of `words` by
/// the search's rules (`SearchQuery`: a word's start, case and accents ignored, phrases in
/// quotes), else 0. It is what the list's narrowing by title (`title:`) means, exactly, in
/// SQL and in `ConversationFilter.admits` alike; the title index only proposes candidates.
/// The words are parsed once per statement: SQLite keeps them as the argument's auxiliary
/// data while the statement runs.
enum TitleMatchFunction {
    static let name = "scrollback_title_matches"

    /// The parsed words, kept by SQLite between calls of one statement.
    private final class Parsed {
        let query: SearchQuery
        init(_ query: SearchQuery) { self.query = query }
    }

    /// Adds the function to a connection.
    static func register(_ handle: OpaquePointer) -> Int32 {
        sqlite3_create_function_v2(
            handle, name, 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, count, values in
                guard let context, count == 2, let values else { return }
                guard let title = TitleMatchFunction.text(values[0]), let wordsValue = values[1] else {
                    sqlite3_result_int(context, 0)
                    return
                }
                let parsed: TitleMatchFunction.Parsed
                if let kept = sqlite3_get_auxdata(context, 1) {
                    parsed = Unmanaged<TitleMatchFunction.Parsed>.fromOpaque(kept).takeUnretainedValue()
                } else {
                    parsed = TitleMatchFunction.Parsed(SearchQuery(TitleMatchFunction.text(wordsValue) ?? ""))
                    // SQLite may drop it at once (calling the destructor): `parsed` is still held here.
                    sqlite3_set_auxdata(context, 1, Unmanaged.passRetained(parsed).toOpaque()) { pointer in
                        if let pointer { Unmanaged<TitleMatchFunction.Parsed>.fromOpaque(pointer).release() }
                    }
                }
                sqlite3_result_int(context, parsed.query.matches(title) ? 1 : 0)
            }, nil, nil, nil)
    }

    /// A value's text (its bytes as UTF-8, invalid sequences replaced); nil for NULL.
    private static func text(_ value: OpaquePointer?) -> String? {
        guard let value, sqlite3_value_type(value) != SQLITE_NULL else { return nil }
        let bytes = sqlite3_value_text(value)
        let count = Int(sqlite3_value_bytes(value))
        guard let bytes, count > 0 else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}
