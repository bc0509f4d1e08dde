/// The shape of a branched conversation: each message's parent, without any text (a few
/// bytes per message), for finding branches, siblings and leaves.
///
/// Siblings are in the order of their ids, which is the order of their times (see the
/// storage's row ids). A parent that is not in the tree makes its child a first message, and
/// a message on a cycle (only a damaged database has one) is reachable from no first message:
/// no walk here loops.
public struct ConversationTree: Sendable {
    /// Message ids, ascending.
    public let ids: [Int64]
    private let index: [Int64: Int]
    /// For each message (by index), its parent's index, or -1.
    private let parents: [Int]
    /// Children of each message in `childList[childStart[i]..<childStart[i + 1]]`; the first
    /// messages are those of `roots`.
    private let childStart: [Int]
    private let childList: [Int]
    private let roots: [Int]

    /// - Parameter nodes: every message of the conversation with its parent (any order).
    public init(nodes: [(id: Int64, parentID: Int64?)]) {
        let sorted = nodes.sorted { $0.id < $1.id }
        var index: [Int64: Int] = [:]
        index.reserveCapacity(sorted.count)
        var ids: [Int64] = []
        ids.reserveCapacity(sorted.count)
        for node in sorted where index[node.id] == nil {
            index[node.id] = ids.count
            ids.append(node.id)
        }
        var parents = Array(repeating: -1, count: ids.count)
        var counts = Array(repeating: 0, count: ids.count + 1)
        var roots: [Int] = []
        var seen = Set<Int>()
        for node in sorted {
            guard let at = index[node.id], seen.insert(at).inserted else { continue }
            if let parentID = node.parentID, let parent = index[parentID], parent != at {
                parents[at] = parent
                counts[parent + 1] += 1
            } else {
                roots.append(at)
            }
        }
        for i in 0..<ids.count { counts[i + 1] += counts[i] }
        var fill = counts
        var childList = Array(repeating: 0, count: counts[ids.count])
        // In index order, so that each list is in id order.
        for at in 0..<ids.count where parents[at] >= 0 {
            childList[fill[parents[at]]] = at
            fill[parents[at]] += 1
        }
        self.ids = ids
        self.index = index
        self.parents = parents
        self.childStart = counts
        self.childList = childList
        self.roots = roots
    }

    public var count: Int { ids.count }

    /// The tree of the messages the person saw: each seen message under its nearest seen
    /// ancestor, the hidden ones left out (a branch of hidden messages only is no branch).
    /// With `showingHidden`, every message, as stored.
    public init(nodes: [(id: Int64, parentID: Int64?, seen: Bool)], showingHidden: Bool) {
        guard !showingHidden, nodes.contains(where: { !$0.seen }) else {
            self.init(nodes: nodes.map { (id: $0.id, parentID: $0.parentID) })
            return
        }
        var parentOf: [Int64: Int64?] = [:]
        var hidden = Set<Int64>()
        parentOf.reserveCapacity(nodes.count)
        for node in nodes where parentOf[node.id] == nil {
            // Kept as a value even when nil (a first message): assigning nil would remove it.
            parentOf.updateValue(node.parentID, forKey: node.id)
            if !node.seen { hidden.insert(node.id) }
        }
        // For a hidden message, its nearest seen ancestor (nil: none), found once.
        var nearest: [Int64: Int64?] = [:]
        func seenAncestor(of start: Int64?) -> Int64? {
            var walked: [Int64] = []
            var at = start
            var answer: Int64?
            var steps = 0
            while let current = at {
                guard hidden.contains(current) else { answer = parentOf[current] == nil ? nil : current; break }
                if let known = nearest[current] { answer = known; break }
                walked.append(current)
                steps += 1
                // A loop of parents (a damaged database): no seen ancestor.
                if steps > nodes.count { answer = nil; break }
                at = parentOf[current] ?? nil
            }
            for id in walked { nearest[id] = answer }
            return answer
        }
        var seenNodes: [(id: Int64, parentID: Int64?)] = []
        seenNodes.reserveCapacity(nodes.count - hidden.count)
        for node in nodes where !hidden.contains(node.id) {
            seenNodes.append((node.id, seenAncestor(of: node.parentID)))
        }
        self.init(nodes: seenNodes)
    }

