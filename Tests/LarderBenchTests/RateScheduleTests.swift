import Testing
@testable import LarderBench

@Suite("RateSchedule")
struct RateScheduleTests {
    @Test(arguments: [(1000.0, 1_000_000.0), (20_000, 50_000), (3, 1e9 / 3)] as [(Double, Double)])
    func intendedTimesAreEvenlySpaced(rate: Double, interval: Double) {
        var schedule = RateSchedule(ratePerSecond: rate, start: 5_000)
        var times: [UInt64] = []
        for _ in 0..<100 {
            times.append(schedule.nextTime)
            schedule.advance()
        }
        #expect(times.first == 5_000)
        for (index, time) in times.enumerated() {
            let expected = 5_000 + Double(index) * interval
            #expect(abs(Double(time) - expected) <= 1, "call \(index) at \(time), expected \(expected)")
        }
        #expect(schedule.index == 100)
    }

    @Test func correctedLatencyAddsTheSchedulingDelay() {
        let intended: UInt64 = 1_000_000
        let sent: UInt64 = 1_750_000   // 750 µs late: the call waited for a free slot
        let completed: UInt64 = 2_000_000
        let uncorrected = RateSchedule.uncorrectedLatency(sent: sent, completed: completed)
        let corrected = RateSchedule.correctedLatency(intended: intended, completed: completed)
        #expect(uncorrected == 250)
        #expect(corrected == 1000)
        #expect(corrected - uncorrected == (sent - intended) / 1000)
    }

    @Test func latencyNeverGoesNegative() {
        #expect(RateSchedule.correctedLatency(intended: 10_000, completed: 5_000) == 0)
        #expect(RateSchedule.uncorrectedLatency(sent: 10_000, completed: 5_000) == 0)
    }
}
