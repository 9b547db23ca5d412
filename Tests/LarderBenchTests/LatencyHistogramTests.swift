import Testing
@testable import LarderBench

@Suite("LatencyHistogram")
struct LatencyHistogramTests {
    /// 1...10000 µs, once each.
    static func uniform() -> LatencyHistogram {
        var histogram = LatencyHistogram()
        for value in UInt64(1)...10_000 { histogram.record(value) }
        return histogram
    }

    /// Within the 3-significant-digit precision: at or above `expected`, at most 0.1% more.
    static func isClose(_ actual: UInt64, to expected: UInt64) -> Bool {
        actual >= expected && Double(actual - expected) <= Double(expected) / 1000
    }

    @Test(arguments: [(50.0, UInt64(5000)), (90, 9000), (99, 9900), (99.9, 9990), (100, 10_000), (1, 100)])
    func uniformPercentiles(percentile: Double, expected: UInt64) {
        let value = Self.uniform().value(atPercentile: percentile)
        #expect(Self.isClose(value, to: expected), "p\(percentile) = \(value), expected ≈ \(expected)")
    }

    @Test func uniformMinMaxMeanCount() {
        let histogram = Self.uniform()
        #expect(histogram.totalCount == 10_000)
        #expect(histogram.min == 1)
        #expect(histogram.max == 10_000)
        #expect(histogram.mean == 5000.5)
        // The standard deviation of 1...n is sqrt((n^2 - 1) / 12) ≈ 2886.75; bucket midpoints add < 0.1%.
        #expect(abs(histogram.standardDeviation - 2886.75) < 3)
    }

    @Test func bimodal() {
        var histogram = LatencyHistogram()
        histogram.record(100, count: 9000)
        histogram.record(50_000, count: 1000)
        #expect(histogram.value(atPercentile: 50) == 100)
        #expect(histogram.value(atPercentile: 90) == 100)
        #expect(Self.isClose(histogram.value(atPercentile: 90.01), to: 50_000))
        #expect(Self.isClose(histogram.value(atPercentile: 99), to: 50_000))
        #expect(histogram.min == 100)
        #expect(histogram.max == 50_000)
        let expectedMean: Double = (100 * 9000 + 50_000 * 1000) / 10_000
        #expect(histogram.mean == expectedMean)
    }

    @Test(arguments: [UInt64(1), 7, 999, 1024, 2047, 2048, 2049, 123_456, 59_999_999, 3_600_000_000])
    func singleValueKeepsThreeSignificantDigits(value: UInt64) {
        var histogram = LatencyHistogram()
        histogram.record(value)
        #expect(Self.isClose(histogram.value(atPercentile: 50), to: value))
        #expect(histogram.min == value && histogram.max == value)
        #expect(histogram.clampedCount == 0)
    }

    @Test func valuesAboveTheRangeAreClampedAndCounted() {
        var histogram = LatencyHistogram()
        histogram.record(LatencyHistogram.highestTrackableValue + 5)
        histogram.record(10)
        #expect(histogram.clampedCount == 1)
        #expect(histogram.max == LatencyHistogram.highestTrackableValue)
        #expect(histogram.totalCount == 2)
    }

    @Test func mergeEqualsRecordingEverythingInOne() {
        var odd = LatencyHistogram()
        var even = LatencyHistogram()
        for value in UInt64(1)...10_000 {
            if value % 2 == 0 { even.record(value) } else { odd.record(value) }
        }
        var merged = odd
        merged.merge(even)
        let whole = Self.uniform()
        #expect(merged == whole)
        #expect(merged.value(atPercentile: 99.9) == whole.value(atPercentile: 99.9))
        #expect(merged.min == 1 && merged.max == 10_000)
    }

    @Test func emptyHistogramReportsZeros() {
        let histogram = LatencyHistogram()
        #expect(histogram.totalCount == 0)
        #expect(histogram.value(atPercentile: 99) == 0)
        #expect(histogram.mean == 0 && histogram.min == 0 && histogram.max == 0)
        #expect(histogram.percentileSpectrum().isEmpty)
    }

    @Test func spectrumRunsFromMinimumToMaximum() {
        let histogram = Self.uniform()
        let lines = histogram.percentileSpectrum()
        #expect(lines.first?.percentile == 0)
        #expect(lines.first?.value == 1)
        #expect(lines.last == PercentileLine(value: 10_000, percentile: 100, totalCount: 10_000))
        for (previous, next) in zip(lines, lines.dropFirst()) {
            #expect(previous.percentile < next.percentile)
            #expect(previous.value <= next.value)
            #expect(previous.totalCount <= next.totalCount)
        }
        // The 50% line: half the values are at or below it.
        let median = lines.first { $0.percentile == 50 }
        #expect(median.map { Self.isClose($0.value, to: 5000) } == true)
        #expect(median.map { $0.totalCount >= 5000 && $0.totalCount <= 5004 } == true)
    }

    @Test func spectrumTextHasHdrHistogramColumnsInMilliseconds() {
        var histogram = LatencyHistogram()
        histogram.record(1500, count: 3)
        let text = histogram.percentileSpectrumText()
        let rows = text.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.contains("Value") }
        let last = rows.last.map { $0.split(separator: " ").map(String.init) }
        #expect(last == ["1.500", "1.000000000000", "3", "inf"])
        #expect(text.contains("#[Max     = 1.500, Total count    = 3]"))
    }
}
