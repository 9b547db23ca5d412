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

    /// `--threads n --rate r`: each loop sends r/n a second, loop i starting i/n of its interval in,
    /// so together they make one even schedule at r from the start. (Loop i used to start i whole
    /// intervals in: 16 loops at 160/s sent 680 calls in 5 s, not 800, in bursts of 16.)
    @Test(arguments: [1, 2, 3, 16])
    func loopsTogetherMakeOneEvenSchedule(loops: Int) {
        let rate = 160.0
        var schedules = (0..<loops).map {
            RateSchedule(ratePerSecond: rate / Double(loops), start: 1_000, phase: Double($0) / Double(loops))
        }
        var times: [UInt64] = []
        let end: UInt64 = 1_000 + 5_000_000_000
        for index in schedules.indices {
            while schedules[index].nextTime < end {
                times.append(schedules[index].nextTime)
                schedules[index].advance()
            }
        }
        times.sort()
        #expect(times.count == 800)
        #expect(times.first == 1_000)
        for (index, time) in times.enumerated() {
            let expected = 1_000 + Double(index) * 1e9 / rate
            #expect(abs(Double(time) - expected) <= 2, "call \(index) at \(time), expected \(expected)")
        }
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
