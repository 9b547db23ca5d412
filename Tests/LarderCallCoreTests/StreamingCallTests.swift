import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import LarderAPI
import LarderStore
@testable import LarderServer
import LarderWire
import LarderSystem
import Testing
import LarderTestSupport

/// The call core's streaming path, driven by an in-process transport: server-streaming
/// and bidirectional calls, their end, cancellation, and the lean protocol's refusal.
@Suite(.offThePool) struct StreamingCallTests {
    /// grpc.health.v1.Health/Watch, served by a test handler.
    static let watchPath = HealthMethods.watch.path
    /// The bidirectional reflection method, served by an echo.
    static let echoPath = GrpcReflectionV1ServerReflectionMethods.serverReflectionInfo.path
    /// The v1alpha reflection method, served by a handler that waits for the core to end it.
    static let waitPath = GrpcReflectionV1alphaServerReflectionMethods.serverReflectionInfo.path

    /// A loop whose core serves a test server-streaming handler (three messages from another
    /// thread, then OK) and a bidirectional echo.
    static func streamingLoop(streamEnd: RPCError? = nil) throws -> TestLoop {
        try TestLoop { router in
            router.serverStreaming(HealthMethods.watch) { _, _, stream in
                DispatchQueue.global().async {
                    for status in [HealthCheckResponse.ServingStatus.serving, .notServing, .serving] {
                        stream.send(HealthCheckResponse(status: status))
                    }
                    stream.finish(streamEnd)
                }
            }
            router.bidirectional(GrpcReflectionV1ServerReflectionMethods.serverReflectionInfo) { _, stream in
                EchoReceiver(stream: stream)
            }
            router.bidirectional(GrpcReflectionV1alphaServerReflectionMethods.serverReflectionInfo) { _, stream in
                // Never answers: it ends only when the core ends or cancels it.
                WaitingReceiver(stream: stream)
            }
        }
    }

    @Test func aStreamPastItsDeadlineEndsWithDeadlineExceededAndFreesItsSlot() throws {
        let loop = try Self.streamingLoop()
        let connection = loop.connect(streaming: true)
        let now = MonotonicClock.nanoseconds()
        loop.start(Self.waitPath, callID: 4, on: connection, deadline: now + 1_000_000_000)
        loop.start(Self.waitPath, callID: 6, on: connection)
        loop.sync { loop.core.expireStreams(now: now) }
        #expect(loop.sync { connection.received }.isEmpty)
        let receiver = try #require(loop.sync { connection.calls.receivers[4] as? WaitingReceiver })
        loop.sync { loop.core.expireStreams(now: now + 1_000_000_000) }
        let received = loop.received(by: connection) { !$0.isEmpty }
        #expect(received == [.end(callID: 4, code: .deadlineExceeded, message: "deadline of \(Self.waitPath) exceeded")])
        #expect(receiver.wasCancelled)
        #expect(receiver.stream.send([1]) == false)
        // The slot is free; the call without a deadline is still open.
        #expect(loop.sync { connection.calls.inFlight } == 1)
        #expect(loop.sync { Set(connection.calls.streams.keys) } == [6])
    }

    @Test func endingAStreamForTheTransportFreesItsSlotOnce() throws {
        let loop = try Self.streamingLoop()
        let connection = loop.connect(streaming: true)
        loop.start(Self.waitPath, callID: 8, on: connection)
        loop.sync { loop.core.end(callID: 8, on: connection, RPCError(.resourceExhausted, "not read")) }
        // A second end, and the handler's own finish, change nothing.
        loop.sync { loop.core.end(callID: 8, on: connection, RPCError(.internal, "again")) }
        _ = loop.received(by: connection) { !$0.isEmpty }
        #expect(loop.sync { loop.core.endStreams(RPCError.unavailable("draining")) } == 0)
        for _ in 0..<3000 where loop.sync({ connection.calls.inFlight }) != 0 { usleep(10_000) }
        #expect(loop.sync { connection.received } == [.end(callID: 8, code: .resourceExhausted, message: "not read")])
        #expect(loop.sync { loop.core.callsInFlight } == 0)
    }

