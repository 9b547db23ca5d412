/// A tiny, fast, deterministic pseudo-random generator (SplitMix64): the same seed gives the
/// same sequence on every run, and no system call per number (unlike
/// `SystemRandomNumberGenerator` on Linux). For picking bench requests, fuzz piece sizes and
/// test data; not for anything secret.
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

    /// A number in `0..<bound` (bound > 0); the modulo bias is negligible for small bounds.
    public mutating func below(_ bound: Int) -> Int {
        Int(truncatingIfNeeded: next() % UInt64(bound))
    }
}
