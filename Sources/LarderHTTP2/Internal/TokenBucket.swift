/// A token bucket: `burst` tokens at first and at most, `ratePerSecond` back each second.
/// Each suspicious frame takes one; an empty bucket means a flood.
struct TokenBucket {
    let burst: Double
    let ratePerSecond: Double
    private var tokens: Double
    private var updatedAt: UInt64

    init(burst: Int, ratePerSecond: Int, now: UInt64) {
        self.burst = Double(burst)
        self.ratePerSecond = Double(ratePerSecond)
        tokens = Double(burst)
        updatedAt = now
    }

    /// Takes a token; false when none is left.
    mutating func take(now: UInt64) -> Bool {
        if now > updatedAt {
            tokens = min(burst, tokens + Double(now - updatedAt) / 1e9 * ratePerSecond)
            updatedAt = now
        }
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
