import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import LarderAPI
import LarderStore
@testable import LarderServer
import LarderSystem
import LarderWire
import Testing
import LarderTestSupport

/// Unary calls the store has not answered by their deadline: answered DEADLINE_EXCEEDED at the
/// server's tick (`CallCore.expireCalls`), their call id free again, their late reply dropped,
/// and their slot held until the store is done with them.
@Suite(.offThePool) struct DeadlineCallTests {
    static let getPath = LocationMethods.getLocation.path
    static let second: UInt64 = 1_000_000_000

    static func loop(_ store: HeldStore) throws -> TestLoop {
        try TestLoop(store: store) { router in
            router.read(LocationMethods.getLocation) { request, _ throws(RPCError) in
                Location(id: request.id, name: "stored")
            }
        }
    }

    static func request(_ id: String) -> [UInt8] { ProtoCodec.encode(GetLocationRequest(id: id)) }

    static func metrics(_ loop: TestLoop) -> [String: UInt64] {
        loop.sync { loop.core.metrics.snapshot() }.methods.first { $0.method == getPath }?.callsByCode ?? [:]
    }

    @Test func aCallTheStoreHoldsPastItsDeadlineIsAnsweredThenAndItsLateReplyDropped() throws {
        let store = HeldStore()
        let loop = try Self.loop(store)
        let connection = loop.connect(streaming: false)
        let now = MonotonicClock.nanoseconds()
        loop.start(Self.getPath, callID: 4, on: connection, payload: Self.request("first"), deadline: now + Self.second)
        loop.start(Self.getPath, callID: 6, on: connection, payload: Self.request("no deadline"))
        #expect(store.heldCount == 2)

        // Before the deadline: nothing.
        loop.sync { loop.core.expireCalls(now: now + Self.second - 1) }
        #expect(loop.sync { connection.received }.isEmpty)

        // At it: call 4 is answered while the store still holds it; call 6 has no deadline.
        loop.sync { loop.core.expireCalls(now: now + Self.second) }
        let expired = Received.reply(callID: 4, code: .deadlineExceeded, message: "deadline of \(Self.getPath) exceeded",
                                     payload: [])
        #expect(loop.sync { connection.received } == [expired])
        #expect(Self.metrics(loop) == ["DEADLINE_EXCEEDED": 1])
        // Its slot stays taken until the store is done with it; its id is free at once.
        #expect(loop.sync { connection.calls.inFlight } == 2)
        #expect(loop.sync { loop.core.callsInFlight } == 2)
        loop.start(Self.getPath, callID: 4, on: connection, payload: Self.request("second"))
        #expect(store.heldCount == 3)

        // The store answers all three, the expired one first: its reply is dropped.
        store.release()
        let received = loop.received(by: connection) { $0.count == 3 }
        #expect(received.count == 3)
        #expect(received.first == expired)
        let answered = Set(received.dropFirst().compactMap { entry -> String? in
            guard case .reply(let callID, .ok, _, let payload) = entry,
                  let location = try? ProtoCodec.decode(Location.self, from: payload) else { return nil }
            return "\(callID) \(location.id)"
        })
        #expect(answered == ["6 no deadline", "4 second"])
        for _ in 0..<3000 where loop.sync({ connection.calls.inFlight }) != 0 { usleep(10_000) }
        #expect(loop.sync { connection.calls.inFlight } == 0)
        #expect(loop.sync { loop.core.callsInFlight } == 0)
        #expect(Self.metrics(loop) == ["DEADLINE_EXCEEDED": 1, "OK": 2])
    }

    @Test func aCallAnsweredBeforeItsDeadlineIsNotExpiredLater() throws {
        let store = HeldStore()
        let loop = try Self.loop(store)
        let connection = loop.connect(streaming: false)
        let now = MonotonicClock.nanoseconds()
        loop.start(Self.getPath, callID: 8, on: connection, payload: Self.request("quick"), deadline: now + 60 * Self.second)
        store.release()
        _ = loop.received(by: connection) { !$0.isEmpty }
        for _ in 0..<3000 where loop.sync({ connection.calls.inFlight }) != 0 { usleep(10_000) }
        loop.sync { loop.core.expireCalls(now: now + 120 * Self.second) }
        let received = loop.sync { connection.received }
        #expect(received.count == 1)
        guard case .reply(8, .ok, _, _)? = received.first else {
            Issue.record("not an OK reply: \(received)")
            return
        }
        #expect(Self.metrics(loop) == ["OK": 1])
    }

    @Test func aClosedConnectionsExpiredCallIsDroppedWhenTheStoreAnswers() throws {
        let store = HeldStore()
        let loop = try Self.loop(store)
        let connection = loop.connect(streaming: false)
        let now = MonotonicClock.nanoseconds()
        loop.start(Self.getPath, callID: 10, on: connection, payload: Self.request("gone"), deadline: now + Self.second)
        loop.sync { loop.core.expireCalls(now: now + Self.second) }
        loop.sync { loop.core.unregister(connection) }
        store.release()
        for _ in 0..<3000 where loop.sync({ loop.core.callsInFlight }) != 0 { usleep(10_000) }
        #expect(loop.sync { loop.core.callsInFlight } == 0)
        #expect(Self.metrics(loop) == ["DEADLINE_EXCEEDED": 1])
        #expect(loop.sync { connection.received }.count == 1)
    }
}

/// A store that holds every operation until `release()`, then runs them in order on a thread
/// of its own: a database that is busy, then free.
final class HeldStore: Store, @unchecked Sendable {
    private let held = LockedValue<[@Sendable () -> Void]>([])
    private let delivered = LockedValue<(@Sendable () -> Void)?>(nil)
    private let thread = DispatchQueue(label: "held-store")

    var heldCount: Int { held.withLock { $0.count } }

    /// Runs every operation held so far, and announces their completions.
    func release() {
        let jobs = held.withLock { jobs in
            defer { jobs.removeAll() }
            return jobs
        }
        thread.async { [self] in
            for job in jobs { job() }
            delivered.withLock { $0 }?()
        }
    }

    func submit(_ read: StoreRead, cost: ReadCost) {
        held.withLock { $0.append { read.run(on: NoReader()) } }
    }

    func submit(_ write: StoreWrite) {
        held.withLock { $0.append { write.refuse(RPCError.internalError("no writes here")) } }
    }

    func close() {}
    func setCompletionsDelivered(_ body: @escaping @Sendable () -> Void) { delivered.withLock { $0 = body } }
}

/// A reader with nothing in it, for handlers that do not read.
struct NoReader: StoreReader {
    func location(id: String) throws(RPCError) -> Location? { nil }
    func locations(_ page: NamePageQuery) throws(RPCError) -> [Location] { [] }
    func categoryGroup(id: String) throws(RPCError) -> CategoryGroup? { nil }
    func categoryGroups(_ page: NamePageQuery) throws(RPCError) -> [CategoryGroup] { [] }
    func itemCategory(id: String) throws(RPCError) -> ItemCategory? { nil }
    func itemCategories(groupID: String?, _ page: NamePageQuery) throws(RPCError) -> [ItemCategory] { [] }
    func itemCategoryCount(groupID: String) throws(RPCError) -> Int { 0 }
    func mealRecord(id: String) throws(RPCError) -> MealRecord? { nil }
    func mealRecords(_ query: MealRecordPageQuery) throws(RPCError) -> EncodedMessages { EncodedMessages() }
    func mealSummary(_ query: MealSummaryQuery) throws(RPCError) -> [MealSummaryRow] { [] }
}