    /// The leaf to show for `id` (a message of any kind, maybe not in this tree): `id`
    /// when it is a leaf here, else the newest leaf below it, else the newest leaf.
    public func leaf(near id: Int64?, parents: (Int64) -> Int64?) -> Int64? {
        var at = id
        var steps = 0
        while let current = at, !contains(current), steps <= count {
            at = parents(current)
            steps += 1
        }
        guard let found = at, contains(found) else { return newestLeaf }
        return newestLeaf(under: found)
    }


    public func contains(_ id: Int64) -> Bool { index[id] != nil }

    public func parent(of id: Int64) -> Int64? {
        guard let at = index[id], parents[at] >= 0 else { return nil }
        return ids[parents[at]]
    }

    /// The children of `id` in time order; the first messages for nil.
    public func children(of id: Int64?) -> [Int64] {
        childIndexes(of: id.flatMap { index[$0] }).map { ids[$0] }
    }

    private func childIndexes(of at: Int?) -> ArraySlice<Int> {
        guard let at else { return roots[...] }
        return childList[childStart[at]..<childStart[at + 1]]
    }

    /// Where `id` stands among its siblings (0-based) and how many there are.
    public func siblingPlace(of id: Int64) -> (index: Int, count: Int)? {
        guard let at = index[id] else { return nil }
        let siblings = childIndexes(of: parents[at] >= 0 ? parents[at] : nil)
        guard let place = siblings.firstIndex(of: at) else { return nil }
        return (place - siblings.startIndex, siblings.count)
    }

    /// The messages from a first one down to `leaf`, in order; empty when `leaf` is not here.
    public func path(to leaf: Int64) -> [Int64] {
        guard var at = index[leaf] else { return [] }
        var path: [Int64] = [ids[at]]
        var steps = 0
        while parents[at] >= 0 && steps < ids.count {
            at = parents[at]
            path.append(ids[at])
            steps += 1
        }
        return path.reversed()
    }

    /// Whether `ancestor` is `id` or one of the messages above it.
    public func isAncestor(_ ancestor: Int64, of id: Int64) -> Bool {
        guard let target = index[ancestor], var at = index[id] else { return false }
        var steps = 0
        while true {
            if at == target { return true }
            guard parents[at] >= 0, steps < ids.count else { return false }
            at = parents[at]
            steps += 1
        }
    }

    /// In a tree of every kind: the leaf that shows the seen branch ending at `seenLeaf` with
    /// what was hidden on it: `current` (the stored current leaf) when it is `seenLeaf` or
    /// below it (hidden messages after the last seen one), else the newest leaf below
    /// `seenLeaf`. A current leaf on a version of only hidden messages is no branch of its own.
    public func leaf(showingHiddenOf seenLeaf: Int64, current: Int64?) -> Int64 {
        if let current, isAncestor(seenLeaf, of: current) { return current }
        return newestLeaf(under: seenLeaf) ?? seenLeaf
    }

    /// The newest leaf at or below `id` (the one with the largest id, which is the latest).
    public func newestLeaf(under id: Int64) -> Int64? {
        guard let start = index[id] else { return nil }
        var best = start
        var stack = [start]
        var visited = 0
        while let at = stack.popLast(), visited <= ids.count {
            visited += 1
            let children = childIndexes(of: at)
            if children.isEmpty {
                if at > best || childIndexes(of: best).count > 0 { best = at }
            } else {
                stack.append(contentsOf: children)
            }
        }
        return ids[best]
    }

    /// Every message reachable from a first message, parents before children (depth first,
    /// siblings in time order). A message missing here is on a loop of parents.
    public var order: [Int64] {
        var result: [Int64] = []
        result.reserveCapacity(ids.count)
        var stack = roots.reversed() as [Int]
        var visited = 0
        while let at = stack.popLast(), visited <= ids.count {
            visited += 1
            result.append(ids[at])
            stack.append(contentsOf: childIndexes(of: at).reversed())
        }
        return result
    }

