import LarderWire

/// Every service in proto/ that larder-server serves.
public enum APIServices {
    /// The four `larder.v1` services, then `grpc.health.v1.Health`.
    public static let all: [ServiceDescriptor] = [
        LocationMethods.service,
        CategoryGroupMethods.service,
        ItemCategoryMethods.service,
        MealRecordMethods.service,
        HealthMethods.service,
    ]
}
