import Foundation
import LarderWire
import Testing
@testable import LarderBench

@Suite("BenchReport")
struct BenchReportTests {
    static func result(rate: Double?, serverCPU: Double?) -> BenchResult {
        var options = BenchOptions()
        options.workload = .mix
        options.mix = .standard
        options.rate = rate
        var latency = LatencyHistogram()
        for value in UInt64(100)...1099 { latency.record(value) }
        var getStats = WorkloadStats()
        getStats.latency.record(250, count: 4)
        getStats.errors = 1
        return BenchResult(
            options: options, seconds: 2, latency: latency, uncorrectedLatency: rate == nil ? nil : latency,
            byWorkload: [.get: getStats, .create: WorkloadStats()],
            callsByCode: [.ok: 990, .notFound: 10], firstMessages: [.notFound: "location \"x\" not found"],
            lostCalls: 0, connectionFailures: [], benchCPUSeconds: 0.004, serverCPUSeconds: serverCPU,
            cpuWindowSeconds: 2, seeded: ["1000 locations"])
    }

    static func parse(_ text: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return try #require(object as? [String: Any])
    }

    @Test func jsonHasEveryKeyWithItsType() throws {
        let json = try Self.parse(BenchReport.json(Self.result(rate: nil, serverCPU: 1.5)))
        #expect(json["workload"] as? String == "mix")
        #expect(json["mix"] as? [String: Int] == ["get": 80, "create": 15, "list": 5])
        #expect(json["server"] as? String == "127.0.0.1:7411")
        for key in ["connections", "concurrency", "threads", "calls", "ok", "errors", "lost_calls"] {
            #expect(json[key] is Int, "\(key) should be an integer")
        }
        #expect(json["calls"] as? Int == 1000)
        #expect(json["ok"] as? Int == 990)
        #expect(json["errors"] as? Int == 10)
        #expect(json["errors_by_code"] as? [String: Int] == ["NOT_FOUND": 10])
        #expect(json["first_error_messages"] as? [String: String] == ["NOT_FOUND": "location \"x\" not found"])
        #expect(json["calls_per_s"] as? Double == 500)
        #expect(json["seconds"] as? Double == 2)
        #expect(json["rate"] is NSNull)
        #expect(json["latency_uncorrected_us"] is NSNull)
        #expect(json["seeded"] as? [String] == ["1000 locations"])
        #expect(json["bench_cpu_us_per_call"] as? Double == 4)
        #expect(json["bench_cpu_pct"] as? Double == 0.2)
        #expect(json["server_cpu_pct"] as? Double == 75)
        #expect(json["server_cpu_us_per_call"] as? Double == 1500)
        let latency = try #require(json["latency_us"] as? [String: Any])
        #expect(Set(latency.keys) == ["count", "min", "mean", "stddev", "p50", "p90", "p99", "p999", "p9999", "max"])
        #expect(latency["min"] as? Int == 100)
        #expect(latency["max"] as? Int == 1099)
        #expect(latency["count"] as? Int == 1000)
        let p50 = try #require(latency["p50"] as? Int)
        #expect(p50 >= 599 && p50 <= 600)
        let byWorkload = try #require(json["by_workload"] as? [String: [String: Any]])
        #expect(byWorkload.keys.sorted() == ["create", "get"])
        #expect(byWorkload["get"]?["calls"] as? Int == 4)
        #expect(byWorkload["get"]?["errors"] as? Int == 1)
        #expect((byWorkload["get"]?["latency_us"] as? [String: Any])?["p50"] as? Int == 250)
        #expect(byWorkload["create"]?["calls"] as? Int == 0)
        let histogram = try #require(json["histogram"] as? [[String: Int]])
        #expect(histogram.map { $0["count"] ?? 0 }.reduce(0, +) == 1000)
        #expect(histogram.first?["from_us"] == 100)
        #expect(histogram.last?["to_us"] == 2000)
    }

