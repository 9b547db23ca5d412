import CLarderProto
import CProtobufC
import LarderAPI
import Testing

@Suite("Enum names")
struct EnumNameTests {
    @Test("MealCategory names and numbers match proto/", arguments: MealCategory.allCases)
    func mealCategoryMatchesDescriptor(category: MealCategory) throws {
        let value = try #require(protobuf_c_enum_descriptor_get_value(larder__v1__meal_category__descriptor_ptr(),
                                                                      Int32(category.rawValue)))
        #expect(String(cString: value.pointee.name) == category.protoName)
    }

    @Test("MealCategory covers every value of the proto enum")
    func mealCategoryComplete() {
        #expect(Int(larder__v1__meal_category__descriptor_ptr().pointee.n_values) == MealCategory.allCases.count)
    }

    @Test("MealCategory short and proto names", arguments: [
        (MealCategory.unspecified, "unspecified", "MEAL_CATEGORY_UNSPECIFIED"),
        (.breakfast, "breakfast", "MEAL_CATEGORY_BREAKFAST"),
        (.lunch, "lunch", "MEAL_CATEGORY_LUNCH"),
        (.dinner, "dinner", "MEAL_CATEGORY_DINNER"),
        (.snack, "snack", "MEAL_CATEGORY_SNACK"),
    ])
    func mealCategoryNames(category: MealCategory, short: String, proto: String) {
        #expect(category.shortName == short)
        #expect(category.protoName == proto)
        #expect(MealCategory(name: short) == category)
        #expect(MealCategory(name: proto) == category)
        #expect(MealCategory(name: short.uppercased()) == category)
        #expect(MealCategory(name: proto.lowercased()) == category)
    }

    @Test("names that are not categories", arguments: ["", "brunch", "MEAL_CATEGORY_", "meal_category",
                                                       "MEAL_CATEGORY_BRUNCH", " lunch", "lunch ", "1"])
    func notCategories(name: String) {
        #expect(MealCategory(name: name) == nil)
    }

    @Test("ServingStatus names and numbers match proto/", arguments: [
        HealthCheckResponse.ServingStatus.unknown, .serving, .notServing, .serviceUnknown,
    ])
    func servingStatusMatchesDescriptor(status: HealthCheckResponse.ServingStatus) throws {
        let descriptor = grpc__health__v1__health_check_response__serving_status__descriptor_ptr()
        let value = try #require(protobuf_c_enum_descriptor_get_value(descriptor, status.rawValue))
        #expect(String(cString: value.pointee.name) == status.protoName)
        #expect(Int(descriptor.pointee.n_values) == 4)
    }
}
