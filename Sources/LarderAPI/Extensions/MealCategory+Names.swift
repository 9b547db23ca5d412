extension MealCategory {
    /// The lower-case short name, e.g. `breakfast`; `unknown(77)` for a number this build does not know.
    public var shortName: String {
        if case .unrecognized(let number) = self { return "unknown(\(number))" }
        let prefix = "MEAL_CATEGORY_"
        return protoName.hasPrefix(prefix) ? String(protoName.dropFirst(prefix.count)).lowercased() : protoName.lowercased()
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

    /// The category numbered `number` if this build knows it, else nil (a stored row or an
    /// input that must not hold a newer peer's value).
    public init?(known number: Int32) {
        let category = MealCategory(rawValue: number)
        if case .unrecognized = category { return nil }
        self = category
    }
}
