import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import LarderAPI
import LarderReactor
import LarderStore
import LarderSystem
@testable import LarderServer
import LarderWire

/// What a `TestConnection` received for one call, in the order it arrived.
enum Received: Equatable {
    /// A unary call's end (answered on the loop or delivered from another thread).
    case reply(callID: UInt64, code: StatusCode, message: String, payload: [UInt8])
    case message(callID: UInt64, payload: [UInt8])
    case end(callID: UInt64, code: StatusCode, message: String)
}

/// A test transport's encoding: a tag, the call id, the code, then the payload or message.
struct TestEncoder: ReplyEncoder {
    func reply(callID: UInt64, result: Result<[UInt8], RPCError>) -> (bytes: [UInt8], refusal: RPCError?) {
        switch result {
        case .success(let payload): (Self.bytes(0, callID, .ok, payload), nil)
        case .failure(let error): (Self.bytes(0, callID, error.code, Array(error.message.utf8)), nil)
        }
    }

    func streamMessage(callID: UInt64, payload: [UInt8]) -> [UInt8] { Self.bytes(1, callID, .ok, payload) }

    func streamEnd(callID: UInt64, error: RPCError?) -> [UInt8] {
        Self.bytes(2, callID, error?.code ?? .ok, Array((error?.message ?? "").utf8))
    }

    private static func bytes(_ tag: UInt8, _ callID: UInt64, _ code: StatusCode, _ body: [UInt8]) -> [UInt8] {
        [tag, UInt8(truncatingIfNeeded: callID), UInt8(truncatingIfNeeded: code.rawValue)] + body
    }

    static func decode(_ bytes: [UInt8]) -> Received {
        let callID = UInt64(bytes[1])
        let code = StatusCode(rawValue: Int32(bytes[2]))
        let body = Array(bytes[3...])
        switch bytes[0] {
        case 0: return code == .ok ? .reply(callID: callID, code: code, message: "", payload: body)
            : .reply(callID: callID, code: code, message: String(decoding: body, as: UTF8.self), payload: [])
        case 1: return .message(callID: callID, payload: body)
        default: return .end(callID: callID, code: code, message: String(decoding: body, as: UTF8.self))
        }
    }
}

/// A connection of an in-process transport: starts calls in the core and records
/// what the core sends back. Used on `TestLoop.queue` only.
final class TestConnection: CallConnection, @unchecked Sendable {
    let id: UInt64
    let peer = SocketAddress(host: "127.0.0.1", port: 1)
    let usage: ConnectionUsage
    let calls = CallBook()
    let supportsStreaming: Bool
    var accountsCallMemory: Bool { supportsStreaming }
    var unsentReplyBytes = 0
    /// Set by a test that closes the connection (after unregistering it from the core).
    var isClosed = false
    var replyEncoder: any ReplyEncoder { TestEncoder() }
    private(set) var received: [Received] = []
    private(set) var deliveryBatches = 0

    init(id: UInt64, budget: MemoryBudget, supportsStreaming: Bool) {
        self.id = id
        self.usage = ConnectionUsage(budget: budget)
        self.supportsStreaming = supportsStreaming
    }

    func appendReply(callID: UInt64, result: Result<[UInt8], RPCError>) -> (bytes: Int, refusal: RPCError?) {
        let bytes = TestEncoder().reply(callID: callID, result: result).bytes
        received.append(TestEncoder.decode(bytes))
        return (bytes.count, nil)
    }

    func deliver(_ bytes: [UInt8], callID: UInt64, isFinal: Bool) { received.append(TestEncoder.decode(bytes)) }

    func repliesDelivered() { deliveryBatches += 1 }

    func flushAnswers() {}
}

/// A serial queue standing in for the event loop, a core on it, and a log read back from a pipe.
final class TestLoop: @unchecked Sendable {
    let queue = DispatchQueue(label: "test-loop")
    let core: CallCore
    let budget: MemoryBudget
    private let logRead: Int32
    private let logWrite: Int32

    init(store: any Store = UnusedStore(), budget: MemoryBudget = MemoryBudget(limit: 1 << 26, perConnectionLimit: 1 << 24),
         configure: (inout Router) -> Void) throws {
        self.budget = budget
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw RPCError.internalError("pipe failed") }
        logRead = fds[0]
        logWrite = fds[1]
        _ = fcntl(logRead, F_SETFL, fcntl(logRead, F_GETFL) | O_NONBLOCK)
        var router = Router(store: store)
        configure(&router)
        let metrics = MetricsRecorder(methodPaths: LarderServices.methodPaths)
        router.assignMetricsIndices(metrics.index(of:))
        let queue = self.queue
        core = CallCore(configuration: ServerConfiguration(), store: store, router: router, metrics: metrics,
                        token: nil, logger: Logger(minimumLevel: .info, fd: logWrite),
                        onLoop: { work in queue.async(execute: work) })
        store.setCompletionsDelivered { [core] in core.wakeForReplies() }
    }

    deinit {
        close(logRead)
        close(logWrite)
    }

    /// Runs `body` on the loop and returns its result.
    func sync<T>(_ body: () throws -> T) rethrows -> T { try queue.sync(execute: body) }

    func connect(streaming: Bool) -> TestConnection {
        sync {
            let connection = TestConnection(id: core.makeConnectionID(), budget: budget, supportsStreaming: streaming)
            core.register(connection)
            return connection
        }
    }

    /// Starts a call of `method` with an empty request on `connection`.
    func start(_ path: String, callID: UInt64, on connection: TestConnection, payload: [UInt8] = [],
               deadline: UInt64? = nil) {
        sync {
            payload.withUnsafeBytes { bytes in
                core.start(IncomingCall(method: core.resolveMethod(path), callID: callID, metadata: [:], deadline: deadline,
                                        receivedAt: MonotonicClock.nanoseconds(), requestBytes: bytes.count,
                                        payload: bytes), on: connection)
            }
        }
    }

    /// What `connection` received, once `condition` holds for it (polled for up to 30 s).
    func received(by connection: TestConnection, until condition: ([Received]) -> Bool) -> [Received] {
        for _ in 0..<3000 {
            let received = sync { connection.received }
            if condition(received) { return received }
            usleep(10_000)
        }
        return sync { connection.received }
    }

    /// The log lines written so far.
    func logLines() -> [String] {
        var text: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(logRead, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            text += buffer[0..<count]
        }
        return String(decoding: text, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}

/// A store for cores whose methods never reach a database.
struct UnusedStore: Store {
    func submit(_ read: StoreRead, cost: ReadCost) { read.fail(RPCError.internalError("no store")) }

    func submit(_ write: StoreWrite) { write.refuse(RPCError.internalError("no store")) }

    func close() {}
    func setCompletionsDelivered(_ body: @escaping @Sendable () -> Void) {}
}

/// A store whose every operation fails on a thread of its own with `error`, as a broken database would.
final class FailingStore: Store, @unchecked Sendable {
    let error: RPCError
    private let delivered = LockedValue<(@Sendable () -> Void)?>(nil)
    private let thread = DispatchQueue(label: "failing-store")

    init(error: RPCError) { self.error = error }

    func submit(_ read: StoreRead, cost: ReadCost) {
        let error = self.error
        thread.async { [self] in
            read.fail(error)
            delivered.withLock { $0 }?()
        }
    }

    func submit(_ write: StoreWrite) {
        let error = self.error
        thread.async { [self] in
            write.refuse(error)
            delivered.withLock { $0 }?()
        }
    }

    func close() {}
    func setCompletionsDelivered(_ body: @escaping @Sendable () -> Void) { delivered.withLock { $0 = body } }
}
