import LarderAPI
import LarderStore
import LarderWire

/// The services `larder-server` serves, and which code runs each method.
enum LarderServices {
    /// Every served service: the four larder.v1 services and grpc.health.v1.Health.
    static let served: [ServiceDescriptor] = [
        CategoryGroupMethods.service, ItemCategoryMethods.service, LocationMethods.service,
        MealRecordMethods.service, HealthMethods.service,
    ]

    /// A router with a handler for every method of `served`.
    static func router(store: any Store, health: HealthStatus) throws(RPCError) -> Router {
        var router = Router(store: store)

        router.write(CategoryGroupMethods.createCategoryGroup, Operations.createCategoryGroup)
        router.read(CategoryGroupMethods.getCategoryGroup, Operations.getCategoryGroup)
        router.read(CategoryGroupMethods.listCategoryGroups, Operations.listCategoryGroups)
        router.write(CategoryGroupMethods.updateCategoryGroup, Operations.updateCategoryGroup)
        router.write(CategoryGroupMethods.deleteCategoryGroup, Operations.deleteCategoryGroup)

        router.write(ItemCategoryMethods.createItemCategory, Operations.createItemCategory)
        router.read(ItemCategoryMethods.getItemCategory, Operations.getItemCategory)
        router.read(ItemCategoryMethods.listItemCategories, Operations.listItemCategories)
        router.write(ItemCategoryMethods.updateItemCategory, Operations.updateItemCategory)
        router.write(ItemCategoryMethods.deleteItemCategory, Operations.deleteItemCategory)

        router.write(LocationMethods.createLocation, Operations.createLocation)
        router.read(LocationMethods.getLocation, Operations.getLocation)
        router.read(LocationMethods.listLocations, Operations.listLocations)
        router.write(LocationMethods.updateLocation, Operations.updateLocation)
        router.write(LocationMethods.deleteLocation, Operations.deleteLocation)

        router.write(MealRecordMethods.createMealRecord, Operations.createMealRecord)
        router.read(MealRecordMethods.getMealRecord, Operations.getMealRecord)
        router.read(MealRecordMethods.listMealRecords, Operations.listMealRecords)
        router.write(MealRecordMethods.updateMealRecord, Operations.updateMealRecord)
        router.write(MealRecordMethods.deleteMealRecord, Operations.deleteMealRecord)
        router.read(MealRecordMethods.summarizeMealRecords, Operations.summarizeMealRecords)

        router.inline(HealthMethods.check, isPublic: true) { request, _ in health.check(request) }

        try router.validate(serving: served)
        return router
    }
}
