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
}
