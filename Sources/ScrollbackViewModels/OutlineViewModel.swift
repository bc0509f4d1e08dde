import ScrollbackModel
import TerminalText

/// The outline of a branched conversation (`t` in the reader): one line per branch (per
/// leaf), indented by how many branch points are above where it parts from the one before,
/// labelled by the first line of its first own message. Enter shows that branch.
@MainActor
public final class OutlineViewModel {
    public struct Entry: Equatable, Sendable {
        /// The branch's leaf (for shared messages, the first branch's below them).
        public var leaf: Int64
        public var level: Int
        /// Where the branch parts (1-based place along it), its role and first line: safe to draw.
        public var place: Int
        public var role: Role
        public var firstLine: String
        /// The branch the reader shows.
        public var isShown: Bool
        /// For the messages several branches share: the place of the last of them, after
        /// which they part; nil for a branch.
        public var sharedThrough: Int? = nil
    }

    public let entries: [Entry]
    /// How many branches (the lines of shared messages are not).
    public let branchCount: Int
    public private(set) var selection: Int
    public private(set) var top = 0
    public var viewportHeight = 20 {
        didSet { keepSelectionVisible() }
    }

    /// - Parameters:
    ///   - shownLeaf: the leaf of the branch the reader shows (selected first).
    ///   - selecting: the leaf of the branch to select instead, when it is there.
    public init(tree: ConversationTree, messages: any MessageRepository, shownLeaf: Int64?, selecting: Int64? = nil) throws {
        let lines = tree.outline
        var starts: [Int64: MessageDTO] = [:]
        for message in try messages.messages(ids: Array(Set(lines.map(\.start)))) { starts[message.id] = message }
        entries = lines.map { branch in
            let start = starts[branch.start]
            let line = start?.content.split(separator: "\n").first { !$0.allSatisfy(\.isWhitespace) } ?? ""
            return Entry(
                leaf: branch.leaf, level: branch.level, place: tree.depth(of: branch.start) + 1, role: start?.role ?? .user,
                firstLine: UntrustedText.sanitized(String(line.prefix(400))), isShown: branch.forksAt == nil && branch.leaf == shownLeaf,
                sharedThrough: branch.forksAt.map { tree.depth(of: $0) + 1 })
        }
        branchCount = lines.filter { $0.forksAt == nil }.count
        let made = entries
        selection =
            selecting.flatMap { leaf in made.firstIndex { $0.leaf == leaf && $0.sharedThrough == nil } } ?? made.firstIndex { $0.isShown } ?? 0
        keepSelectionVisible()
    }

    public var selected: Entry? { entries.indices.contains(selection) ? entries[selection] : nil }

    /// The selected branch's number among the branches (a line of shared messages counts
    /// as the first branch below it).
    public var selectedBranchNumber: Int {
        guard let selected else { return 0 }
        return entries.filter { $0.sharedThrough == nil }.firstIndex { $0.leaf == selected.leaf }.map { $0 + 1 } ?? 0
    }

    public func move(by delta: Int) {
        guard !entries.isEmpty else { return }
        selection = min(max(selection + delta, 0), entries.count - 1)
        keepSelectionVisible()
    }

    public var visibleEntries: ArraySlice<Entry> {
        entries[min(top, entries.count)..<min(top + max(viewportHeight, 0), entries.count)]
    }

    private func keepSelectionVisible() {
        let height = max(viewportHeight, 1)
        if selection < top { top = selection }
        if selection >= top + height { top = selection - height + 1 }
        top = max(0, min(top, max(entries.count - height, 0)))
    }
}
