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
        refill(now: now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// Takes a token, on credit when none is left, down to `burst` tokens owed; false (and
    /// nothing taken) past that.
    mutating func borrow(now: UInt64) -> Bool {
        refill(now: now)
        guard tokens - 1 >= -burst else { return false }
        tokens -= 1
        return true
    }

    /// How long (nanoseconds) until the bucket holds a whole token again: 0 if it does.
    mutating func waitForToken(now: UInt64) -> UInt64 {
        refill(now: now)
        guard tokens < 1, ratePerSecond > 0 else { return 0 }
        return UInt64(((1 - tokens) / ratePerSecond * 1e9).rounded(.up))
    }

    private mutating func refill(now: UInt64) {
        guard now > updatedAt else { return }
        tokens = min(burst, tokens + Double(now - updatedAt) / 1e9 * ratePerSecond)
        updatedAt = now
    }
}
