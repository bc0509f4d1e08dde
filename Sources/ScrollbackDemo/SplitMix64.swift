/// A small, fast, seedable generator (SplitMix64), so that a demo is the same for a seed on
/// every machine.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in 0..<bound.
    public mutating func below(_ bound: Int) -> Int {
        Int(next() % UInt64(max(bound, 1)))
    }

    /// True with probability `percent`/100.
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }

    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }

    /// A version-4 UUID, lowercase.
    mutating func uuid() -> String {
        let high = next()
        let low = next()
        let hex = String(format: "%016llx%016llx", high, low)
        let chars = Array(hex)
        var result = ""
        for (index, character) in chars.enumerated() {
            if [8, 12, 16, 20].contains(index) { result.append("-") }
            switch index {
            case 12: result.append("4")
            case 16: result.append(["8", "9", "a", "b"][Int(String(character), radix: 16).map { $0 & 3 } ?? 0])
            default: result.append(character)
            }
        }
        return result
    }
}
