import ScrollbackModel
import ScrollbackStorage

/// One row of a pull's read as the server returned it: every machine of the group comes
/// back, with a row of nulls (`nothing`) when nothing of it waits; a value the server holds
/// out of its type or range is nil.
struct ServerOpRow: Sendable, Equatable {
    var machine: String?
    /// The row of nulls of a machine with nothing waiting.
    var nothing = false
    var seq: Int64?
    var opID: String?
    var entity: String?
    var wall: Int64?
    var counter: Int64?
    var sealed: [UInt8]?
}

/// The planning step of a pull, without a server: from the cursors (what is applied here)
/// and the rows one read returned, what moves. Per machine, its ops from its cursor on in
/// order without a gap, each opened; a machine with a gap waits for the next sync (the ops
/// before it move); a machine with a damaged op is read no further, and says so at the end.
struct PullPlan: Sendable {
    /// Per machine, in the order of their ids, the ops to apply.
    var pages: [(origin: String, page: [IncomingOp])] = []
    /// Machines read no further in this sync: a gap, or a damaged op.
    var stalled = Set<String>()
    /// The first damaged op, said when the pull ends.
    var damaged: SyncError?
    /// The group's last machine, when the group is done and full: the next group starts
    /// after it. Nil with no pages: nothing is left.
    var nextGroupAfter: String?

    /// Whether the read moved nothing and nothing follows.
    var isDone: Bool { pages.isEmpty && nextGroupAfter == nil }

    /// Plans a read.
    ///
    /// - Parameters:
    ///   - rows: what the server returned, in any order.
    ///   - cursors: the last op applied (or read ahead) per machine; a machine not in it
    ///     (new to this one) starts at 0.
    ///   - stalled: machines stalled before this read, read no further.
    ///   - groupSize: the machines one read asks for; a group that came back full has more after it.
    ///   - open: opens an op's sealed payload (nil: it does not open with this key).
    static func plan(
        rows: [ServerOpRow], cursors: [String: Int64], stalled: Set<String>, groupSize: Int,
        open: (_ row: ServerOpRow, _ clock: HybridClock) -> [UInt8]?
    ) throws -> PullPlan {
        var plan = PullPlan(stalled: stalled)
        var pages: [String: [IncomingOp]] = [:]
        var group = Set<String>()
        // The machine read no further; its ops before this one are applied.
        func halt(_ origin: String, _ message: String) {
            plan.stalled.insert(origin)
            if plan.damaged == nil { plan.damaged = .damagedOp(message) }
        }
        // In (machine, seq) order: the query leaves the order out, which keeps its plan cheap.
        let order = rows.indices.sorted {
            let a = (rows[$0].machine ?? "", rows[$0].seq ?? 0), b = (rows[$1].machine ?? "", rows[$1].seq ?? 0)
            return a.0 != b.0 ? a.0 < b.0 : a.1 < b.1
        }
        for index in order {
            let row = rows[index]
            guard let origin = row.machine, HybridClock.isMachineID(origin) else {
                throw SyncError.damagedOp("the server holds a machine id that is not 32 hex digits")
            }
            group.insert(origin)
            // A machine stalled before this read has no rows; one stalled in it, no more.
            if row.nothing || plan.stalled.contains(origin) { continue }
            let cursor = pages[origin]?.last?.seq ?? cursors[origin] ?? 0
            guard let seq = row.seq, seq >= 1, row.opID != nil, let entity = row.entity, let wall = row.wall,
                let counter = row.counter, row.sealed != nil
            else {
                halt(origin, "the op after change \(cursor) of machine \(origin) on the server has a field out of range")
                continue
            }
            guard seq == cursor + 1 else {
                // A gap: the rest of this machine waits for the next sync.
                plan.stalled.insert(origin)
                continue
            }
            guard wall >= 0, wall <= HybridClock.wallLimit, counter >= 0, counter <= HybridClock.counterLimit else {
                halt(origin, "op \(seq) of machine \(origin) has a clock out of range")
                continue
            }
            let clock = HybridClock(wall: wall, counter: counter, machine: origin)
            guard let plaintext = open(row, clock) else {
                halt(origin, "op \(seq) of machine \(origin) does not open with this key")
                continue
            }
            // In place: a copy of the page for each op made a page cost its square.
            pages[origin, default: []].append(IncomingOp(machine: origin, seq: seq, entity: entity, clock: clock, plaintext: plaintext))
        }
        if pages.isEmpty, group.count >= groupSize, let last = group.max() {
            plan.nextGroupAfter = last
        }
        plan.pages = pages.keys.sorted().compactMap { origin in pages[origin].map { (origin, $0) } }
        return plan
    }
}
