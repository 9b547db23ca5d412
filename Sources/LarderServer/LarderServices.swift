import LarderAPI
import LarderStore
import LarderWire

/// The services `larder-server` serves, and which code runs each method.
enum LarderServices {
    /// Every served service: the four larder.v1 services, grpc.health.v1.Health,
    /// larder.reflection.v1.ServerReflection, larder.admin.v1.Admin and the standard
    /// grpc.reflection.v1 and v1alpha ServerReflection (streaming: gRPC over HTTP/2 only).
    static let served: [ServiceDescriptor] = [
        CategoryGroupMethods.service, ItemCategoryMethods.service, LocationMethods.service,
        MealRecordMethods.service, HealthMethods.service, ReflectionMethods.service, AdminMethods.service,
        GrpcReflectionV1ServerReflectionMethods.service, GrpcReflectionV1alphaServerReflectionMethods.service,
    ]

    /// Every full method name of `served`, in declaration order.
    static var methodPaths: [String] { served.flatMap { $0.methods.map(\.path) } }

    /// A router with a handler for every method of `served`, each tagged with
    /// its index in `metrics`.
    static func router(store: any Store, health: HealthStatus, metrics: MetricsRecorder) throws(RPCError) -> Router {
        var router = Router(store: store)

        router.write(CategoryGroupMethods.createCategoryGroup, Operations.createCategoryGroup)
        router.read(CategoryGroupMethods.getCategoryGroup, cost: { $0.includeItemCategories ? .query : .point },
                    Operations.getCategoryGroup)
        router.read(CategoryGroupMethods.listCategoryGroups, Operations.listCategoryGroups)
        router.write(CategoryGroupMethods.updateCategoryGroup, Operations.updateCategoryGroup)
        router.write(CategoryGroupMethods.deleteCategoryGroup, Operations.deleteCategoryGroup)

        router.write(ItemCategoryMethods.createItemCategory, Operations.createItemCategory)
        router.read(ItemCategoryMethods.getItemCategory, cost: { _ in .point }, Operations.getItemCategory)
        router.read(ItemCategoryMethods.listItemCategories, Operations.listItemCategories)
        router.write(ItemCategoryMethods.updateItemCategory, Operations.updateItemCategory)
        router.write(ItemCategoryMethods.deleteItemCategory, Operations.deleteItemCategory)

        router.write(LocationMethods.createLocation, Operations.createLocation)
        router.read(LocationMethods.getLocation, cost: { _ in .point }, Operations.getLocation)
        router.read(LocationMethods.listLocations, Operations.listLocations)
        router.write(LocationMethods.updateLocation, Operations.updateLocation)
        router.write(LocationMethods.deleteLocation, Operations.deleteLocation)

        router.write(MealRecordMethods.createMealRecord, Operations.createMealRecord)
        router.read(MealRecordMethods.getMealRecord, cost: { _ in .point }, Operations.getMealRecord)
        router.read(MealRecordMethods.listMealRecords, Operations.listMealRecords)
        router.write(MealRecordMethods.updateMealRecord, Operations.updateMealRecord)
        router.write(MealRecordMethods.deleteMealRecord, Operations.deleteMealRecord)
        router.read(MealRecordMethods.summarizeMealRecords, Operations.summarizeMealRecords)

        router.inline(HealthMethods.check, isPublic: true) { request, _ throws(RPCError) in
            try health.check(request, databaseAvailable: store.isAvailable)
        }
        router.serverStreaming(HealthMethods.watch, isPublic: true) { request, _, stream in
            health.watch(request, stream: stream, databaseAvailable: store.isAvailable)
        }

        // Touch no database: answered on the loop. Not public: with auth on they need the token.
        let reflection = ReflectionService(services: served)
        router.inline(ReflectionMethods.listServices) { _, _ in reflection.listServices() }
        router.inline(ReflectionMethods.describeType) { request, _ throws(RPCError) in
            try reflection.describeType(request.name)
        }
        let serviceNames = served.map(\.name)
        router.bidirectional(GrpcReflectionV1ServerReflectionMethods.serverReflectionInfo) { _, stream in
            GRPCReflectionStream(services: serviceNames, stream: stream)
        }
        router.bidirectional(GrpcReflectionV1alphaServerReflectionMethods.serverReflectionInfo) { _, stream in
            GRPCReflectionStream(services: serviceNames, stream: stream)
        }
        router.inline(AdminMethods.getMetrics) { _, _ in metrics.snapshot() }
        let serverInfo = ServerInfo.thisBuild(startTime: metrics.startTime)
        router.inline(AdminMethods.getServerInfo) { _, _ in serverInfo }

        try router.validate(serving: served)
        router.assignMetricsIndices(metrics.index(of:))
        return router
    }
}
