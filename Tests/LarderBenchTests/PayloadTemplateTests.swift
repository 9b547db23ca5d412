import LarderAPI
import LarderSystem
import LarderWire
import Testing
@testable import LarderBench

@Suite("Request templates and load schedules")
struct PayloadTemplateTests {
    static let createLocation = LocationMethods.createLocation.descriptor.input
    static let createMeal = MealRecordMethods.createMealRecord.descriptor.input

    @Test func placeholdersAreReplacedPerCall() throws {
        let template = try PayloadTemplate(
            parsing: ##"{"location": {"name": "{{.Prefix}}-{{ .RequestNumber }}-{{randomString 5}}", "colorHex": "#{{.UUID}}"}}"##,
            type: Self.createLocation)
        #expect(!template.isConstant)
        var random = SplitMix64(seed: 7)
        var names: Set<String> = []
        for number in 0..<50 {
            let bytes = try template.encode(number: number, prefix: "larder-bench-x", random: &random, locationIDs: [],
                                            mealIDs: [])
            let request = try ProtoCodec.decode(CreateLocationRequest.self, from: bytes)
            let name = request.location.name
            #expect(name.hasPrefix("larder-bench-x-\(number)-"))
            let suffix = name.split(separator: "-").last ?? ""
            #expect(suffix.count == 5 && suffix.allSatisfy { $0.isLowercase || $0.isNumber })
            let uuid = String(request.location.colorHex.dropFirst())
            #expect(uuid.count == 36 && Array(uuid)[14] == "4")
            names.insert(name)
        }
        #expect(names.count == 50)
    }

    @Test func randomIntStaysInItsRangeAndIDsComeFromTheSet() throws {
        let template = try PayloadTemplate(parsing: #"{"mealRecord": {"id": "{{randomMealID}}", "calories": {{randomInt 5 9}}}}"#,
                                           type: Self.createMeal)
        #expect(template.usesMealIDs && !template.usesLocationIDs)
        var random = SplitMix64(seed: 1)
        let ids = ["00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"]
        var seenCalories: Set<Int32> = []
        var seenIDs: Set<String> = []
        for number in 0..<200 {
            let meal = try ProtoCodec.decode(CreateMealRecordRequest.self, from: template.encode(
                number: number, prefix: "p", random: &random, locationIDs: [], mealIDs: ids)).mealRecord
            seenCalories.insert(meal.calories)
            seenIDs.insert(meal.id)
        }
        #expect(seenCalories == [5, 6, 7, 8, 9])
        #expect(seenIDs == Set(ids))
    }

    @Test(arguments: [[Int64.min, Int64.max], [-1, Int64.max], [0, Int64.max], [Int64.max, Int64.max], [Int64.min, Int64.min]])
    func randomIntTakesAnyRangeOfInt64(bounds: [Int64]) throws {
        let (low, high) = (bounds[0], bounds[1])
        let template = try PayloadTemplate(parsing: #"{"service": "{{randomInt \#(low) \#(high)}}"}"#,
                                           type: HealthMethods.check.descriptor.input)
        var random = SplitMix64(seed: 7)
        for number in 0..<50 {
            let request = try ProtoCodec.decode(HealthCheckRequest.self, from: template.encode(
                number: number, prefix: "p", random: &random, locationIDs: [], mealIDs: []))
            let value = try #require(Int64(request.service))
            #expect(value >= low && value <= high)
        }
    }

    @Test(arguments: [
        ("{{.Nope}}", "unknown placeholder {{.Nope}}"),
        ("{{randomString 0}}", "the length must be 1-1000"),
        ("{{randomInt 9 1}}", "needs MIN <= MAX"),
        ("{\"location\": {{.RequestNumber}", "\"{{\" without \"}}\""),
        ("{\"location\": {\"nmae\": \"x\"}}", "--data for larder.v1.CreateLocationRequest"),
        ("{\"location\": ", "--data for larder.v1.CreateLocationRequest"),
    ])
    func badTemplatesAreRefusedWithTheReason(text: String, message: String) {
        #expect {
            try PayloadTemplate(parsing: text, type: Self.createLocation)
        } throws: { error in
            let error = error as? RPCError
            return error?.code == .invalidArgument && error?.message.contains(message) == true
        }
    }

    @Test func stepScheduleClimbsByStepsAndStopsAtItsEnd() {
        let schedule = LoadSchedule(kind: .step, start: 100, step: 50, stepSeconds: 2, end: 220)
        #expect(schedule.rate(atSecond: -1) == 100)
        #expect(schedule.rate(atSecond: 1.99) == 100)
        #expect(schedule.rate(atSecond: 2) == 150)
        #expect(schedule.rate(atSecond: 4.5) == 200)
        #expect(schedule.rate(atSecond: 6) == 220)
        #expect(schedule.rate(atSecond: 600) == 220)
        #expect(schedule.rampSeconds == 6)
        #expect(schedule.defaultDurationSeconds == 8)
        let down = LoadSchedule(kind: .line, start: 1000, step: -100, stepSeconds: 1, end: 400)
        #expect(down.rate(atSecond: 2.5) == 750)
        #expect(down.rate(atSecond: 100) == 400)
        #expect(down.rampSeconds == 6)
    }

    @Test func aLineRampSpacesCallsByTheRateAtTheirTime() {
        // 100 calls/s rising by 100/s: over the first 2 s that is 100·2 + 100·2²/2 = 400 calls.
        let schedule = LoadSchedule(kind: .line, start: 100, step: 100, stepSeconds: 1, end: nil)
        var rate = RateSchedule(schedule: schedule, share: 1, start: 1_000, origin: 1_000)
        var calls = 0
        while rate.nextTime < 1_000 + 2_000_000_000 {
            calls += 1
            rate.advance()
        }
        #expect((395...405).contains(calls), "\(calls) calls")
        // Half the share: half the calls.
        var half = RateSchedule(schedule: schedule, share: 0.5, start: 1_000, origin: 1_000)
        var halfCalls = 0
        while half.nextTime < 1_000 + 2_000_000_000 {
            halfCalls += 1
            half.advance()
        }
        #expect((195...205).contains(halfCalls), "\(halfCalls) calls")
    }

    @Test func timeSeriesMergesNeighbourWindows() {
        var series = TimeSeries(widthSeconds: 0.01)
        for millisecond in 0..<1000 {
            series.record(elapsed: UInt64(millisecond) * 1_000_000, latency: UInt64(millisecond), failed: millisecond < 5)
        }
        #expect(series.windows.count == 100)
        let wider = series.coarsened(toAtMost: 30)
        #expect(wider.widthSeconds == 0.04 && wider.windows.count == 25)
        #expect(wider.windows.map(\.calls).reduce(0, +) == 1000 && wider.windows[0].calls == 40)
        #expect(wider.windows[0].errors == 5 && wider.windows[24].latency.max == 999)
        #expect(series.coarsened(toAtMost: 200) == series)
    }

    @Test func coarsePercentilesAreWithinTwoPercent() {
        var histogram = CoarseHistogram()
        for value in UInt64(1)...100_000 { histogram.record(value) }
        for percentile in [50.0, 90, 99, 99.9] {
            let expected = percentile / 100 * 100_000
            let value = Double(histogram.value(atPercentile: percentile))
            #expect(abs(value - expected) / expected < 0.02, "p\(percentile): \(value) vs \(expected)")
        }
        #expect(histogram.max == 100_000 && histogram.totalCount == 100_000)
        #expect(CoarseHistogram().value(atPercentile: 50) == 0)
    }
}
