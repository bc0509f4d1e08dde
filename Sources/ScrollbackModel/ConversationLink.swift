/// How a message names another conversation: a subagent's, on the last line of the tool
/// result it came back as (`Subagent conversation: <public id>`). Imports write it; the
/// reader's `f` opens it.
public enum ConversationLink {
    public static let subagentPrefix = "Subagent conversation: "

    /// The line that names `publicID`.
    public static func subagentLine(_ publicID: String) -> String { subagentPrefix + publicID }

    /// The public id the last line of `content` names, if it is such a line.
    public static func subagent(in content: String) -> String? {
        guard let line = content.split(separator: "\n").last, line.hasPrefix(subagentPrefix) else { return nil }
        let id = line.dropFirst(subagentPrefix.count)
        guard id.count == 36, id.allSatisfy({ $0.isHexDigit || $0 == "-" }) else { return nil }
        return String(id)
    }
}
