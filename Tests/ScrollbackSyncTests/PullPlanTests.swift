import ScrollbackModel
import ScrollbackStorage
import Testing

@testable import ScrollbackSync

/// The pull's planning step against server states made up here: what moves, what waits,
/// what is refused, without a server.
@Suite("The pull's plan: cursors against what the server returned")
struct PullPlanTests {
    static let a = String(repeating: "a", count: 32)
    static let b = String(repeating: "b", count: 32)
    static let c = String(repeating: "c", count: 32)

    /// An op of `machine` numbered `seq`, whose payload is its number (so that `open` can tell).
    static func op(_ machine: String, _ seq: Int64) -> ServerOpRow {
        ServerOpRow(
            machine: machine, seq: seq, opID: "op-\(seq)", entity: "entity-\(seq)", wall: 1_000 + seq, counter: 0,
            sealed: Array("sealed \(seq)".utf8))
    }

    static func nothing(_ machine: String) -> ServerOpRow { ServerOpRow(machine: machine, nothing: true) }

    /// Opens what `op` sealed; refuses the seqs in `damaged`.
    static func plan(_ rows: [ServerOpRow], cursors: [String: Int64], stalled: Set<String> = [], groupSize: Int = 20, damaged: Set<Int64> = [])
        throws -> PullPlan
    {
        try PullPlan.plan(rows: rows, cursors: cursors, stalled: stalled, groupSize: groupSize) { row, clock in
            guard let seq = row.seq, !damaged.contains(seq), clock.machine == row.machine else { return nil }
            return row.sealed
        }
    }

    static func seqs(_ plan: PullPlan) -> [String: [Int64]] {
        Dictionary(uniqueKeysWithValues: plan.pages.map { ($0.origin, $0.page.map(\.seq)) })
    }

    @Test("nothing new: every machine a row of nulls, nothing moves, and nothing follows")
    func nothingNew() throws {
        let plan = try Self.plan([Self.nothing(Self.a), Self.nothing(Self.b)], cursors: [Self.a: 5, Self.b: 9])
        #expect(plan.pages.isEmpty && plan.stalled.isEmpty && plan.damaged == nil)
        #expect(plan.isDone)
    }

    @Test("one machine ahead: its ops after the cursor move, in order (the server's rows in any order), the other's stay")
    func oneMachineAhead() throws {
        let plan = try Self.plan([Self.op(Self.a, 6), Self.nothing(Self.b), Self.op(Self.a, 4), Self.op(Self.a, 5)], cursors: [Self.a: 3, Self.b: 9])
        #expect(Self.seqs(plan) == [Self.a: [4, 5, 6]])
        #expect(plan.pages.first?.page.first?.plaintext == Array("sealed 4".utf8))
        #expect(plan.pages.first?.page.first?.clock == HybridClock(wall: 1_004, counter: 0, machine: Self.a))
        #expect(!plan.isDone && plan.stalled.isEmpty)
    }

    @Test("a gap: what comes before it moves, the machine waits from there, the others go on")
    func gap() throws {
        // a: 4, 5 then 7 (6 missing); b: 2 (cursor 0: 1 missing, nothing of b moves).
        let plan = try Self.plan(
            [Self.op(Self.a, 4), Self.op(Self.a, 5), Self.op(Self.a, 7), Self.op(Self.b, 2), Self.op(Self.c, 1)],
            cursors: [Self.a: 3])
        #expect(Self.seqs(plan) == [Self.a: [4, 5], Self.c: [1]])
        #expect(plan.stalled == [Self.a, Self.b])
        #expect(plan.damaged == nil)
    }

    @Test("a machine unknown here starts at its first op; one stalled before the read stays stalled")
    func unknownMachine() throws {
        let plan = try Self.plan([Self.op(Self.c, 1), Self.op(Self.c, 2), Self.op(Self.a, 4)], cursors: [Self.a: 3], stalled: [Self.a])
        #expect(Self.seqs(plan) == [Self.c: [1, 2]])
        #expect(plan.stalled == [Self.a])
    }

    @Test("a damaged op: those before it move, its machine stops, the first damage is said; a clock out of range the same")
    func damaged() throws {
        var badClock = Self.op(Self.b, 1)
        badClock.wall = -1
        let plan = try Self.plan([Self.op(Self.a, 1), Self.op(Self.a, 2), Self.op(Self.a, 3), badClock], cursors: [:], damaged: [2])
        #expect(Self.seqs(plan) == [Self.a: [1]])
        #expect(plan.stalled == [Self.a, Self.b])
        #expect(plan.damaged == .damagedOp("op 2 of machine \(Self.a) does not open with this key"))
        var missing = Self.op(Self.c, 1)
        missing.entity = nil
        let field = try Self.plan([missing], cursors: [:])
        #expect(field.damaged == .damagedOp("the op after change 0 of machine \(Self.c) on the server has a field out of range"))
        #expect(throws: SyncError.damagedOp("the server holds a machine id that is not 32 hex digits")) {
            try Self.plan([Self.op("not-a-machine", 1)], cursors: [:])
        }
    }

    @Test("a full group with nothing left moves on to the next group; a group not full is the last")
    func groups() throws {
        let full = try Self.plan([Self.nothing(Self.a), Self.nothing(Self.b)], cursors: [:], groupSize: 2)
        #expect(full.pages.isEmpty && full.nextGroupAfter == Self.b && !full.isDone)
        let last = try Self.plan([Self.nothing(Self.a)], cursors: [:], groupSize: 2)
        #expect(last.isDone)
    }
}
