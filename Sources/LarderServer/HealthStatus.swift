import LarderAPI
import LarderWire
import Synchronization

/// The server's serving status for the health service: SERVING until shutdown
/// begins, except while the database is unavailable (`Store.isAvailable`).
final class HealthStatus: Sendable {
    private let serving = Atomic<Bool>(true)
    private let serviceNames: Set<String>

    init(serviceNames: [String]) {
        self.serviceNames = Set(serviceNames)
    }

    /// Marks the server NOT_SERVING (draining).
    func markNotServing() { serving.store(false, ordering: .relaxed) }

    var isServing: Bool { serving.load(ordering: .relaxed) }

    /// gRPC health semantics: "" is the whole server, a known service shares
    /// the server's status.
    /// - Throws: NOT_FOUND for any other name (as the gRPC health protocol says for Check).
    func check(_ request: HealthCheckRequest, databaseAvailable: Bool = true) throws(RPCError) -> HealthCheckResponse {
        guard request.service.isEmpty || serviceNames.contains(request.service) else {
            throw RPCError.notFound("unknown service \"\(request.service)\"; check \"\" for the whole server")
        }
        return HealthCheckResponse(status: isServing && databaseAvailable ? .serving : .notServing)
    }
}
