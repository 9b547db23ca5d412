import LarderAPI
import LarderClient
import LarderTestSupport
import LarderWire
import Testing

/// Through the real server: nanosecond eaten_at, summaries in an IANA zone, byte-capped names.
@Suite("Meal times over TCP", .offThePool)
struct TimePrecisionEndToEndTests {
    @Test(arguments: Backend.all)
    func nanosecondsTimeZonesAndByteCaps(backend: Backend) async throws {
        try await withServer(backend) { _, client in
            // 2026-11-01T04:30:00.123456789Z: 00:30 EDT on Nov 1 in New York.
            let at = Timestamp(seconds: 1_793_507_400, nanos: 123_456_789)
            let meal = try await client.call(MealRecordMethods.createMealRecord, CreateMealRecordRequest(
                mealRecord: MealRecord(name: "Late snack", calories: 200, category: .snack, eatenAt: at)))
            #expect(meal.eatenAt == at)
            #expect(try await client.call(MealRecordMethods.getMealRecord, GetMealRecordRequest(id: meal.id)).eatenAt == at)
            let after = Timestamp(seconds: at.seconds, nanos: at.nanos + 1)
            let none = try await client.call(MealRecordMethods.listMealRecords, ListMealRecordsRequest(startTime: after))
            #expect(none.mealRecords.isEmpty)
            let one = try await client.call(MealRecordMethods.listMealRecords, ListMealRecordsRequest(endTime: after))
            #expect(one.mealRecords.map(\.id) == [meal.id])

            let summary = try await client.call(MealRecordMethods.summarizeMealRecords, SummarizeMealRecordsRequest(
                startTime: Timestamp(seconds: 1_793_000_000), endTime: Timestamp(seconds: 1_794_000_000),
                timeZone: "America/New_York"))
            #expect(summary.days.map(\.date) == ["2026-11-01"])
            await expectStatus(.invalidArgument) {
                try await client.call(MealRecordMethods.summarizeMealRecords, SummarizeMealRecordsRequest(
                    startTime: Timestamp(seconds: 1_793_000_000), endTime: Timestamp(seconds: 1_794_000_000),
                    timeZone: "Nowhere/Special"))
            }
            await expectStatus(.invalidArgument) {
                try await client.call(MealRecordMethods.createMealRecord, CreateMealRecordRequest(
                    mealRecord: MealRecord(name: "a" + String(repeating: "\u{301}", count: 500), calories: 1,
                                           category: .snack)))
            }
        }
    }
}

/// A singular message field sent more than once is merged, as protobuf specifies: a `Timestamp`
/// split over two occurrences is both (the server used to keep only the last one's fields).
@Suite("Repeated message fields over TCP", .offThePool)
struct RepeatedMessageFieldEndToEndTests {
    /// A length-delimited field `number` (< 16) holding `body` (< 128 bytes).
    static func field(_ number: UInt8, _ body: [UInt8]) -> [UInt8] { [number << 3 | 2, UInt8(body.count)] + body }

    static func seconds(_ value: Int64) -> [UInt8] { [0x08] + ProtobufWireBytes.varint(UInt64(value)) }

    /// `payload` called as `method` on `raw`, decoded as `R`.
    static func call<R: ProtoMessage>(_ raw: RawConnection, _ id: UInt64, _ path: String, _ payload: [UInt8],
                                      as type: R.Type) throws -> R {
        raw.send(RequestEnvelope(callID: id, method: path, payload: payload))
        let reply = try #require(raw.receive())
        try #require(reply.statusCode == .ok, "\(reply.statusCode): \(reply.statusMessage)")
        return try ProtoCodec.decode(R.self, from: reply.payload)
    }

    @Test func splitTimestampsAndRecordsAreMerged() async throws {
        try await withServer { server, client in
            let raw = try RawConnection(port: server.port)
            let create = MealRecordMethods.createMealRecord.path
            // eaten_at as {seconds: 2026-01-01} then {nanos: 7}.
            let record = Self.field(2, Array("raw".utf8)) + [0x18, 0x01, 0x20, 0x04]
                + Self.field(5, Self.seconds(1_767_225_600)) + Self.field(5, [0x10, 0x07])
            let split = try Self.call(raw, 1, create, Self.field(1, record), as: MealRecord.self)
            #expect(split.eatenAt == Timestamp(seconds: 1_767_225_600, nanos: 7))

            // meal_record in two halves: the second one alone has no name and no calories.
            let halves = Self.field(1, Self.field(2, Array("halves".utf8)) + [0x18, 0x02])
                + Self.field(1, [0x20, 0x01] + Self.field(5, Self.seconds(1_893_542_400)))
            let merged = try Self.call(raw, 2, create, halves, as: MealRecord.self)
            #expect(merged.name == "halves" && merged.calories == 2 && merged.category == .breakfast)
            #expect(merged.eatenAt == Timestamp(seconds: 1_893_542_400))

            // start_time as {seconds: 2030-01-02} then {nanos: 500}: from 2030-01-02T00:00:00.0000005Z.
            let edge = try await client.call(MealRecordMethods.createMealRecord, CreateMealRecordRequest(
                mealRecord: MealRecord(name: "edge", calories: 3, category: .snack,
                                       eatenAt: Timestamp(seconds: 1_893_542_400, nanos: 500))))
            let list = Self.field(3, Self.seconds(1_893_542_400)) + Self.field(3, [0x10, 0xF4, 0x03])
            let listed = try Self.call(raw, 3, MealRecordMethods.listMealRecords.path, list,
                                       as: ListMealRecordsResponse.self)
            #expect(listed.mealRecords.map(\.id) == [edge.id])

            // end_time likewise on a summary: up to 2030-01-02T00:00:00.0000005Z, exclusive.
            let summary = Self.field(1, Self.seconds(1_767_225_600)) + Self.field(2, Self.seconds(1_893_542_400))
                + Self.field(2, [0x10, 0xF4, 0x03])
            let summarized = try Self.call(raw, 4, MealRecordMethods.summarizeMealRecords.path, summary,
                                           as: SummarizeMealRecordsResponse.self)
            #expect(summarized.mealCount == 2 && summarized.totalCalories == 3)
        }
    }
}
