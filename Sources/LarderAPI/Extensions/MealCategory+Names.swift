extension MealCategory {
    /// The lower-case short name, e.g. `breakfast`.
    public var shortName: String {
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
}
