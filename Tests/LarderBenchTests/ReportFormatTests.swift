import Foundation
import LarderTestSupport
import LarderWire
import Testing
@testable import LarderBench

@Suite("CSV and HTML reports")
struct ReportFormatTests {
    /// A 10 s step-ramp run with a latency that grows over time, and data that was deleted.
    static func result() throws -> BenchResult {
        var options = try BenchArgumentsTests.options([
            "--workload", "get", "--load-schedule", "step", "--load-start", "100", "--load-step", "100",
            "--load-step-duration", "2s", "--load-end", "500",
        ])
        options.server = BenchAddress(host: "127.0.0.1", port: 7411)
        var latency = LatencyHistogram()
        var timeline = TimeSeries(widthSeconds: TimeSeries.chartWidth(forSeconds: 10))
        var steps = TimeSeries(widthSeconds: 2)
        var calls = 0
        for millisecond in stride(from: 0, to: 10_000, by: 4) {
            let value = UInt64(200 + millisecond)
            let elapsed = UInt64(millisecond) * 1_000_000
            latency.record(value)
            timeline.record(elapsed: elapsed, latency: value, failed: false)
            steps.record(elapsed: elapsed, latency: value, failed: millisecond % 1000 == 0)
            calls += 1
        }
        var result = BenchResult(
            options: options, seconds: 10, latency: latency, uncorrectedLatency: latency, byWorkload: [:],
            callsByCode: [.ok: calls - 10, .unavailable: 10], firstMessages: [:], lostCalls: 0, connectionFailures: [],
            benchCPUSeconds: 0.1, serverCPUSeconds: nil, cpuWindowSeconds: 10, seeded: ["1000 locations"])
        result.timeline = timeline
        result.steps = steps
        result.cleanup = CleanupReport(prefix: "larder-bench-abc123", created: "1,000 locations named larder-bench-abc123…",
                                       deletedLocations: 1000)
        return result
    }

    @Test func stepsReportTheScheduleRateOfEachStep() throws {
        let result = try Self.result()
        let rows = BenchReport.stepRows(result)
        #expect(rows.map(\.target) == [100, 200, 300, 400, 500])
        #expect(rows.map(\.window.calls) == [500, 500, 500, 500, 500])
        #expect(rows.map(\.window.errors) == [2, 2, 2, 2, 2])
        let text = BenchReport.text(result)
        #expect(text.contains("open loop, step 100 → 500 calls/s, +100 every 2s"))
        #expect(text.contains("steps   from     target/s"))
        let json = try BenchReportTests.parse(BenchReport.json(result))
        let steps = try #require(json["steps"] as? [[String: Any]])
        #expect(steps.compactMap { $0["target_rate"] as? Double } == [100, 200, 300, 400, 500])
        #expect((json["load_schedule"] as? [String: Any])?["kind"] as? String == "step")
        #expect((json["data"] as? [String: Any])?["deleted_locations"] as? Int == 1000)
    }

    /// A run in which no call was answered (a stuck server) reports no latency, not measured
    /// zeros (audit 27 L8).
    @Test func aRunWithNoAnsweredCallShowsNoLatency() throws {
        let options = try BenchArgumentsTests.options(["--workload", "mix", "--mix", "get=1,create=1"])
        let result = BenchResult(
            options: options, seconds: 2, latency: LatencyHistogram(), uncorrectedLatency: nil,
            byWorkload: [.get: WorkloadStats(), .create: WorkloadStats()],
            callsByCode: [:], firstMessages: [:], lostCalls: 0, connectionFailures: [], benchCPUSeconds: 0.01,
            serverCPUSeconds: nil, cpuWindowSeconds: 2, seeded: [])
        let text = BenchReport.text(result)
        #expect(text.contains("  latency      - (no call was answered)\n"), "\(text)")
        #expect(text.contains("  get          0 calls, 0 errors, latency - (no call was answered)\n"), "\(text)")
        #expect(!text.contains("0.0µs"))
        let html = HTMLReport.render(result)
        #expect(html.contains("- (no call was answered)") && !html.contains("0.0µs"))
        // With answers, the numbers are there.
        let answered = try Self.result()
        #expect(BenchReport.text(answered).contains("  latency      mean "))
    }

