public import LarderAPI
public import LarderWire

extension Operations {
    /// The longest range SummarizeMealRecords accepts, in days.
    public static let maxSummaryDays: Int64 = 3660
    /// The widest UTC offset accepted, in minutes (UTC±14:00).
    public static let maxUTCOffsetMinutes: Int32 = 840

    /// Calorie totals and meal counts over [start_time, end_time) (to the nanosecond): per
    /// local day (oldest first) in the IANA zone `time_zone`, or at `utc_offset_minutes`
    /// when it is empty; per category (enum order), and overall. The database aggregates,
    /// one query per stretch of constant offset; rows are not loaded. INVALID_ARGUMENT for
    /// a missing or bad time, end not after start, an offset outside ±840, an unknown zone
    /// (or a zone together with an offset), a range over 3660 days, or one whose local days
    /// leave the years 1 to 9999.
    public static func summarizeMealRecords(_ request: SummarizeMealRecordsRequest,
                                            _ db: any StoreReader) throws(RPCError) -> SummarizeMealRecordsResponse {
        try summarizeMealRecords(request, db, zones: .system)
    }

    /// `summarizeMealRecords` with the zones read from `zones`.
    public static func summarizeMealRecords(_ request: SummarizeMealRecordsRequest, _ db: any StoreReader,
                                            zones: TimeZoneDatabase)
        throws(RPCError) -> SummarizeMealRecordsResponse
    {
        guard let startTime = request.startTime else { throw RPCError.invalidArgument("start_time is required") }
        guard let endTime = request.endTime else { throw RPCError.invalidArgument("end_time is required") }
        let start = try Validation.instant(startTime, field: "start_time")
        let end = try Validation.endInstant(endTime, field: "end_time")
        guard end > start else { throw RPCError.invalidArgument("end_time must be after start_time") }
        guard (-maxUTCOffsetMinutes...maxUTCOffsetMinutes).contains(request.utcOffsetMinutes) else {
            throw RPCError.invalidArgument(
                "utc_offset_minutes must be between -\(maxUTCOffsetMinutes) and \(maxUTCOffsetMinutes), got \(request.utcOffsetMinutes)")
        }
        // To the nanosecond: the latest end allowed has start's sub-millisecond part.
        let latestEnd = StoreInstant(milliseconds: start.milliseconds + maxSummaryDays * MealSummaryQuery.dayMilliseconds,
                                     nanos: start.nanos)
        guard end <= latestEnd else {
            throw RPCError.invalidArgument(
                "the range from start_time to end_time must be at most \(maxSummaryDays) days")
        }
        let zone: TimeZoneRules
        if request.timeZone.isEmpty {
            zone = TimeZoneRules(fixedOffset: Int64(request.utcOffsetMinutes) * 60)
        } else {
            guard request.utcOffsetMinutes == 0 else {
                throw RPCError.invalidArgument("set time_zone or utc_offset_minutes, not both")
            }
            zone = try zones.rules(named: request.timeZone, field: "time_zone")
        }

        // One aggregation per stretch of constant offset; a local day may span two (a
        // fall-back hour, or a change at midnight), so groups are merged by (day, category).
        let startSecond = Timestamp(unixMilliseconds: start.milliseconds).seconds
        let endSecond = end.timestamp.seconds + (end.timestamp.nanos > 0 ? 1 : 0)
        let segments = zone.segments(from: startSecond, to: endSecond)
        var merged: [MergeKey: (calories: Int64, count: Int64)] = [:]
        for (index, segment) in segments.enumerated() {
            let next = index + 1 < segments.count ? segments[index + 1].start : nil
            try checkLocalYears(from: index == 0 ? startSecond : segment.start, to: next ?? endSecond,
                                offset: segment.offset, request)
            let from = index == 0 ? start : StoreInstant(milliseconds: segment.start * 1000)
            let to = next.map { StoreInstant(milliseconds: $0 * 1000) } ?? end
            for row in try db.mealSummary(MealSummaryQuery(start: from, end: to,
                                                           offsetMilliseconds: segment.offset * 1000)) {
                let key = MergeKey(day: row.day, category: row.category)
                let sum = merged[key] ?? (0, 0)
                merged[key] = (sum.calories + row.totalCalories, sum.count + row.mealCount)
            }
        }
        let rows = merged.keys.sorted().compactMap { key in
            merged[key].map { MealSummaryRow(day: key.day, category: key.category, totalCalories: $0.calories,
                                             mealCount: $0.count) }
        }
        return try summary(of: rows)
    }

    /// Days are named YYYY-MM-DD, years 1 to 9999, as times are: INVALID_ARGUMENT when the
    /// seconds [from, to) at `offset` reach a local day outside them (the last UTC hours of 9999
    /// east of Greenwich), which has no such name.
    private static func checkLocalYears(from: Int64, to: Int64, offset: Int64,
                                        _ request: SummarizeMealRecordsRequest) throws(RPCError) {
        guard from + offset < TimestampRange.minSeconds || to - 1 + offset > TimestampRange.maxSeconds else { return }
        let place = request.timeZone.isEmpty ? "at utc_offset_minutes \(request.utcOffsetMinutes)" : "in \(request.timeZone)"
        throw RPCError.invalidArgument("the range from start_time to end_time reaches local days outside "
            + "the years 1 to 9999 \(place); narrow it")
    }

    private struct MergeKey: Hashable, Comparable {
        var day: Int64
        var category: Int32

        static func < (lhs: MergeKey, rhs: MergeKey) -> Bool { (lhs.day, lhs.category) < (rhs.day, rhs.category) }
    }

    /// The response for aggregation rows ordered by (day, category).
    private static func summary(of rows: [MealSummaryRow]) throws(RPCError) -> SummarizeMealRecordsResponse {
        var response = SummarizeMealRecordsResponse()
        var totals: [Int64: CategoryTotal] = [:]
        var mealCount: Int64 = 0
        for row in rows {
            guard let category = MealCategory(known: row.category) else {
                throw RPCError.internalError("the database holds a meal with unknown category \(row.category)")
            }
            let total = CategoryTotal(category: category, totalCalories: row.totalCalories,
                                      mealCount: Int32(clamping: row.mealCount))
            let date = CivilDate(daysSinceEpoch: row.day).description
            if response.days.last?.date != date { response.days.append(DailySummary(date: date)) }
            response.days[response.days.count - 1].totalCalories += row.totalCalories
            response.days[response.days.count - 1].mealCount =
                Int32(clamping: Int64(response.days[response.days.count - 1].mealCount) + row.mealCount)
            response.days[response.days.count - 1].categories.append(total)

            var overall = totals[Int64(row.category)] ?? CategoryTotal(category: category)
            overall.totalCalories += row.totalCalories
            overall.mealCount = Int32(clamping: Int64(overall.mealCount) + row.mealCount)
            totals[Int64(row.category)] = overall
            response.totalCalories += row.totalCalories
            mealCount += row.mealCount
        }
        response.mealCount = Int32(clamping: mealCount)
        response.categories = totals.keys.sorted().compactMap { totals[$0] }
        return response
    }
}
