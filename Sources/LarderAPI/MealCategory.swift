import CLarderProto
import LarderWire

/// The kind of meal a `MealRecord` describes (`larder.v1.MealCategory`).
public enum MealCategory: Int32, CaseIterable, Sendable {
    case unspecified = 0
    case breakfast
    case lunch
    case dinner
    case snack

    /// The proto enum value name, e.g. `MEAL_CATEGORY_BREAKFAST`.
    public var protoName: String { "MEAL_CATEGORY_" + shortName.uppercased() }

    /// The lower-case short name, e.g. `breakfast`.
    public var shortName: String {
        switch self {
        case .unspecified: "unspecified"
        case .breakfast: "breakfast"
        case .lunch: "lunch"
        case .dinner: "dinner"
        case .snack: "snack"
        }
    }

    /// The category named `name`, either its short name (`lunch`) or its proto
    /// name (`MEAL_CATEGORY_LUNCH`), case-insensitively.
    public init?(name: String) {
        let lowered = name.lowercased()
        guard let match = Self.allCases.first(where: {
            $0.shortName == lowered || $0.protoName.lowercased() == lowered
        }) else { return nil }
        self = match
    }

    /// Reads a wire value.
    /// - Throws: INVALID_ARGUMENT naming `field` for a number this build does not know.
    init(c value: Larder__V1__MealCategory, field: String) throws(RPCError) {
        let number = Int32(truncatingIfNeeded: value.rawValue)
        guard let category = MealCategory(rawValue: number) else {
            throw RPCError.invalidArgument("\(field): unknown MealCategory value \(number)")
        }
        self = category
    }

    /// The generated C enum value.
    var c: Larder__V1__MealCategory { Larder__V1__MealCategory(rawValue: .init(truncatingIfNeeded: rawValue)) }
}
