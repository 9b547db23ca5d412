import LarderAPI
import LarderWire

extension Operations {
    /// The longest range SummarizeMealRecords accepts, in days.
    public static let maxSummaryDays: Int64 = 3660
    /// The widest UTC offset accepted, in minutes (UTC±14:00).
    public static let maxUTCOffsetMinutes: Int32 = 840

    /// Calorie totals and meal counts over [start_time, end_time): per local day at
    /// `utc_offset_minutes` (oldest first), per category (enum order), and overall.
    /// The database aggregates; rows are not loaded. INVALID_ARGUMENT for a missing or
    /// bad time, end not after start, an offset outside ±840, or a range over 3660 days.
    public static func summarizeMealRecords(_ request: SummarizeMealRecordsRequest,
                                            _ db: any StoreReader) throws(RPCError) -> SummarizeMealRecordsResponse {
        guard let startTime = request.startTime else { throw RPCError.invalidArgument("start_time is required") }
        guard let endTime = request.endTime else { throw RPCError.invalidArgument("end_time is required") }
        let start = try Validation.milliseconds(startTime, field: "start_time")
        let end = try Validation.milliseconds(endTime, field: "end_time")
        guard end > start else { throw RPCError.invalidArgument("end_time must be after start_time") }
        guard (-maxUTCOffsetMinutes...maxUTCOffsetMinutes).contains(request.utcOffsetMinutes) else {
            throw RPCError.invalidArgument(
                "utc_offset_minutes must be between -\(maxUTCOffsetMinutes) and \(maxUTCOffsetMinutes), got \(request.utcOffsetMinutes)")
        }
        guard end - start <= maxSummaryDays * MealSummaryQuery.dayMilliseconds else {
            throw RPCError.invalidArgument(
                "the range from start_time to end_time must be at most \(maxSummaryDays) days")
        }

        let rows = try db.mealSummary(MealSummaryQuery(
            startMilliseconds: start, endMilliseconds: end, offsetMilliseconds: Int64(request.utcOffsetMinutes) * 60_000))

        var response = SummarizeMealRecordsResponse()
        var totals: [Int64: CategoryTotal] = [:]
        var mealCount: Int64 = 0
        for row in rows {
            guard let category = MealCategory(rawValue: row.category) else {
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
