import LarderAPI
import LarderMemoryStore
import LarderStore
import LarderWire

/// Decodes a request payload of the method the first byte picks, runs the
/// method's operation against a fresh in-memory store, and checks that
/// request and response survive a round trip and that a failure is one a
/// client can act on (never INTERNAL or UNKNOWN).
///
/// Input: byte 0 picks the method (modulo the count of methods), the rest is
/// the payload.
enum PayloadFuzzer {
    static func run(_ data: UnsafeRawBufferPointer) throws(FuzzFailure) {
        guard let first = data.first else { return }
        let method = PayloadMethods.all[Int(first) % PayloadMethods.all.count]
        try method.run(UnsafeRawBufferPointer(rebasing: data[1...]))
    }
}

/// One method of the server: its wire path and how to run a payload through it.
struct PayloadMethod: Sendable {
    let path: String
    let run: @Sendable (UnsafeRawBufferPointer) throws(FuzzFailure) -> Void

    /// A method whose operation runs against a store (reads and writes alike:
    /// the in-memory store is both).
    init<Request: ProtoMessage & Equatable, Response: ProtoMessage & Equatable>(
        _ method: RPCMethod<Request, Response>,
        _ operation: @escaping @Sendable (Request, MemoryStore) throws(RPCError) -> Response
    ) {
        path = method.path
        run = { payload throws(FuzzFailure) in
            let request: Request
            do throws(RPCError) {
                // As the server decodes: within its DecodeLimits.
                request = try UnpackArena(blockSize: 1024, limits: .server).decode(Request.self, from: payload)
            } catch {
                try Self.expectClientError(error, "decoding \(method.path)", limitsApply: true)
                return
            }
            try EnvelopeFuzzer.roundTrip(request)
            let response: Response
            do throws(RPCError) {
                response = try operation(request, MemoryStore.seeded())
            } catch {
                try Self.expectClientError(error, method.path)
                return
            }
            try EnvelopeFuzzer.roundTrip(response)
        }
    }

    /// A method that touches no store (health).
    init<Request: ProtoMessage & Equatable, Response: ProtoMessage>(decodeOnly method: RPCMethod<Request, Response>) {
        path = method.path
        run = { payload throws(FuzzFailure) in
            guard let request = try? ProtoCodec.decode(Request.self, from: payload) else { return }
            try EnvelopeFuzzer.roundTrip(request)
        }
    }

    /// A streaming method that touches no store (health Watch, the standard reflection): each
    /// request message of its stream is decoded like a unary request.
    init<Request: ProtoMessage & Equatable, Response: ProtoMessage>(
        decodeOnly method: StreamingRPCMethod<Request, Response>
    ) {
        path = method.path
        run = { payload throws(FuzzFailure) in
            guard let request = try? ProtoCodec.decode(Request.self, from: payload) else { return }
            try EnvelopeFuzzer.roundTrip(request)
        }
    }

    /// Errors from bad input must carry a code and message a client can act on.
    /// `limitsApply`: the request was decoded within `DecodeLimits`, which refuse with RESOURCE_EXHAUSTED.
    static func expectClientError(_ error: RPCError, _ context: String, limitsApply: Bool = false) throws(FuzzFailure) {
        switch error.code {
        case .resourceExhausted where limitsApply:
            if error.message.isEmpty { throw FuzzFailure("\(context): RESOURCE_EXHAUSTED with an empty message") }
        case .invalidArgument, .notFound, .alreadyExists, .failedPrecondition:
            if error.message.isEmpty { throw FuzzFailure("\(context): \(error.code.name) with an empty message") }
        default:
            throw FuzzFailure("\(context): unexpected \(error.code.name): \(error.message)")
        }
    }
}

