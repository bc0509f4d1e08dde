/// Where fenced code blocks open and close in message text, as CommonMark has it: a block
/// opens at a line of three or more backticks (after any spaces, an info string after
/// them), and closes only at a line of at least as many backticks and nothing else. So a
/// block fenced with four backticks (as imports write code holding three) keeps a line of
/// three inside it as code. The reader, copying code, and the Markdown tools all use it.
public struct CodeFence: Sendable {
    /// The open block's fence length; nil outside a block.
    public private(set) var open: Int?

    public init() {}

    public enum Line: Equatable, Sendable {
        /// A fence that opens a block, or one that closes it.
        case opens, closes
        /// A line of code (inside a block), or text (outside).
        case code, text
    }

    /// What `line` is, given the lines before it.
    public mutating func step(_ line: some StringProtocol) -> Line {
        let trimmed = line.drop(while: { $0 == " " })
        let ticks = trimmed.prefix(while: { $0 == "`" }).count
        if let length = open {
            if ticks >= length && trimmed.dropFirst(ticks).allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\r" }) {
                open = nil
                return .closes
            }
            return .code
        }
        guard ticks >= 3, !trimmed.dropFirst(ticks).contains("`") else { return .text }
        open = ticks
        return .opens
    }

    /// `body` as a fenced code block whose fence is longer than any run of backticks in it,
    /// so that nothing in the body ends the block early (and turns the rest into headings
    /// or text of the message around it). `language` keeps letters, digits and `+#-._`.
    public static func fenced(_ body: String, language: String = "") -> String {
        var longest = 0
        var run = 0
        for scalar in body.unicodeScalars {
            run = scalar == "`" ? run + 1 : 0
            longest = max(longest, run)
        }
        let fence = String(repeating: "`", count: max(3, longest + 1))
        let tag = language.filter { $0.isLetter || $0.isNumber || "+#-._".contains($0) }
        return "\(fence)\(tag)\n\(body)\n\(fence)"
    }

    /// Whether `text` is one fenced block and nothing else: its first line opens it and its
    /// last line, only, closes it (as `fenced` writes one).
    public static func isOneBlock(_ text: String) -> Bool {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 2 else { return false }
        var fence = CodeFence()
        for (index, line) in lines.enumerated() {
            let kind = fence.step(line)
            switch index {
            case 0: guard kind == .opens else { return false }
            case lines.count - 1: return kind == .closes
            default: guard kind == .code else { return false }
            }
        }
        return false
    }
}

