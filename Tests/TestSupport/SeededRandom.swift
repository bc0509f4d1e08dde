import ScrollbackDemo

/// A small deterministic generator, so that a failing case can be replayed: the demo's
/// SplitMix64, one implementation for both.
public typealias SeededRandom = SplitMix64