    @Test func openLoopJsonCarriesTheUncorrectedLatencyAndNullServerCPU() throws {
        let json = try Self.parse(BenchReport.json(Self.result(rate: 5000, serverCPU: nil)))
        #expect(json["rate"] as? Double == 5000)
        let uncorrected = try #require(json["latency_uncorrected_us"] as? [String: Any])
        #expect(uncorrected["count"] as? Int == 1000)
        #expect(json["server_cpu_pct"] is NSNull)
        #expect(json["server_cpu_us_per_call"] is NSNull)
    }

    @Test func textReportNamesErrorsAndDrawsTheHistogram() {
        let text = BenchReport.text(Self.result(rate: 5000, serverCPU: 1))
        #expect(text.contains("calls        1,000, 10 errors"))
        #expect(text.contains("error        NOT_FOUND × 10 (first: location \"x\" not found)"))
        #expect(text.contains("(from send)"))
        #expect(text.contains("  get          4 calls, 1 errors, p50 250µs, p99 250µs, max 250µs"))
        #expect(text.contains("bench CPU    4.00 µs/call"))
        #expect(text.contains("server CPU   50.0% of a core"))
        let bars = text.split(separator: "\n").filter { $0.contains("│") }
        // 100-1099 µs spans 100-200 µs, 200-500 µs, 500 µs-1 ms and 1-2 ms.
        #expect(bars.count == 4)
        #expect(bars.contains { $0.contains("500µs – 1.00ms") && $0.contains("50.0%") && $0.hasSuffix("500") })
    }

    @Test func theFirstErrorMessageIsPrintedWithControlCharactersEscaped() {
        var result = Self.result(rate: nil, serverCPU: nil)
        result.firstMessages = [.notFound: "location \"\u{1B}[2J\" not found"]
        #expect(BenchReport.text(result).contains(#"error        NOT_FOUND × 10 (first: location "\u{1B}[2J" not found)"#))
    }

    @Test func theJSONReportEscapesC1ControlsToo() throws {
        var result = Self.result(rate: nil, serverCPU: nil)
        result.firstMessages = [.notFound: "a\u{1B}[2J b\u{9B}31m c\u{85}"]
        let text = BenchReport.json(result)
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || (0x7F...0x9F).contains($0.value) })
        #expect(text.contains(#""NOT_FOUND":"a\u001b[2J b\u009b31m c\u0085""#))
        let json = try Self.parse(text)
        #expect(json["first_error_messages"] as? [String: String] == ["NOT_FOUND": "a\u{1B}[2J b\u{9B}31m c\u{85}"])
    }

    @Test func chartRowsCoverEveryValueInLogSpacedRanges() {
        var histogram = LatencyHistogram()
        histogram.record(3, count: 5)
        histogram.record(700, count: 10)
        histogram.record(45_000, count: 1)
        let rows = HistogramChart(histogram).rows
        #expect(rows.first == HistogramChart.Row(lower: 2, upper: 5, count: 5))
        #expect(rows.last == HistogramChart.Row(lower: 20_000, upper: 50_000, count: 1))
        #expect(rows.contains(HistogramChart.Row(lower: 500, upper: 1000, count: 10)))
        #expect(rows.map(\.count).reduce(0, +) == 16)
        for (previous, next) in zip(rows, rows.dropFirst()) { #expect(previous.upper == next.lower) }
    }

    @Test func histogramBarsLineUpWhateverTheLabelWidths() {
        var histogram = LatencyHistogram()
        histogram.record(300, count: 5)  // "200µs – 500µs"
        histogram.record(150_000, count: 5)  // "100.00ms – 200.00ms"
        let lines = HistogramChart(histogram).render()
        #expect(lines.count >= 2)
        let columns = Set(lines.map { line in line.distance(from: line.startIndex, to: line.firstIndex(of: "│") ?? line.endIndex) })
        #expect(columns.count == 1, "\(lines.joined(separator: "\n"))")
    }

    @Test func procStatParsing() {
        let line = "1234 (my (odd) server) S 1 1234 1234 0 -1 4194560 500 0 0 0 250 50 0 0 20 0 4 0 100 0 0"
        let ticks = 100.0
        let seconds = CPUUsage.parseStat(line)
        #expect(seconds.map { abs($0 - 300 / ticks) < 1e-9 } == true)
        #expect(CPUUsage.parseStat("garbage") == nil)
    }
}