    /// How many leaves are at or below `id`.
    public func leafCount(under id: Int64) -> Int {
        guard let start = index[id] else { return 0 }
        var count = 0
        var stack = [start]
        var visited = 0
        while let at = stack.popLast(), visited <= ids.count {
            visited += 1
            let children = childIndexes(of: at)
            if children.isEmpty { count += 1 } else { stack.append(contentsOf: children) }
        }
        return count
    }

    /// The newest leaf of the whole conversation.
    public var newestLeaf: Int64? {
        (0..<ids.count).last { childStart[$0] == childStart[$0 + 1] && isReachable($0) }.map { ids[$0] }
    }

    private func isReachable(_ at: Int) -> Bool {
        var at = at
        var steps = 0
        while parents[at] >= 0 {
            at = parents[at]
            steps += 1
            if steps > ids.count { return false }
        }
        return true
    }

    /// The number of messages above `id`: its place along any branch through it.
    public func depth(of id: Int64) -> Int {
        max(path(to: id).count - 1, 0)
    }

    /// One entry per leaf, in outline order (depth first, siblings in time order).
    public struct Branch: Sendable, Hashable {
        public var leaf: Int64
        /// The first message of this branch after its last branch point (the first message
        /// of the conversation when it has none): what tells it from its siblings.
        public var start: Int64
        /// How many branch points are above `start`: the outline's indentation.
        public var level: Int
    }

    /// A line of the outline: a branch (from `start` to its leaf), or the messages shared
    /// by several branches, from `start` to where they part (`forksAt`), so that the
    /// branches below a branch point have a line above them.
    public struct OutlineLine: Sendable, Hashable {
        /// The branch's leaf; for shared messages, the first branch's below them.
        public var leaf: Int64
        public var start: Int64
        public var level: Int
        /// The message after which the branches part; nil for a branch.
        public var forksAt: Int64?
    }

    /// The branches and the shared runs above their branch points, depth first; a run that
    /// starts a conversation with several first messages has none (they part at its start).
    public var outline: [OutlineLine] {
        var result: [OutlineLine] = []
        let rootLevel = roots.count > 1 ? 1 : 0
        var stack: [(at: Int, start: Int, level: Int)] = roots.reversed().map { ($0, $0, rootLevel) }
        var visited = 0
        while let (at, start, level) = stack.popLast(), visited <= ids.count {
            visited += 1
            let children = childIndexes(of: at)
            if children.isEmpty {
                result.append(OutlineLine(leaf: ids[at], start: ids[start], level: level, forksAt: nil))
            } else if children.count == 1, let only = children.first {
                stack.append((only, start, level))
            } else {
                result.append(OutlineLine(leaf: ids[at], start: ids[start], level: level, forksAt: ids[at]))
                stack.append(contentsOf: children.reversed().map { ($0, $0, level + 1) })
            }
        }
        // A shared run leads to the first branch below it.
        var next: Int64?
        for index in result.indices.reversed() {
            if result[index].forksAt == nil { next = result[index].leaf } else if let next { result[index].leaf = next }
        }
        return result
    }

    /// Every branch, one per leaf, depth first: the outline's lines that are branches.
    public var branches: [Branch] {
        outline.compactMap { $0.forksAt == nil ? Branch(leaf: $0.leaf, start: $0.start, level: $0.level) : nil }
    }
}

/// One branch of a conversation, to page through: by position when the conversation has one
/// branch (the messages' own order), else by the ids along it (8 bytes a message, no text).
public struct MessageBranch: Sendable {
    public let conversationID: Int64
    /// Its last message.
    public let leaf: Int64?
    /// The ids from the first message to `leaf`; nil when the conversation has one branch.
    public let path: [Int64]?
    /// How many messages it has.
    public let count: Int

    public init(conversationID: Int64, leaf: Int64?, path: [Int64]?, count: Int) {
        self.conversationID = conversationID
        self.leaf = leaf
        self.path = path
        self.count = count
    }
}
