import LarderStore

/// A meal record id as its 128 bits: the key of `MealKeyIndex`.
struct MealKey: Hashable, Sendable, CustomStringConvertible {
    let high: UInt64
    let low: UInt64

    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The bits of `id`, an 8-4-4-4-12 UUID string (either case), or nil when it is not one.
    init?(id: String) {
        var id = id
        guard let key = id.withUTF8({ Self(utf8: UnsafeRawBufferPointer($0)) }) else { return nil }
        self = key
    }

    /// The bits of the UUID text in `utf8`, or nil when it is not one.
    init?(utf8: UnsafeRawBufferPointer) {
        guard let (high, low) = StoreID.words(utf8: utf8) else { return nil }
        self.init(high: high, low: low)
    }

    /// The id in lower case, 8-4-4-4-12.
    var description: String { StoreID.format(high: high, low: low) }
}
