/// A small log-linear latency histogram (µs) for one window of a time series:
/// 64 buckets per power of two above 64 µs, so a reported value is within
/// about 1.6% of the recorded one; 7 KiB, values above ~71 minutes clamped.
public struct CoarseHistogram: Sendable, Equatable {
    private static let linear: UInt64 = 64
    private static let subBits: UInt64 = 6
    private static let octaves = 27
    private static let size = Int(linear) + octaves * Int(linear)
    private static let largest: UInt64 = (1 << 32) - 1

    private var counts = [UInt32](repeating: 0, count: CoarseHistogram.size)
    /// Recorded values.
    public private(set) var totalCount: UInt64 = 0
    /// The largest recorded value (exact).
    public private(set) var max: UInt64 = 0

    public init() {}

    /// Records one latency of `value` µs.
    public mutating func record(_ value: UInt64) {
        counts[Self.index(of: Swift.min(value, Self.largest))] &+= 1
        totalCount += 1
        if value > max { max = value }
    }

    /// Adds every value of `other`.
    public mutating func merge(_ other: CoarseHistogram) {
        guard other.totalCount > 0 else { return }
        for index in counts.indices where other.counts[index] != 0 { counts[index] &+= other.counts[index] }
        totalCount += other.totalCount
        max = Swift.max(max, other.max)
    }

    /// The value at `percentile` (0-100): the middle of the bucket that holds it, never above `max`.
    public func value(atPercentile percentile: Double) -> UInt64 {
        guard totalCount > 0 else { return 0 }
        let wanted = Swift.max(1, UInt64((percentile / 100 * Double(totalCount)).rounded(.up)))
        var seen: UInt64 = 0
        for index in counts.indices where counts[index] != 0 {
            seen += UInt64(counts[index])
            if seen >= wanted { return Swift.min(Self.middle(of: index), max) }
        }
        return max
    }

    static func index(of value: UInt64) -> Int {
        guard value >= linear else { return Int(value) }
        let shift = UInt64(63 - value.leadingZeroBitCount) - subBits
        let top = value >> shift
        return Int(linear + shift * linear + (top - linear))
    }

    static func middle(of index: Int) -> UInt64 {
        guard index >= Int(linear) else { return UInt64(index) }
        let shift = UInt64(index - Int(linear)) / linear
        let top = linear + UInt64(index - Int(linear)) % linear
        return (top << shift) + ((1 << shift) >> 1)
    }
}
