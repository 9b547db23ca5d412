/// The input of the summary aggregation: meals with `start <= eaten_at < end`
/// (to the nanosecond), grouped by local day.
///
/// The local day of a meal is `floor((eaten_at_ms + offsetMilliseconds) / 86_400_000)`,
/// a day number counted from 1970-01-01. A summary in a time zone runs one query
/// per stretch of constant UTC offset.
public struct MealSummaryQuery: Hashable, Sendable {
    public var start: StoreInstant
    public var end: StoreInstant
    public var offsetMilliseconds: Int64

    public init(start: StoreInstant, end: StoreInstant, offsetMilliseconds: Int64) {
        self.start = start
        self.end = end
        self.offsetMilliseconds = offsetMilliseconds
    }

    /// True when both bounds fall on whole milliseconds (see `MealRecordPageQuery`).
    public var isWholeMilliseconds: Bool { StoreInstant.isWholeMilliseconds(start: start, end: end) }

    /// The inclusive upper bound of the index range on eaten_at_ms.
    public var upperMilliseconds: Int64 {
        StoreInstant.upperMilliseconds(end: end, wholeMilliseconds: isWholeMilliseconds)
    }

    /// Added before dividing so that the dividend is positive for every valid
    /// time (year 1 onward) and SQL's truncating division is a floor.
    public static let dayBias: Int64 = 1_000_000
    /// Milliseconds in a day.
    public static let dayMilliseconds: Int64 = 86_400_000
}

/// One group of the summary aggregation.
public struct MealSummaryRow: Hashable, Sendable {
    /// Days since 1970-01-01 of the local day.
    public var day: Int64
    /// The category's raw value.
    public var category: Int32
    public var totalCalories: Int64
    public var mealCount: Int64

    public init(day: Int64, category: Int32, totalCalories: Int64, mealCount: Int64) {
        self.day = day
        self.category = category
        self.totalCalories = totalCalories
        self.mealCount = mealCount
    }
}
