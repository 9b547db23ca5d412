import LarderAPI
import LarderWire
import Testing

@Suite("Typed method tables")
struct MethodTableTests {
    /// Every static of every method table, with the path proto/ gives it. Reading each static runs its
    /// descriptor type check, which traps on a mismatch.
    static let table: [(String, String)] = [
        (LocationMethods.createLocation.path, "/larder.v1.LocationService/CreateLocation"),
        (LocationMethods.getLocation.path, "/larder.v1.LocationService/GetLocation"),
        (LocationMethods.listLocations.path, "/larder.v1.LocationService/ListLocations"),
        (LocationMethods.updateLocation.path, "/larder.v1.LocationService/UpdateLocation"),
        (LocationMethods.deleteLocation.path, "/larder.v1.LocationService/DeleteLocation"),
        (CategoryGroupMethods.createCategoryGroup.path, "/larder.v1.CategoryGroupService/CreateCategoryGroup"),
        (CategoryGroupMethods.getCategoryGroup.path, "/larder.v1.CategoryGroupService/GetCategoryGroup"),
        (CategoryGroupMethods.listCategoryGroups.path, "/larder.v1.CategoryGroupService/ListCategoryGroups"),
        (CategoryGroupMethods.updateCategoryGroup.path, "/larder.v1.CategoryGroupService/UpdateCategoryGroup"),
        (CategoryGroupMethods.deleteCategoryGroup.path, "/larder.v1.CategoryGroupService/DeleteCategoryGroup"),
        (ItemCategoryMethods.createItemCategory.path, "/larder.v1.ItemCategoryService/CreateItemCategory"),
        (ItemCategoryMethods.getItemCategory.path, "/larder.v1.ItemCategoryService/GetItemCategory"),
        (ItemCategoryMethods.listItemCategories.path, "/larder.v1.ItemCategoryService/ListItemCategories"),
        (ItemCategoryMethods.updateItemCategory.path, "/larder.v1.ItemCategoryService/UpdateItemCategory"),
        (ItemCategoryMethods.deleteItemCategory.path, "/larder.v1.ItemCategoryService/DeleteItemCategory"),
        (MealRecordMethods.createMealRecord.path, "/larder.v1.MealRecordService/CreateMealRecord"),
        (MealRecordMethods.getMealRecord.path, "/larder.v1.MealRecordService/GetMealRecord"),
        (MealRecordMethods.listMealRecords.path, "/larder.v1.MealRecordService/ListMealRecords"),
        (MealRecordMethods.updateMealRecord.path, "/larder.v1.MealRecordService/UpdateMealRecord"),
        (MealRecordMethods.deleteMealRecord.path, "/larder.v1.MealRecordService/DeleteMealRecord"),
        (MealRecordMethods.summarizeMealRecords.path, "/larder.v1.MealRecordService/SummarizeMealRecords"),
        (HealthMethods.check.path, "/grpc.health.v1.Health/Check"),
        (ReflectionMethods.listServices.path, "/larder.reflection.v1.ServerReflection/ListServices"),
        (ReflectionMethods.describeType.path, "/larder.reflection.v1.ServerReflection/DescribeType"),
        (AdminMethods.getMetrics.path, "/larder.admin.v1.Admin/GetMetrics"),
        (AdminMethods.getServerInfo.path, "/larder.admin.v1.Admin/GetServerInfo"),
        (HealthMethods.watch.path, "/grpc.health.v1.Health/Watch"),
        (GrpcReflectionV1ServerReflectionMethods.serverReflectionInfo.path,
         "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"),
        (GrpcReflectionV1alphaServerReflectionMethods.serverReflectionInfo.path,
         "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"),
    ]

    @Test("every table entry constructs with the path from proto/", arguments: table)
    func entry(path: String, expected: String) {
        #expect(path == expected)
    }

    @Test("the tables cover every method of every service")
    func coverage() {
        let described = APIServices.all.flatMap { $0.methods.map(\.path) }
        #expect(described.sorted() == Self.table.map(\.0).sorted())
    }

    @Test("APIServices lists the four larder.v1 services, health, reflection, admin and the standard reflection")
    func services() {
        #expect(APIServices.all.map(\.name) == [
            "larder.v1.LocationService", "larder.v1.CategoryGroupService", "larder.v1.ItemCategoryService",
            "larder.v1.MealRecordService", "grpc.health.v1.Health", "larder.reflection.v1.ServerReflection",
            "larder.admin.v1.Admin", "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection",
        ])
    }

    @Test("methods are found by name and report their message types")
    func lookup() throws {
        let method = try #require(MealRecordMethods.service.method(named: "SummarizeMealRecords"))
        #expect(method.input == SummarizeMealRecordsRequest.descriptor)
        #expect(method.output == SummarizeMealRecordsResponse.descriptor)
        #expect(CategoryGroupMethods.deleteCategoryGroup.descriptor.output == Empty.descriptor)
        #expect(MealRecordMethods.service.method(named: "summarizeMealRecords") == nil)
        #expect(HealthMethods.service.method(named: "Watch")?.output == HealthCheckResponse.descriptor)
        #expect(HealthMethods.service.method(named: "watch") == nil)
    }

    @Test("message types report their proto names")
    func protoNames() {
        #expect(MealRecord.protoName == "larder.v1.MealRecord")
        #expect(HealthCheckResponse.protoName == "grpc.health.v1.HealthCheckResponse")
        #expect(Empty.protoName == "google.protobuf.Empty")
    }
}
