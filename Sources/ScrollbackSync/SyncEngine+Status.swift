import Foundation
import ScrollbackModel
import ScrollbackStorage
import TerminalText

// What the server holds for this machine: its machines and what waits to come down.
extension SyncEngine {
    /// The server's machines and how many of their ops wait to be applied here.
    public func serverState() throws -> ServerState {
        try checkServer()
        // Counted, not told by the numbers: a damaged or hostile row's number is no count
        // (and two of them added would not fit in 64 bits).
        let result = try connection.query(
            """
            SELECT (SELECT count(*) FROM scrollback.machine)::int8,
                   (SELECT count(*) FROM scrollback.op AS o
                      JOIN scrollback.machine AS m ON m.machine_id = o.machine_id
                      LEFT JOIN unnest($2::text[], $3::int8[]) AS c (machine_id, seq) ON c.machine_id = o.machine_id
                     WHERE o.machine_id <> $1 AND o.seq > coalesce(c.seq, 0))::int8
            """,
            [.text(machine)] + Self.arrays(of: try store.syncCursors()))
        guard result.rows == 1, let count = result.integer(0, 0), let waiting = result.integer(0, 1), let machineCount = Int(exactly: count)
        else {
            throw SyncError.damagedOp("the server's count of machines and changes is not a number")
        }
        return ServerState(machines: machineCount, toReceive: waiting)
    }
}
