import LarderAPI
import LarderCLI
import Testing

@Suite("larder stats with calls started but not finished")
struct StatsInFlightTests {
    /// GetMetrics reports a method from its first call on, finished or not; the table shows
    /// finished calls, so the GetMetrics in flight on a fresh server is no row of zeros.
    @Test func methodsWithOnlyCallsInFlightHaveNoRow() {
        let inFlight = MethodMetrics(method: "/larder.admin.v1.Admin/GetMetrics", callsStarted: 1)
        let fresh = StatsOutput.render(Metrics(callsInFlight: 1, latencyBoundsSeconds: [0.001], methods: [inFlight]),
                                       LocalTime(environment: ["TZ": "UTC"]))
        #expect(fresh.contains("Calls        1 in flight, 0 finished\n"))
        #expect(fresh.hasSuffix("No calls yet.\n") && !fresh.contains("GetMetrics"))

        let finished = MethodMetrics(method: "/a.B/C", callsByCode: ["OK": 2], latencyBucketCounts: [2, 0],
                                     latencySumSeconds: 0.001, callsStarted: 2)
        let later = StatsOutput.render(Metrics(latencyBoundsSeconds: [0.001], methods: [inFlight, finished]),
                                       LocalTime(environment: ["TZ": "UTC"]))
        #expect(later.contains("/a.B/C") && !later.contains("GetMetrics"))
    }
}
