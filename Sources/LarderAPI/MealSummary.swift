import CLarderProto
import CProtobufC
import LarderWire

/// `larder.v1.SummarizeMealRecordsRequest`: calorie totals per local day.
public struct SummarizeMealRecordsRequest: Hashable, Sendable {
    /// Meals eaten at or after this time; required.
    public var startTime: Timestamp?
    /// Meals eaten before this time; required, after `startTime`.
    public var endTime: Timestamp?
    /// The client's offset from UTC in minutes (-840...840); days are local days at this
    /// offset. Used when `timeZone` is empty.
    public var utcOffsetMinutes: Int32
    /// An IANA time zone name ("Asia/Taipei"): days are local days in that zone, across
    /// its offset changes. Empty: `utcOffsetMinutes` applies.
    public var timeZone: String

    public init(startTime: Timestamp? = nil, endTime: Timestamp? = nil, utcOffsetMinutes: Int32 = 0,
                timeZone: String = "") {
        self.startTime = startTime
        self.endTime = endTime
        self.utcOffsetMinutes = utcOffsetMinutes
        self.timeZone = timeZone
    }
}

extension SummarizeMealRecordsRequest: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__summarize_meal_records_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Larder__V1__SummarizeMealRecordsRequest.self).pointee
        self.init(startTime: Timestamp?(c: c.start_time), endTime: Timestamp?(c: c.end_time),
                  utcOffsetMinutes: c.utc_offset_minutes,
                  timeZone: try CFields.string(c.time_zone, field: "time_zone"))
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__V1__SummarizeMealRecordsRequest.self) {
            larder__v1__summarize_meal_records_request__init($0)
        }
        c.pointee.start_time = startTime.buildC(in: arena)
        c.pointee.end_time = endTime.buildC(in: arena)
        c.pointee.utc_offset_minutes = utcOffsetMinutes
        c.pointee.time_zone = arena.string(timeZone)
        return c.asMessage
    }
}

/// Totals for one meal category (`larder.v1.CategoryTotal`).
public struct CategoryTotal: Hashable, Sendable {
    public var category: MealCategory
    public var totalCalories: Int64
    public var mealCount: Int32

    public init(category: MealCategory = .unspecified, totalCalories: Int64 = 0, mealCount: Int32 = 0) {
        self.category = category
        self.totalCalories = totalCalories
        self.mealCount = mealCount
    }
}

extension CategoryTotal: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__category_total__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        try self.init(c: message.cast(to: Larder__V1__CategoryTotal.self))
    }

    init(c: UnsafePointer<Larder__V1__CategoryTotal>) throws(RPCError) {
        let c = c.pointee
        self.init(category: try MealCategory(c: c.category, field: "category_total.category"),
                  totalCalories: c.total_calories, mealCount: c.meal_count)
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> { buildC(in: arena).asMessage }

    func buildC(in arena: CArena) -> UnsafeMutablePointer<Larder__V1__CategoryTotal> {
        let c = arena.message(Larder__V1__CategoryTotal.self) { larder__v1__category_total__init($0) }
        c.pointee.category = category.c
        c.pointee.total_calories = totalCalories
        c.pointee.meal_count = mealCount
        return c
    }
}

/// Totals for one local calendar day (`larder.v1.DailySummary`).
public struct DailySummary: Hashable, Sendable {
    /// Local date `YYYY-MM-DD`.
    public var date: String
    public var totalCalories: Int64
    public var mealCount: Int32
    /// One entry per category with meals that day, in enum order.
    public var categories: [CategoryTotal]

    public init(date: String = "", totalCalories: Int64 = 0, mealCount: Int32 = 0, categories: [CategoryTotal] = []) {
        self.date = date
        self.totalCalories = totalCalories
        self.mealCount = mealCount
        self.categories = categories
    }
}

extension DailySummary: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__daily_summary__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        try self.init(c: message.cast(to: Larder__V1__DailySummary.self))
    }

    init(c: UnsafePointer<Larder__V1__DailySummary>) throws(RPCError) {
        let c = c.pointee
        self.init(
            date: try CFields.string(c.date, field: "daily_summary.date"),
            totalCalories: c.total_calories,
            mealCount: c.meal_count,
            categories: try CFields.messages(c.categories, count: c.n_categories) {
                p throws(RPCError) in try CategoryTotal(c: p)
            })
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> { buildC(in: arena).asMessage }

    func buildC(in arena: CArena) -> UnsafeMutablePointer<Larder__V1__DailySummary> {
        let c = arena.message(Larder__V1__DailySummary.self) { larder__v1__daily_summary__init($0) }
        c.pointee.date = arena.string(date)
        c.pointee.total_calories = totalCalories
        c.pointee.meal_count = mealCount
        c.pointee.n_categories = categories.count
        c.pointee.categories = arena.pointers(categories) { $0.buildC(in: arena) }
        return c
    }
}

/// `larder.v1.SummarizeMealRecordsResponse`.
public struct SummarizeMealRecordsResponse: Hashable, Sendable {
    /// Days that have meals, oldest first.
    public var days: [DailySummary]
    public var totalCalories: Int64
    public var mealCount: Int32
    /// Totals over the whole range, one entry per category with meals.
    public var categories: [CategoryTotal]

    public init(days: [DailySummary] = [], totalCalories: Int64 = 0, mealCount: Int32 = 0,
                categories: [CategoryTotal] = []) {
        self.days = days
        self.totalCalories = totalCalories
        self.mealCount = mealCount
        self.categories = categories
    }
}

extension SummarizeMealRecordsResponse: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__summarize_meal_records_response__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Larder__V1__SummarizeMealRecordsResponse.self).pointee
        self.init(
            days: try CFields.messages(c.days, count: c.n_days) { p throws(RPCError) in try DailySummary(c: p) },
            totalCalories: c.total_calories,
            mealCount: c.meal_count,
            categories: try CFields.messages(c.categories, count: c.n_categories) {
                p throws(RPCError) in try CategoryTotal(c: p)
            })
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__V1__SummarizeMealRecordsResponse.self) {
            larder__v1__summarize_meal_records_response__init($0)
        }
        c.pointee.n_days = days.count
        c.pointee.days = arena.pointers(days) { $0.buildC(in: arena) }
        c.pointee.total_calories = totalCalories
        c.pointee.meal_count = mealCount
        c.pointee.n_categories = categories.count
        c.pointee.categories = arena.pointers(categories) { $0.buildC(in: arena) }
        return c.asMessage
    }
}
