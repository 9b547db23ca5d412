public import LarderAPI

/// One keyset page of meal records: filters, the position after which the
/// page starts, and how many rows to return.
///
/// Rows match `start <= eaten_at < end` (to the nanosecond), the category when
/// set, and come strictly after `after` in the order (eaten_at desc, id desc).
/// A backend stops early, after the row that takes the page's encodings past
/// `maxBytes` (that row included), so a page of huge records is not read whole.
public struct MealRecordPageQuery: Hashable, Sendable {
    /// Inclusive lower bound on eaten_at (`StoreInstant.min` = none).
    public var start: StoreInstant
    /// Exclusive upper bound on eaten_at (`StoreInstant.max` = none).
    public var end: StoreInstant
    /// Only this category, when set.
    public var category: MealCategory?
    /// The last row of the previous page, when not the first page.
    public var after: MealRecordCursor?
    /// The most rows to return.
    public var limit: Int
    /// Stop after the row whose encoding takes the page's total past this many bytes.
    public var maxBytes: Int

    public init(start: StoreInstant = .min, end: StoreInstant = .max, category: MealCategory? = nil,
                after: MealRecordCursor? = nil, limit: Int, maxBytes: Int = .max) {
        self.start = start
        self.end = end
        self.category = category
        self.after = after
        self.limit = limit
        self.maxBytes = maxBytes
    }

    /// True when both bounds fall on whole milliseconds: a backend needs no
    /// comparison of nanoseconds for the range (only for the cursor).
    public var isWholeMilliseconds: Bool { StoreInstant.isWholeMilliseconds(start: start, end: end) }

    /// The inclusive upper bound of the index range on eaten_at_ms: the last
    /// millisecond before the end (its own when rows in it are compared to the
    /// nanosecond), lowered to the cursor's millisecond after a cursor.
    public var upperMilliseconds: Int64 {
        Swift.min(StoreInstant.upperMilliseconds(end: end, wholeMilliseconds: isWholeMilliseconds),
                  after?.eatenAt.milliseconds ?? .max)
    }
}

/// A position in the meal-record order: (eaten_at, id).
public struct MealRecordCursor: Hashable, Sendable {
    public var eatenAt: StoreInstant
    public var id: String

    public init(eatenAt: StoreInstant, id: String) {
        self.eatenAt = eatenAt
        self.id = id
    }
}
