import LarderAPI
import LarderWire
import Synchronization
import LarderSystem

/// The server's serving status for the health service: SERVING until shutdown
/// begins, except while the database is unavailable (`Store.isAvailable`).
///
/// It also keeps the open `Watch` streams: each got the status when it started, gets every
/// change the server's tick finds (`refresh`), and ends after NOT_SERVING when a drain begins
/// (`endWatches`).
final class HealthStatus: Sendable {
    typealias Status = HealthCheckResponse.ServingStatus

    /// One open Watch stream and the last status it was sent.
    private struct Watch: Sendable {
        let stream: ServerStream
        let service: String
        var last: Status
    }

    private let serving = Atomic<Bool>(true)
    private let serviceNames: Set<String>
    private let watches = LockedValue<[ObjectIdentifier: Watch]>([:])

    init(serviceNames: [String]) {
        self.serviceNames = Set(serviceNames)
    }

    /// Marks the server NOT_SERVING (draining).
    func markNotServing() { serving.store(false, ordering: .relaxed) }

    var isServing: Bool { serving.load(ordering: .relaxed) }

    /// Watch streams open now.
    var watchCount: Int { watches.withLock { $0.count } }

    /// gRPC health semantics: "" is the whole server, a known service shares
    /// the server's status.
    /// - Throws: NOT_FOUND for any other name (as the gRPC health protocol says for Check).
    func check(_ request: HealthCheckRequest, databaseAvailable: Bool = true) throws(RPCError) -> HealthCheckResponse {
        let status = status(of: request.service, databaseAvailable: databaseAvailable)
        guard status != .serviceUnknown else {
            throw RPCError.notFound("unknown service \(SafeText.quoted(request.service)); check \"\" for the whole server")
        }
        return HealthCheckResponse(status: status)
    }

    /// Starts a Watch: sends the current status (SERVICE_UNKNOWN for a name the server does not
    /// serve, as the gRPC health protocol says for Watch), then keeps the stream for `refresh`.
    /// While draining, the status is NOT_SERVING and the stream ends right after it.
    func watch(_ request: HealthCheckRequest, stream: ServerStream, databaseAvailable: Bool) {
        let status = status(of: request.service, databaseAvailable: databaseAvailable)
        stream.send(HealthCheckResponse(status: status))
        guard isServing else {
            stream.finish()
            return
        }
        let key = ObjectIdentifier(stream)
        watches.withLock { $0[key] = Watch(stream: stream, service: request.service, last: status) }
        stream.onCancel { [self] in
            guard let watch = watches.withLock({ $0.removeValue(forKey: key) }) else { return }
            watch.stream.finish(RPCError(.cancelled, "the watch was cancelled"))
        }
    }

    /// Sends each Watch stream its status if it changed since the last one it got.
    func refresh(databaseAvailable: Bool) {
        let changes: [(ServerStream, Status)] = watches.withLock { watches in
            var changes: [(ServerStream, Status)] = []
            for (key, watch) in watches {
                let status = status(of: watch.service, databaseAvailable: databaseAvailable)
                guard status != watch.last else { continue }
                watches[key]?.last = status
                changes.append((watch.stream, status))
            }
            return changes
        }
        for (stream, status) in changes { stream.send(HealthCheckResponse(status: status)) }
    }

    /// The drain began (after `markNotServing`): every Watch stream gets NOT_SERVING, then ends with OK.
    func endWatches() {
        let ending = watches.withLock { watches in
            defer { watches = [:] }
            return Array(watches.values)
        }
        for watch in ending {
            if watch.last == .serving { watch.stream.send(HealthCheckResponse(status: .notServing)) }
            watch.stream.finish()
        }
    }

    /// The status of `service` ("" = the whole server); SERVICE_UNKNOWN for a name not served.
    private func status(of service: String, databaseAvailable: Bool) -> Status {
        guard service.isEmpty || serviceNames.contains(service) else { return .serviceUnknown }
        return isServing && databaseAvailable ? .serving : .notServing
    }
}