    @Test func aDrainTimeoutEndsEveryOpenStreamWithItsError() throws {
        let loop = try Self.streamingLoop()
        let connection = loop.connect(streaming: true)
        loop.start(Self.waitPath, callID: 1, on: connection)
        loop.start(Self.waitPath, callID: 2, on: connection)
        #expect(loop.sync { loop.core.endStreams(RPCError.unavailable("server is shutting down")) } == 2)
        let received = loop.received(by: connection) { $0.count == 2 }
        #expect(Set(received.map { if case .end(let id, let code, _) = $0 { "\(id) \(code.name)" } else { "?" } })
                == ["1 UNAVAILABLE", "2 UNAVAILABLE"])
        for _ in 0..<3000 where loop.sync({ loop.core.callsInFlight }) != 0 { usleep(10_000) }
        #expect(loop.sync { loop.core.callsInFlight } == 0)
    }

    @Test func aCancelHookRunsOnceWhenTheCallIsCancelled() throws {
        let loop = try Self.streamingLoop()
        let connection = loop.connect(streaming: true)
        loop.start(Self.waitPath, callID: 3, on: connection)
        let stream = try #require(loop.sync { connection.calls.streams[3] })
        let runs = LockedValue(0)
        stream.onCancel { runs.withLock { $0 += 1 } }
        loop.sync { loop.core.cancel(callID: 3, on: connection) }
        loop.sync { loop.core.cancel(callID: 3, on: connection) }
        #expect(runs.withLock { $0 } == 1)
        // Registered after the cancel: runs at once.
        stream.onCancel { runs.withLock { $0 += 1 } }
        #expect(runs.withLock { $0 } == 2)
    }

    @Test func serverStreamingDeliversEveryMessageThenTheStatus() throws {
        let loop = try Self.streamingLoop()
        let connection = loop.connect(streaming: true)
        loop.start(Self.watchPath, callID: 7, on: connection)
        let received = loop.received(by: connection) { $0.contains { if case .end = $0 { true } else { false } } }
        let expected = [HealthCheckResponse.ServingStatus.serving, .notServing, .serving].map {
            Received.message(callID: 7, payload: ProtoCodec.encode(HealthCheckResponse(status: $0)))
        } + [Received.end(callID: 7, code: .ok, message: "")]
        #expect(received == expected)
        #expect(loop.sync { loop.core.callsInFlight } == 0)
        #expect(loop.sync { connection.calls.inFlight } == 0)
        #expect(loop.sync { connection.calls.streams.isEmpty })
    }

    @Test func aStreamEndingInInternalGivesTheClientOnlyAReference() throws {
        let loop = try Self.streamingLoop(streamEnd: RPCError.internalError(
            "watch failed", cause: RPCError(.unknown, "the disk said no")))
        let connection = loop.connect(streaming: true)
        loop.start(Self.watchPath, callID: 3, on: connection)
        let received = loop.received(by: connection) { $0.contains { if case .end = $0 { true } else { false } } }
        guard case .end(_, let code, let message) = received.last else {
            Issue.record("no end: \(received)")
            return
        }
        #expect(code == .internal)
        #expect(!message.contains("disk said no") && !message.contains("watch failed"))
        let reference = try #require(message.firstMatch(of: /ref ([0-9a-f]{12})/)?.1)
        let line = try #require(loop.logLines().first { $0.contains("event=call_failed") })
        #expect(line.contains("ref=\(reference)"))
        #expect(line.contains("the disk said no"))
    }

    @Test func bidirectionalCallsTakeClientMessagesAsTheyArriveUntilHalfClose() throws {
        let loop = try Self.streamingLoop()
        let connection = loop.connect(streaming: true)
        loop.start(Self.echoPath, callID: 5, on: connection)
        for text in ["one", "two"] {
            loop.sync {
                Array(text.utf8).withUnsafeBytes { loop.core.receive($0, callID: 5, on: connection) }
            }
            _ = loop.received(by: connection) { $0.count == (text == "one" ? 1 : 2) }
        }
        #expect(loop.sync { loop.core.callsInFlight } == 1)
        loop.sync { loop.core.halfClose(callID: 5, on: connection) }
        let received = loop.received(by: connection) { $0.count == 3 }
        #expect(received == [.message(callID: 5, payload: Array("one".utf8)),
                             .message(callID: 5, payload: Array("two".utf8)),
                             .end(callID: 5, code: .ok, message: "")])
        #expect(loop.sync { loop.core.callsInFlight } == 0)
        #expect(loop.sync { connection.calls.receivers.isEmpty && connection.calls.ids.isEmpty })
    }

    @Test func aClosedConnectionCancelsItsStreamsAndTheirSlotsAreFreedWhenTheyFinish() throws {
        let loop = try Self.streamingLoop()
        let connection = loop.connect(streaming: true)
        loop.start(Self.echoPath, callID: 9, on: connection)
        let receiver = try #require(loop.sync { connection.calls.receivers[9] as? EchoReceiver })
        loop.sync { loop.core.unregister(connection) }
        #expect(receiver.wasCancelled)
        #expect(receiver.stream.isCancelled)
        #expect(receiver.stream.send([1, 2, 3]) == false)
        // The handler still ends the call: it stops counting in flight.
        receiver.stream.finish(RPCError(.cancelled, "client went away"))
        for _ in 0..<3000 where loop.sync({ loop.core.callsInFlight }) != 0 { usleep(10_000) }
        #expect(loop.sync { loop.core.callsInFlight } == 0)
        #expect(loop.sync { connection.received }.isEmpty)
    }

    @Test func streamingMethodsOverATransportWithoutStreamsAreUnimplemented() throws {
        let loop = try Self.streamingLoop()
        let connection = loop.connect(streaming: false)
        loop.start(Self.watchPath, callID: 1, on: connection)
        loop.start(Self.echoPath, callID: 2, on: connection)
        let received = loop.sync { connection.received }
        #expect(received.count == 2)
        for (reply, path) in zip(received, [Self.watchPath, Self.echoPath]) {
            guard case .reply(_, let code, let message, _) = reply else {
                Issue.record("not a reply: \(reply)")
                continue
            }
            #expect(code == .unimplemented)
            #expect(message.contains(path) && message.contains("gRPC over HTTP/2"))
        }
        #expect(loop.sync { loop.core.callsInFlight } == 0)
    }

    @Test func aStoreFailureReachesTheClientAsAReferenceAndTheLogWithItsCause() throws {
        let cause = RPCError(.unknown, "SQLITE_IOERR: disk I/O error on page 42")
        let loop = try TestLoop(store: FailingStore(error: RPCError.internalError("the database failed", cause: cause))) {
            router in router.read(LocationMethods.getLocation) { _, _ throws(RPCError) in Location() }
        }
        let connection = loop.connect(streaming: false)
        loop.start(LocationMethods.getLocation.path, callID: 4, on: connection)
        let received = loop.received(by: connection) { !$0.isEmpty }
        guard case .reply(4, .internal, let message, _) = received.first else {
            Issue.record("not an INTERNAL reply: \(received)")
            return
        }
        #expect(!message.contains("disk I/O") && !message.contains("database failed"))
        let reference = try #require(message.firstMatch(of: /internal error \(ref ([0-9a-f]{12})\)/)?.1)
        let line = try #require(loop.logLines().first { $0.contains("event=call_failed") })
        #expect(line.contains("ref=\(reference)"))
        #expect(line.contains("disk I/O error on page 42"))
        #expect(line.contains("conn=\(connection.id)") && line.contains("call=4"))
    }

    @Test func aDatabaseFailureTheOperatorMustSeeIsLoggedAndTheClientGetsItsStatus() throws {
        let ioError = TestDatabaseError(failure: .unreachable, message: "disk I/O error")
        let busy = TestDatabaseError(failure: .busy, message: "database is locked")
        for (cause, logged) in [(ioError, true), (busy, false)] {
            let loop = try TestLoop(store: FailingStore(error: cause.rpcError)) {
                router in router.read(LocationMethods.getLocation) { _, _ throws(RPCError) in Location() }
            }
            let connection = loop.connect(streaming: false)
            loop.start(LocationMethods.getLocation.path, callID: 5, on: connection)
            let received = loop.received(by: connection) { !$0.isEmpty }
            guard case .reply(5, .unavailable, let message, _) = received.first else {
                Issue.record("not an UNAVAILABLE reply: \(received)")
                continue
            }
            #expect(message.contains(cause.message))
            let line = loop.logLines().first { $0.contains("event=database_failed") }
            #expect((line != nil) == logged, "\(cause): \(String(describing: line))")
            if let line {
                #expect(line.hasPrefix("ts=") && line.contains("level=error") && line.contains("status=UNAVAILABLE"))
                #expect(line.contains("disk I/O error") && line.contains("call=5"))
            }
        }
    }
}

/// A database error of a given kind, as a backend would raise it.
struct TestDatabaseError: DatabaseError {
    static let subject = "the database"
    static let dataSubject = "the database file"
    let failure: DatabaseFailure
    let message: String
    var description: String { message }
}

/// Sends nothing and ends its call only when cancelled.
final class WaitingReceiver: ClientStreamReceiver, @unchecked Sendable {
    let stream: ServerStream
    private(set) var wasCancelled = false

    init(stream: ServerStream) { self.stream = stream }

    func received(_ payload: UnsafeRawBufferPointer, scratch: CallScratch) {}
    func halfClosed() {}
    func cancelled() {
        wasCancelled = true
        stream.finish(RPCError(.cancelled, "cancelled"))
    }
}

/// Echoes each client message back, and ends the call when the client half-closes.
final class EchoReceiver: ClientStreamReceiver, @unchecked Sendable {
    let stream: ServerStream
    private(set) var wasCancelled = false

    init(stream: ServerStream) { self.stream = stream }

    func received(_ payload: UnsafeRawBufferPointer, scratch: CallScratch) { stream.send(Array(payload)) }
    func halfClosed() { stream.finish() }
    func cancelled() { wasCancelled = true }
}
