/// An HDR-style log-linear histogram of latencies in microseconds.
///
/// Values from 0 to `highestTrackableValue` (1 hour) are kept with 3
/// significant decimal digits: every value is counted in a bucket whose width
/// is at most 1/1024 of the value (so a reported value is within 0.1% of the
/// recorded one). Larger values are clamped to the highest trackable value
/// and counted in `clampedCount`. Memory is fixed (about 190 KiB); recording
/// is a few integer operations. Exact minimum, maximum and sum are kept beside
/// the buckets, so `min`, `max` and `mean` are exact.
public struct LatencyHistogram: Sendable, Equatable {
    /// log2 of half the sub-buckets per bucket: 1024 gives 3 significant digits.
    static let subBucketHalfCountMagnitude = 10
    static let subBucketHalfCount = 1 << subBucketHalfCountMagnitude
    static let subBucketCount = 2 * subBucketHalfCount
    static let subBucketMask = UInt64(subBucketCount - 1)
    /// 64 - unit magnitude (0) - subBucketHalfCountMagnitude - 1.
    static let leadingZeroCountBase = 64 - subBucketHalfCountMagnitude - 1

    /// The largest value kept exactly (in µs): one hour.
    public static let highestTrackableValue: UInt64 = 3_600_000_000
    static let bucketCount: Int = {
        var smallestUntrackable = UInt64(subBucketCount)
        var buckets = 1
        while smallestUntrackable <= highestTrackableValue {
            smallestUntrackable <<= 1
            buckets += 1
        }
        return buckets
    }()
    static let countsLength = (bucketCount + 1) * subBucketHalfCount

    private var counts: [UInt64]
    /// Number of recorded values.
    public private(set) var totalCount: UInt64 = 0
    /// Values above `highestTrackableValue`, recorded as that value.
    public private(set) var clampedCount: UInt64 = 0
    private var sum: Double = 0
    private var minimum = UInt64.max
    private var maximum: UInt64 = 0

    public init() {
        counts = [UInt64](repeating: 0, count: Self.countsLength)
    }

    /// Records one latency of `value` microseconds.
    public mutating func record(_ value: UInt64) {
        record(value, count: 1)
    }

    /// Records `count` latencies of `value` microseconds.
    public mutating func record(_ value: UInt64, count: UInt64) {
        guard count > 0 else { return }
        var value = value
        if value > Self.highestTrackableValue {
            value = Self.highestTrackableValue
            clampedCount += count
        }
        counts[Self.countsIndex(for: value)] &+= count
        totalCount &+= count
        sum += Double(value) * Double(count)
        if value < minimum { minimum = value }
        if value > maximum { maximum = value }
    }

    /// Adds every value recorded in `other`.
    public mutating func merge(_ other: LatencyHistogram) {
        guard other.totalCount > 0 else { return }
        for index in 0..<Self.countsLength where other.counts[index] != 0 {
            counts[index] &+= other.counts[index]
        }
        totalCount &+= other.totalCount
        clampedCount &+= other.clampedCount
        sum += other.sum
        minimum = Swift.min(minimum, other.minimum)
        maximum = Swift.max(maximum, other.maximum)
    }

    /// The smallest recorded value (0 when empty).
    public var min: UInt64 { totalCount == 0 ? 0 : minimum }
    /// The largest recorded value (0 when empty).
    public var max: UInt64 { maximum }
    /// The arithmetic mean of the recorded values (0 when empty).
    public var mean: Double { totalCount == 0 ? 0 : sum / Double(totalCount) }

    /// The standard deviation, from bucket midpoints.
    public var standardDeviation: Double {
        guard totalCount > 0 else { return 0 }
        let mean = self.mean
        var squares = 0.0
        forEachNonEmptyBucket { value, count in
            let delta = Double(Self.medianEquivalentValue(value)) - mean
            squares += delta * delta * Double(count)
        }
        return (squares / Double(totalCount)).squareRoot()
    }

    /// The value at `percentile` (0-100): the highest value equivalent to the
    /// smallest recorded value with at least that share of values at or below it,
    /// as HdrHistogram reports it. 0 when empty.
    public func value(atPercentile percentile: Double) -> UInt64 {
        guard totalCount > 0 else { return 0 }
        let clamped = Swift.min(Swift.max(percentile, 0), 100)
        let wanted = Swift.max(1, UInt64((clamped / 100 * Double(totalCount)).rounded()))
        var seen: UInt64 = 0
        for index in 0..<Self.countsLength where counts[index] != 0 {
            seen += counts[index]
            if seen >= wanted {
                return Swift.min(Self.highestEquivalentValue(Self.value(atIndex: index)), maximum)
            }
        }
        return maximum
    }

    /// Calls `body` with the lowest value of each non-empty bucket and its count, in increasing order.
    func forEachNonEmptyBucket(_ body: (UInt64, UInt64) -> Void) {
        for index in 0..<Self.countsLength where counts[index] != 0 {
            body(Self.value(atIndex: index), counts[index])
        }
    }

    // MARK: - Index arithmetic (HdrHistogram's layout, unit magnitude 0)

    static func countsIndex(for value: UInt64) -> Int {
        let bucketIndex = leadingZeroCountBase - (value | subBucketMask).leadingZeroBitCount
        let subBucketIndex = Int(truncatingIfNeeded: value >> UInt64(bucketIndex))
        return ((bucketIndex + 1) << subBucketHalfCountMagnitude) + (subBucketIndex - subBucketHalfCount)
    }

    static func value(atIndex index: Int) -> UInt64 {
        var bucketIndex = (index >> subBucketHalfCountMagnitude) - 1
        var subBucketIndex = (index & (subBucketHalfCount - 1)) + subBucketHalfCount
        if bucketIndex < 0 {
            subBucketIndex -= subBucketHalfCount
            bucketIndex = 0
        }
        return UInt64(subBucketIndex) << UInt64(bucketIndex)
    }

    /// The width of the bucket holding `value`: all values in it are equivalent.
    static func sizeOfEquivalentRange(_ value: UInt64) -> UInt64 {
        let bucketIndex = leadingZeroCountBase - (value | subBucketMask).leadingZeroBitCount
        let subBucketIndex = Int(truncatingIfNeeded: value >> UInt64(bucketIndex))
        let adjusted = subBucketIndex >= subBucketCount ? bucketIndex + 1 : bucketIndex
        return UInt64(1) << UInt64(adjusted)
    }

    static func lowestEquivalentValue(_ value: UInt64) -> UInt64 {
        let bucketIndex = leadingZeroCountBase - (value | subBucketMask).leadingZeroBitCount
        let subBucketIndex = value >> UInt64(bucketIndex)
        return subBucketIndex << UInt64(bucketIndex)
    }

    static func highestEquivalentValue(_ value: UInt64) -> UInt64 {
        lowestEquivalentValue(value) + sizeOfEquivalentRange(value) - 1
    }

    static func medianEquivalentValue(_ value: UInt64) -> UInt64 {
        lowestEquivalentValue(value) + sizeOfEquivalentRange(value) / 2
    }
}

extension LatencyHistogram: CustomStringConvertible {
    /// `count 300, min 12µs, p50 40µs, p99 90µs, max 120µs`.
    public var description: String {
        "count \(totalCount), min \(min)µs, p50 \(value(atPercentile: 50))µs, p99 \(value(atPercentile: 99))µs, max \(max)µs"
    }
}