/// Every method larder-server serves, with the operation its router runs.
enum PayloadMethods {
    static let all: [PayloadMethod] = [
        PayloadMethod(CategoryGroupMethods.createCategoryGroup) { r, s throws(RPCError) in try Operations.createCategoryGroup(r, s) },
        PayloadMethod(CategoryGroupMethods.getCategoryGroup) { r, s throws(RPCError) in try Operations.getCategoryGroup(r, s) },
        PayloadMethod(CategoryGroupMethods.listCategoryGroups) { r, s throws(RPCError) in try Operations.listCategoryGroups(r, s) },
        PayloadMethod(CategoryGroupMethods.updateCategoryGroup) { r, s throws(RPCError) in try Operations.updateCategoryGroup(r, s) },
        PayloadMethod(CategoryGroupMethods.deleteCategoryGroup) { r, s throws(RPCError) in try Operations.deleteCategoryGroup(r, s) },

        PayloadMethod(ItemCategoryMethods.createItemCategory) { r, s throws(RPCError) in try Operations.createItemCategory(r, s) },
        PayloadMethod(ItemCategoryMethods.getItemCategory) { r, s throws(RPCError) in try Operations.getItemCategory(r, s) },
        PayloadMethod(ItemCategoryMethods.listItemCategories) { r, s throws(RPCError) in try Operations.listItemCategories(r, s) },
        PayloadMethod(ItemCategoryMethods.updateItemCategory) { r, s throws(RPCError) in try Operations.updateItemCategory(r, s) },
        PayloadMethod(ItemCategoryMethods.deleteItemCategory) { r, s throws(RPCError) in try Operations.deleteItemCategory(r, s) },

        PayloadMethod(LocationMethods.createLocation) { r, s throws(RPCError) in try Operations.createLocation(r, s) },
        PayloadMethod(LocationMethods.getLocation) { r, s throws(RPCError) in try Operations.getLocation(r, s) },
        PayloadMethod(LocationMethods.listLocations) { r, s throws(RPCError) in try Operations.listLocations(r, s) },
        PayloadMethod(LocationMethods.updateLocation) { r, s throws(RPCError) in try Operations.updateLocation(r, s) },
        PayloadMethod(LocationMethods.deleteLocation) { r, s throws(RPCError) in try Operations.deleteLocation(r, s) },

        PayloadMethod(MealRecordMethods.createMealRecord) { r, s throws(RPCError) in try Operations.createMealRecord(r, s).message },
        PayloadMethod(MealRecordMethods.getMealRecord) { r, s throws(RPCError) in try Operations.getMealRecord(r, s) },
        PayloadMethod(MealRecordMethods.listMealRecords) { r, s throws(RPCError) in
            try Operations.listMealRecords(r, s).decoded()
        },
        PayloadMethod(MealRecordMethods.updateMealRecord) { r, s throws(RPCError) in try Operations.updateMealRecord(r, s) },
        PayloadMethod(MealRecordMethods.deleteMealRecord) { r, s throws(RPCError) in try Operations.deleteMealRecord(r, s) },
        PayloadMethod(MealRecordMethods.summarizeMealRecords) { r, s throws(RPCError) in
            try Operations.summarizeMealRecords(r, s)
        },

        PayloadMethod(decodeOnly: HealthMethods.check),
        // Answered by LarderServer on the loop without a store: decoding is what untrusted bytes reach.
        PayloadMethod(decodeOnly: ReflectionMethods.listServices),
        PayloadMethod(decodeOnly: ReflectionMethods.describeType),
        PayloadMethod(decodeOnly: AdminMethods.getMetrics),
        PayloadMethod(decodeOnly: AdminMethods.getServerInfo),
        // Streaming, over gRPC over HTTP/2 only: what a reflection request reaches after decoding
        // (GRPCReflectionResponder, in LarderServer, which this target does not link) is tested in
        // LarderServerTests; the HTTP/2 target fuzzes the streams themselves.
        PayloadMethod(decodeOnly: HealthMethods.watch),
        PayloadMethod(decodeOnly: GrpcReflectionV1ServerReflectionMethods.serverReflectionInfo),
        PayloadMethod(decodeOnly: GrpcReflectionV1alphaServerReflectionMethods.serverReflectionInfo),
    ]
}
