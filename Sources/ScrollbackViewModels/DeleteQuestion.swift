import TerminalText

/// The one wording of "delete these?", for the browser's footer and the CLI's prompt:
///
///     Delete “Sourdough starter” with 12 messages? (y/n)
///     Delete 3 conversations (“Sourdough”, “Kyoto”, “Rust”) with 40 messages? [y/N]
///
/// Titles are sanitized and cut so that the whole question fits `width` columns: the
/// question always ends with its answer keys.
public enum DeleteQuestion {
    /// - Parameters:
    ///   - titles: the titles of the conversations (all of them, or the first few).
    ///   - count: how many conversations are deleted.
    ///   - messages: how many messages they hold in all.
    ///   - answers: `(y/n)` in the browser, `[y/N]` in the CLI.
    public static func text(titles: [String], count: Int, messages: Int, answers: String, width: Int) -> String {
        let messageText = "\(NumberText.grouped(messages)) message\(messages == 1 ? "" : "s")"
        let ending = " with \(messageText)? \(answers)"
        let shown = Array(titles.prefix(min(count, 3)).map { UntrustedText.sanitized($0) })
        if count == 1, let title = shown.first {
            let room = width - DisplayWidth.of("Delete “”" + ending)
            if room >= 4 { return "Delete “\(DisplayWidth.truncated(title, to: room))”" + ending }
            return shortest(["Delete 1 conversation" + ending, "Delete 1 conversation? \(answers)", "Delete? \(answers)"], width: width)
        }
        let head = "Delete \(NumberText.grouped(count)) conversation\(count == 1 ? "" : "s")"
        // As many titles as fit with at least a few characters each.
        for number in stride(from: shown.count, through: 1, by: -1) {
            let more = count > number ? " and \(NumberText.grouped(count - number)) more" : ""
            let fixed = DisplayWidth.of(head + " ()" + more + ending) + number * 2 + (number - 1) * 2
            let each = (width - fixed) / number
            guard each >= 4 else { continue }
            let names = shown.prefix(number).map { "“\(DisplayWidth.truncated($0, to: each))”" }.joined(separator: ", ")
            return head + " (\(names)\(more))" + ending
        }
        return shortest([head + ending, head + "? \(answers)", "Delete \(NumberText.grouped(count))? \(answers)"], width: width)
    }

    /// The first that fits, else the last (which ends with the answer keys all the same).
    private static func shortest(_ candidates: [String], width: Int) -> String {
        candidates.first { DisplayWidth.of($0) <= width } ?? candidates.last ?? ""
    }
}
