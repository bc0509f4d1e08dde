/// A hybrid logical clock reading: the wall time in milliseconds, a counter for events in
/// the same millisecond (or while the wall clock stands behind), and the machine that made
/// it, which breaks ties. Readings order every change of every machine; a machine's next
/// reading is after every reading it has seen, so that a change made after seeing another
/// is ordered after it whatever the machines' wall clocks say.
public struct HybridClock: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var wall: Int64
    public var counter: Int64
    /// 32 lower-case hex digits.
    public var machine: String

    /// The wall time is kept within 48 bits (to the year 10889) and the counter within 32.
    public static let wallLimit: Int64 = (1 << 48) - 1
    public static let counterLimit: Int64 = (1 << 32) - 1

    public init(wall: Int64, counter: Int64, machine: String) {
        self.wall = min(max(wall, 0), Self.wallLimit)
        self.counter = min(max(counter, 0), Self.counterLimit)
        self.machine = machine
    }

    /// The reading before any change: what the state a machine had before sync was turned
    /// on is stamped with (any change made with sync on is newer).
    public static func origin(of machine: String) -> HybridClock {
        HybridClock(wall: 0, counter: 0, machine: machine)
    }

    /// The next reading for a change made here at `now` (milliseconds).
    public func tick(now: Int64) -> HybridClock {
        if now > wall { return HybridClock(wall: now, counter: 0, machine: machine) }
        if counter < Self.counterLimit { return HybridClock(wall: wall, counter: counter + 1, machine: machine) }
        // The counter is full: the wall time moves on by one millisecond instead.
        return HybridClock(wall: wall + 1, counter: 0, machine: machine)
    }

    /// This machine's reading after seeing `remote`: after both.
    public func observing(_ remote: HybridClock) -> HybridClock {
        guard remote.wall > wall || (remote.wall == wall && remote.counter > counter) else { return self }
        return HybridClock(wall: remote.wall, counter: remote.counter, machine: machine)
    }

    public static func < (lhs: HybridClock, rhs: HybridClock) -> Bool {
        if lhs.wall != rhs.wall { return lhs.wall < rhs.wall }
        if lhs.counter != rhs.counter { return lhs.counter < rhs.counter }
        return lhs.machine < rhs.machine
    }

    /// Fixed-width text that sorts as the readings do: 12 hex digits of wall time, 8 of
    /// counter, then the machine.
    public var text: String {
        Self.hex(wall, width: 12) + Self.hex(counter, width: 8) + machine
    }

    public var description: String { text }

    /// Reads `text`; nil for anything `text` never writes.
    public init?(text: String) {
        let utf8 = Array(text.utf8)
        guard utf8.count == 52, let wall = Self.parseHex(utf8[0..<12]), let counter = Self.parseHex(utf8[12..<20]) else {
            return nil
        }
        let machine = String(decoding: utf8[20...], as: UTF8.self)
        guard Self.isMachineID(machine) else { return nil }
        self.init(wall: wall, counter: counter, machine: machine)
    }

    /// Whether `text` is a machine id: 32 lower-case hex digits.
    public static func isMachineID(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }

    private static func hex(_ value: Int64, width: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    private static func parseHex(_ bytes: ArraySlice<UInt8>) -> Int64? {
        var value: Int64 = 0
        for byte in bytes {
            let digit: Int64
            switch byte {
            case 48...57: digit = Int64(byte - 48)
            case 97...102: digit = Int64(byte - 87)
            default: return nil
            }
            value = value * 16 + digit
        }
        return value
    }
}
