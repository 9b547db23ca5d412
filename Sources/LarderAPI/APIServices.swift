import LarderWire

/// Every service in proto/ that larder-server serves.
public enum APIServices {
    /// The four `larder.v1` services, then `grpc.health.v1.Health`,
    /// `larder.reflection.v1.ServerReflection` and `larder.admin.v1.Admin`.
    public static let all: [ServiceDescriptor] = [
        LocationMethods.service,
        CategoryGroupMethods.service,
        ItemCategoryMethods.service,
        MealRecordMethods.service,
        HealthMethods.service,
        ReflectionMethods.service,
        AdminMethods.service,
    ]
}
