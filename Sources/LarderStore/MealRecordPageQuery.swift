import LarderAPI

/// One keyset page of meal records: filters, the position after which the
/// page starts, and how many rows to return.
///
/// Rows match `startMilliseconds <= eaten_at_ms < endMilliseconds`, the
/// category when set, and come strictly after `after` in the order
/// (eaten_at_ms desc, id desc).
public struct MealRecordPageQuery: Hashable, Sendable {
    /// Inclusive lower bound on eaten_at, Unix milliseconds (`Int64.min` = none).
    public var startMilliseconds: Int64
    /// Exclusive upper bound on eaten_at, Unix milliseconds (`Int64.max` = none).
    public var endMilliseconds: Int64
    /// Only this category, when set.
    public var category: MealCategory?
    /// The last row of the previous page, when not the first page.
    public var after: MealRecordCursor?
    /// The most rows to return.
    public var limit: Int

    public init(startMilliseconds: Int64 = .min, endMilliseconds: Int64 = .max, category: MealCategory? = nil,
                after: MealRecordCursor? = nil, limit: Int) {
        self.startMilliseconds = startMilliseconds
        self.endMilliseconds = endMilliseconds
        self.category = category
        self.after = after
        self.limit = limit
    }
}

/// A position in the meal-record order: (eaten_at_ms, id).
public struct MealRecordCursor: Hashable, Sendable {
    public var eatenAtMilliseconds: Int64
    public var id: String

    public init(eatenAtMilliseconds: Int64, id: String) {
        self.eatenAtMilliseconds = eatenAtMilliseconds
        self.id = id
    }
}
