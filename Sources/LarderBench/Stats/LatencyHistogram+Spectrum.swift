/// One line of a percentile spectrum: the value at a percentile and how many
/// values are at or below it.
public struct PercentileLine: Sendable, Equatable {
    /// Latency in microseconds.
    public var value: UInt64
    /// 0-100.
    public var percentile: Double
    /// Recorded values at or below `value`.
    public var totalCount: UInt64
}

extension LatencyHistogram {
    /// The percentile spectrum as HdrHistogram iterates it: steps halve every
    /// time the remaining tail halves (`ticksPerHalfDistance` steps per half),
    /// ending with a line at 100%.
    public func percentileSpectrum(ticksPerHalfDistance: Int = 5) -> [PercentileLine] {
        guard totalCount > 0 else { return [] }
        var lines: [PercentileLine] = []
        var nonEmpty: [(value: UInt64, cumulative: UInt64)] = []
        var cumulative: UInt64 = 0
        forEachNonEmptyBucket { value, count in
            cumulative += count
            nonEmpty.append((value, cumulative))
        }
        var percentile = 0.0
        var cursor = 0
        // Bounded: each step either advances the percentile or the cursor; 100 000 lines at most.
        while lines.count < 100_000 {
            let wanted = Swift.max(1, UInt64((percentile / 100 * Double(totalCount)).rounded(.up)))
            while cursor < nonEmpty.count - 1 && nonEmpty[cursor].cumulative < wanted { cursor += 1 }
            let entry = nonEmpty[cursor]
            if entry.cumulative >= totalCount { break }
            lines.append(PercentileLine(
                value: Swift.min(Self.highestEquivalentValue(entry.value), max),
                percentile: percentile, totalCount: entry.cumulative))
            let halvings = (100 / (100 - percentile)).log2Floor
            let ticks = Double(ticksPerHalfDistance) * Double(1 << (halvings + 1))
            percentile += 100 / ticks
        }
        lines.append(PercentileLine(value: max, percentile: 100, totalCount: totalCount))
        return lines
    }

    /// The spectrum as HdrHistogram's text output: value in milliseconds,
    /// percentile as a fraction, total count, 1/(1-percentile), then a footer.
    public func percentileSpectrumText() -> String {
        var text = "       Value   Percentile   TotalCount 1/(1-Percentile)\n\n"
        for line in percentileSpectrum() {
            let fraction = line.percentile / 100
            let inverse = fraction < 1 ? Format.fixed(1 / (1 - fraction), digits: 2) : "inf"
            text += Format.padLeft(Format.fixed(Double(line.value) / 1000, digits: 3), 12) + " "
                + Format.padLeft(Format.fixed(fraction, digits: 12), 14) + " "
                + Format.padLeft(String(line.totalCount), 10) + " "
                + Format.padLeft(inverse, 14) + "\n"
        }
        text += "#[Mean    = \(Format.fixed(mean / 1000, digits: 3)), StdDeviation   = "
            + "\(Format.fixed(standardDeviation / 1000, digits: 3))]\n"
        text += "#[Max     = \(Format.fixed(Double(max) / 1000, digits: 3)), Total count    = \(totalCount)]\n"
        text += "#[Buckets = \(Self.bucketCount), SubBuckets     = \(Self.subBucketCount)]\n"
        text += "# values in milliseconds\n"
        return text
    }
}

extension Double {
    /// floor(log2(self)) for self >= 1, 0 below; capped at 52 so shifts stay valid.
    var log2Floor: Int {
        guard self >= 1, isFinite else { return self.isFinite ? 0 : 52 }
        return Swift.min(52, Int(exponent))
    }
}