    /// A step (and windows) in which no call was answered: "-" in the steps tables and empty
    /// latency fields in the CSV, not measured zeros; the answered steps keep their numbers
    /// (review 30 L7).
    @Test func aStepWithNoAnsweredCallShowsNoLatency() throws {
        var result = try Self.result()
        var steps = TimeSeries(widthSeconds: 2)
        for millisecond in stride(from: 0, to: 10_000, by: 4) where !(4_000..<6_000).contains(millisecond) {
            steps.record(elapsed: UInt64(millisecond) * 1_000_000, latency: UInt64(200 + millisecond), failed: false)
        }
        result.steps = steps
        let rows = BenchReport.stepRows(result)
        #expect(rows.map(\.window.calls) == [500, 500, 0, 500, 500])
        let table = BenchReport.stepLines(result).filter { $0.hasPrefix("      ") }
        #expect(table.count == 5, "\(table)")
        #expect(table.count == 5 && table[2].hasSuffix("        -        -        -"), "\(table)")
        #expect(table.count == 5 && !table[1].contains(" -") && !table[3].contains(" -"), "\(table)")
        let csvSteps = CSVReport.render(result).split(separator: "\n").filter { $0.hasPrefix("step,") }
            .map { $0.split(separator: ",", omittingEmptySubsequences: false).suffix(4) }
        #expect(csvSteps.count == 5)
        #expect(csvSteps.count == 5 && csvSteps[2].allSatisfy(\.isEmpty), "\(csvSteps)")
        #expect(csvSteps.count == 5 && csvSteps[3].allSatisfy { UInt64($0) ?? 0 > 0 }, "\(csvSteps)")
        let html = HTMLReport.render(result)
        #expect(html.contains("<td>0</td><td>0</td><td>-</td><td>-</td><td>-</td>"), "\(html)")
    }

    @Test func csvHasOneRowPerTotalStepAndWindow() throws {
        let result = try Self.result()
        let lines = CSVReport.render(result).split(separator: "\n").map(String.init)
        #expect(lines.first == CSVReport.header)
        let columns = CSVReport.header.split(separator: ",").count
        #expect(lines.allSatisfy { $0.split(separator: ",", omittingEmptySubsequences: false).count == columns })
        let sections = lines.dropFirst().map { $0.prefix { $0 != "," } }
        #expect(sections.filter { $0 == "total" }.count == 1)
        #expect(sections.filter { $0 == "step" }.count == 5)
        #expect(sections.filter { $0 == "window" }.count == 100)
        let total = lines[1].split(separator: ",", omittingEmptySubsequences: false)
        #expect(total[5] == "2500" && total[6] == "10")
        #expect(CSVReport.quoted("a,\"b\"") == "\"a,\"\"b\"\"\"")
    }

    @Test func htmlIsOneFileWithoutExternalAssets() throws {
        let html = HTMLReport.render(try Self.result())
        for forbidden in ["http://", "https://", "src=", "<link", "@import", "url("] {
            #expect(!html.contains(forbidden), "the page refers to something outside itself: \(forbidden)")
        }
        #expect(html.contains("<svg class=\"chart\" id=\"latency-histogram\""))
        #expect(html.contains("<svg class=\"chart\" id=\"latency-over-time\""))
        #expect(html.contains("<svg class=\"chart\" id=\"throughput-over-time\""))
        #expect(html.contains("deleted 1,000 locations"))
    }

    @Test func htmlChartsAreDrawnByHeadlessChromium() async throws {
        let result = try Self.result()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("larder-bench-report-\(UUID().uuidString).html")
        try HTMLReport.render(result).write(to: file, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        // Waits up to minutes for the browser: on a thread of its own, not the shared pool's.
        let dom = try await offThePool { try Chromium.dumpDOM(of: file) }
        #expect(dom.contains("data-charts-checked=\"true\""), "the page's script did not run:\n\(dom.prefix(500))")
        let bars = HistogramChart(result.latency).rows.count
        let windows = BenchReport.timelineRows(result).count
        // Marks with a laid-out size, per chart: bars; three lines and their points; two lines and their points.
        #expect(drawn("latency-histogram", in: dom) == bars)
        #expect(drawn("latency-over-time", in: dom) == 3 * (windows + 1))
        #expect(drawn("throughput-over-time", in: dom) == 2 * (windows + 1))
        #expect(bars > 3 && windows == 100)
    }

    private func drawn(_ id: String, in dom: String) -> Int? {
        guard let start = dom.range(of: "id=\"\(id)\"") else { return nil }
        let tag = dom[start.upperBound...].prefix { $0 != ">" }
        guard let attribute = tag.range(of: "data-drawn=\"") else { return nil }
        return Int(tag[attribute.upperBound...].prefix { $0.isNumber })
    }
}
