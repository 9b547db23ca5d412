import Foundation
import Glibc
import LarderAPI
import LarderClient
import LarderWire
import Testing

@Suite("LarderClient against a fake server")
struct LarderClientTests {
    /// What counts as loopback for the warning about tokens in clear text: addresses, not
    /// names that merely begin like one (review 22).
    @Test func loopbackHostsAreAddressesOrLocalhost() {
        for host in ["localhost", "api.localhost", "127.0.0.1", "127.255.0.9", "::1", "0:0:0:0:0:0:0:1"] {
            #expect(ServerAddress(host: host, port: 1).isLoopback, "\(host)")
        }
        for host in ["127.example.com", "192.0.2.1", "::2", "localhost.example.com", "1.127.0.0"] {
            #expect(!ServerAddress(host: host, port: 1).isLoopback, "\(host)")
        }
    }

    @Test("replies sent in reverse order reach the right calls")
    func outOfOrderReplies() async throws {
        let server = try FakeServer()
        let client = try LarderClient(server: server.address)
        defer { client.close() }
        let ids = (1...5).map { "id-\($0)" }

        try await withThrowingTaskGroup(of: (String, Result<Location, RPCError>).self) { group in
            for id in ids {
                group.addTask {
                    (id, await outcome { () async throws(RPCError) in
                        try await client.call(LocationMethods.getLocation, GetLocationRequest(id: id))
                    })
                }
            }
            // All five requests arrive before any reply: they are in flight at once.
            var received: [RequestEnvelope] = []
            var iterator = server.requests.makeAsyncIterator()
            while received.count < ids.count, let request = await iterator.next() { received.append(request) }
            #expect(received.count == ids.count)
            #expect(Set(received.map(\.callID)).count == ids.count)
            #expect(!received.contains { $0.callID == 0 })
            #expect(received.allSatisfy { $0.method == "/larder.v1.LocationService/GetLocation" })

            for request in received.reversed() {
                let get = try ProtoCodec.decode(GetLocationRequest.self, from: request.payload)
                let payload = ProtoCodec.encode(Location(id: get.id, name: "name of \(get.id)"))
                server.reply(ResponseEnvelope(callID: request.callID, payload: payload))
            }
            var seen: Set<String> = []
            for try await (id, result) in group {
                let location = try result.get()
                #expect(location.id == id)
                #expect(location.name == "name of \(id)")
                seen.insert(id)
            }
            #expect(seen == Set(ids))
        }
    }

    @Test("a call the server never answers gets DEADLINE_EXCEEDED; a later call still works")
    func deadlineExceeded() async throws {
        let server = try FakeServer()
        let client = try LarderClient(server: server.address)
        defer { client.close() }
        var iterator = server.requests.makeAsyncIterator()

        let slow = Task {
            await outcome { () async throws(RPCError) in
                try await client.callRaw(path: "/test.Slow/Never", payload: [1, 2, 3], timeout: .milliseconds(150))
            }
        }
        let slowRequest = try #require(await iterator.next())
        #expect(slowRequest.timeoutMilliseconds == 150)
        #expect(slowRequest.payload == [1, 2, 3])

        let result = await slow.value
        #expect(throws: RPCError.self) { try result.get() }
        if case .failure(let error) = result {
            #expect(error.code == .deadlineExceeded)
            #expect(error.message.contains("/test.Slow/Never"))
        }

        let fast = Task {
            await outcome { () async throws(RPCError) in
                try await client.callRaw(path: "/test.Fast/Echo", payload: [9])
            }
        }
        let fastRequest = try #require(await iterator.next())
        #expect(fastRequest.timeoutMilliseconds == 0)
        #expect(fastRequest.callID != slowRequest.callID)
        // A late reply to the expired call is ignored.
        server.reply(ResponseEnvelope(callID: slowRequest.callID, payload: [7]))
        server.reply(ResponseEnvelope(callID: fastRequest.callID, payload: [9, 9]))
        #expect(try await fast.value.get() == [9, 9])
    }

    @Test("calls with and without deadlines on one connection: only the unanswered timed ones expire")
    func mixedDeadlines() async throws {
        let server = try FakeServer()
        let client = try LarderClient(server: server.address)
        defer { client.close() }
        var iterator = server.requests.makeAsyncIterator()
        let count = 20
        var calls: [Task<Result<[UInt8], RPCError>, Never>] = []
        for index in 0..<count {
            // Even calls time out (50-240 ms) and are never answered; odd calls have no deadline.
            let timeout: Duration? = index % 2 == 0 ? .milliseconds(50 + 10 * index) : nil
            let payload: [UInt8] = [UInt8(index)]
            calls.append(Task {
                await outcome { () async throws(RPCError) in
                    try await client.callRaw(path: "/test.Svc/Call", payload: payload, timeout: timeout)
                }
            })
        }
        var received: [RequestEnvelope] = []
        while received.count < count, let request = await iterator.next() { received.append(request) }
        for request in received where request.timeoutMilliseconds == 0 {
            server.reply(ResponseEnvelope(callID: request.callID, payload: request.payload))
        }
        for (index, call) in calls.enumerated() {
            let result = await call.value
            if index % 2 == 0 {
                #expect(result.failureCode == .deadlineExceeded)
            } else {
                #expect(try result.get() == [UInt8(index)])
            }
        }
        #expect(client.pendingCallCount == 0)
    }

    @Test("the server closing the connection fails every pending call with UNAVAILABLE")
    func serverCloses() async throws {
        let server = try FakeServer()
        let client = try LarderClient(server: server.address)
        defer { client.close() }
        var iterator = server.requests.makeAsyncIterator()
        let calls = (0..<2).map { index in
            Task {
                await outcome { () async throws(RPCError) in
                    try await client.callRaw(path: "/test.Svc/Call\(index)", payload: [])
                }
            }
        }
        for _ in calls { _ = try #require(await iterator.next()) }
        server.closeConnection()
        for call in calls {
            let result = await call.value
            guard case .failure(let error) = result else {
                Issue.record("expected UNAVAILABLE, got \(result)")
                continue
            }
            #expect(error.code == .unavailable)
            #expect(error.message == "connection to \(server.address) closed by the server (the request was sent: "
                    + "the server may have applied it)")
            #expect(error.cause as? RequestDelivery == .sent)
        }
        // The calls already sent are not sent again: the next call reconnects (the fake server's
        // listener still takes the connection into its backlog but never answers), and only it waits.
        #expect(client.isConnected == false)
        let later = await outcome { () async throws(RPCError) in
            try await client.callRaw(path: "/test.Svc/Later", payload: [], timeout: .seconds(2))
        }
        #expect(later.failureCode == .deadlineExceeded)
        #expect(client.isConnected)
    }

    @Test("a call sent before the connection dropped fails UNAVAILABLE and is not re-sent; the next call reconnects")
    func reconnectsWithoutResending() async throws {
        let server = try FakeServer()
        let client = try LarderClient(server: server.address)
        defer { client.close() }
        var iterator = server.requests.makeAsyncIterator()
        let first = Task {
            await outcome { () async throws(RPCError) in try await client.callRaw(path: "/test.Svc/First", payload: []) }
        }
        let sent = try #require(await iterator.next())
        #expect(sent.method == "/test.Svc/First")
        server.dropConnection()
        #expect(await first.value.failureCode == .unavailable)
        let second = Task {
            await outcome { () async throws(RPCError) in try await client.callRaw(path: "/test.Svc/Second", payload: [7]) }
        }
        // The next request the server sees, on a new connection, is the second call: the first was not sent again.
        let next = try #require(await iterator.next())
        #expect(next.method == "/test.Svc/Second")
        server.reply(ResponseEnvelope(callID: next.callID, payload: [42]))
        guard case .success(let payload) = await second.value else {
            Issue.record("the call after reconnecting failed")
            return
        }
        #expect(payload == [42])
        #expect(client.isConnected)
    }

    @Test("reconnect backoff grows from initial to maximum, with bounded jitter")
    func backoff() {
        let backoff = ReconnectBackoff(initial: .milliseconds(100), maximum: .seconds(1), multiplier: 2, jitter: 0.2)
        #expect(backoff.delay(afterFailures: 1, random: 0) == .milliseconds(100))
        #expect(backoff.delay(afterFailures: 3, random: 0) == .milliseconds(400))
        #expect(backoff.delay(afterFailures: 50, random: 0) == .seconds(1))
        #expect(backoff.delay(afterFailures: 50, random: 1) == .milliseconds(1200))
        #expect(backoff.delay(afterFailures: 1, random: -1) == .milliseconds(80))
    }

    @Test("a call_id 0 reply fails every pending call with its status")
    func connectionLevelError() async throws {
        let server = try FakeServer()
        let client = try LarderClient(server: server.address)
        defer { client.close() }
        var iterator = server.requests.makeAsyncIterator()
        let calls = (0..<3).map { _ in
            Task { await outcome { () async throws(RPCError) in try await client.callRaw(path: "/a/b", payload: []) } }
        }
        for _ in calls { _ = try #require(await iterator.next()) }
        server.reply(ResponseEnvelope(callID: 0, statusCode: .resourceExhausted, statusMessage: "frame too large"))
        for call in calls {
            let result = await call.value
            #expect(result.failure == RPCError(.resourceExhausted, "frame too large"))
        }
    }

    @Test("a server status is thrown as RPCError with its code and message")
    func serverStatus() async throws {
        let server = try FakeServer()
        let client = try LarderClient(server: server.address)
        defer { client.close() }
        var iterator = server.requests.makeAsyncIterator()
        let call = Task {
            await outcome { () async throws(RPCError) in
                try await client.call(LocationMethods.getLocation, GetLocationRequest(id: "x"))
            }
        }
        let request = try #require(await iterator.next())
        server.reply(ResponseEnvelope(callID: request.callID, error: .notFound("location \"x\" not found")))
        #expect(await call.value.failure == RPCError(.notFound, "location \"x\" not found"))
    }

    @Test("a reply that is not the response type is INTERNAL")
    func undecodableReply() async throws {
        let server = try FakeServer()
        let client = try LarderClient(server: server.address)
        defer { client.close() }
        var iterator = server.requests.makeAsyncIterator()
        let call = Task {
            await outcome { () async throws(RPCError) in
                try await client.call(LocationMethods.getLocation, GetLocationRequest(id: "x"))
            }
        }
        let request = try #require(await iterator.next())
        server.reply(ResponseEnvelope(callID: request.callID, payload: [0xFF, 0xFF, 0xFF]))
        let result = await call.value
        #expect(result.failureCode == .internal)
        #expect(result.failure?.message.contains("larder.v1.Location") == true)
    }

    @Test("default metadata and call metadata are sent with lower-case keys")
    func metadata() async throws {
        let server = try FakeServer()
        var options = ClientOptions()
        options.setBearerToken("s3cret")
        options.metadata["X-Trace"] = "default"
        let client = try LarderClient(server: server.address, options: options)
        defer { client.close() }
        var iterator = server.requests.makeAsyncIterator()
        let call = Task {
            await outcome { () async throws(RPCError) in
                try await client.callRaw(path: "/a/b", payload: [], metadata: ["X-Trace": "call"])
            }
        }
        let request = try #require(await iterator.next())
        #expect(request.metadata == ["authorization": "Bearer s3cret", "x-trace": "call"])
        server.reply(ResponseEnvelope(callID: request.callID))
        #expect(try await call.value.get() == [])
    }

    @Test("close() fails pending calls with CANCELLED, is idempotent, and later calls fail too")
    func closeCancelsPending() async throws {
        let server = try FakeServer()
        let client = try LarderClient(server: server.address)
        var iterator = server.requests.makeAsyncIterator()
        let call = Task { await outcome { () async throws(RPCError) in try await client.callRaw(path: "/a/b", payload: []) } }
        _ = try #require(await iterator.next())
        client.close()
        client.close()
        #expect(await call.value.failureCode == .cancelled)
        let later = await outcome { () async throws(RPCError) in try await client.callRaw(path: "/a/b", payload: []) }
        #expect(later.failureCode == .cancelled)
        #expect(client.pendingCallCount == 0)
    }

    @Test("cancelling the waiting task fails the call with CANCELLED")
    func taskCancellation() async throws {
        let server = try FakeServer()
        let client = try LarderClient(server: server.address)
        defer { client.close() }
        var iterator = server.requests.makeAsyncIterator()
        let call = Task { await outcome { () async throws(RPCError) in try await client.callRaw(path: "/a/b", payload: []) } }
        _ = try #require(await iterator.next())
        call.cancel()
        #expect(await call.value.failureCode == .cancelled)
        #expect(client.pendingCallCount == 0)
    }

    @Test("a port nobody listens on is UNAVAILABLE naming the address")
    func unreachable() throws {
        let closed = try ClosedPort()
        let port = closed.port
        #expect(throws: RPCError(.unavailable, "cannot connect to 127.0.0.1:\(port): Connection refused")) {
            _ = try LarderClient(server: ServerAddress(host: "127.0.0.1", port: port))
        }
    }

    @Test("a host that does not resolve is UNAVAILABLE")
    func unresolvable() {
        #expect {
            _ = try LarderClient(server: ServerAddress(host: "no-such-host.invalid", port: 7411))
        } throws: { error in
            let rpc = error as? RPCError
            return rpc?.code == .unavailable
                && rpc?.message.hasPrefix("cannot connect to no-such-host.invalid:7411: cannot resolve host") == true
        }
    }
}

extension Result where Failure == RPCError {
    var failure: RPCError? {
        if case .failure(let error) = self { return error }
        return nil
    }

    var failureCode: StatusCode? { failure?.code }
}

@Suite("LarderClient with a peer that is not a Larder server")
struct ForeignPeerTests {
    /// What a call gets when the peer answers it with `bytes`.
    func failure(answering bytes: [UInt8]) async throws -> RPCError {
        let server = try FakeServer()
        let client = try LarderClient(server: server.address)
        defer { client.close() }
        var iterator = server.requests.makeAsyncIterator()
        let call = Task { await outcome { () async throws(RPCError) in try await client.callRaw(path: "/a/b", payload: []) } }
        _ = try #require(await iterator.next())
        server.sendRaw(bytes)
        return try #require(await call.value.failure)
    }

    @Test("an HTTP reply is UNAVAILABLE (no Larder server there) that says what the peer sent")
    func httpPeer() async throws {
        let error = try await failure(answering: Array("HTTP/1.1 400 Bad Request\r\n\r\n".utf8))
        #expect(error.code == .unavailable)
        #expect(error.message.hasSuffix("(it starts with \"HTTP\"; is it a Larder server?)"))
    }

    @Test("a TLS alert is UNAVAILABLE and says so")
    func tlsPeer() async throws {
        let error = try await failure(answering: [0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46])
        #expect(error.code == .unavailable)
        #expect(error.message.hasSuffix("(it starts like a TLS record; does the server want TLS?)"))
    }

    @Test("a Larder frame above the limit stays RESOURCE_EXHAUSTED")
    func oversizeFrame() async throws {
        let error = try await failure(answering: [0x00, 0x50, 0x00, 0x00, 0x0A])  // 5 MiB > 4 MiB
        #expect(error.code == .resourceExhausted)
        #expect(error.message.hasSuffix("sent a reply frame of 5242880 bytes, above the client's limit of 4194304 bytes"))
    }
}

@Suite("LarderClient timeouts on a silent peer")
struct SilentPeerTests {
    static let silenceHint = " (nothing has come from it on this connection: a slow or stuck server, or not a Larder server "
        + "on that port?)"

    /// A peer that never sends a byte (an HTTP server waiting for a request it will never get)
    /// times out like a stuck server; the error says nothing came back at all (audit 27 L2).
    @Test func aTimeoutOnAConnectionThatNeverHeardFromItsPeerSaysSo() async throws {
        let server = try FakeServer()
        let client = try LarderClient(server: server.address)
        defer { client.close() }
        let error = try #require(await outcome { () async throws(RPCError) in
            try await client.callRaw(path: "/a/b", payload: [], timeout: .milliseconds(200))
        }.failure)
        #expect(error.code == .deadlineExceeded)
        #expect(error.message == "call to /a/b timed out after 200 ms waiting for \(server.address)" + Self.silenceHint)
    }

    /// Once the server has answered, a timeout is a slow call, with no such hint. The first call
    /// has no deadline, so a busy machine cannot make it time out instead.
    @Test func aTimeoutAfterAReplyHasNoHint() async throws {
        let server = try FakeServer()
        let client = try LarderClient(server: server.address)
        defer { client.close() }
        var iterator = server.requests.makeAsyncIterator()
        let first = Task { await outcome { () async throws(RPCError) in try await client.callRaw(path: "/a/b", payload: []) } }
        let request = try #require(await iterator.next())
        server.reply(ResponseEnvelope(callID: request.callID, payload: []))
        _ = try await first.value.get()
        let error = try #require(await outcome { () async throws(RPCError) in
            try await client.callRaw(path: "/a/c", payload: [], timeout: .milliseconds(200))
        }.failure)
        #expect(error.code == .deadlineExceeded)
        #expect(error.message == "call to /a/c timed out after 200 ms waiting for \(server.address)")
    }
}

@Suite("LarderClient against a server that stops reading")
struct StalledServerTests {
    /// A server that stops reading must not hold the callers' threads (the cooperative pool's)
    /// past their deadlines (review 31 H1). A call whose frame fills the socket waits without
    /// blocking; calls queued behind it time out, and their frames, none of which was written,
    /// never reach the server; the big frame is finished once the server reads again.
    @Test(.timeLimit(.minutes(2)))
    func callsBehindAFullSocketTimeOutAndAreNeverSent() async throws {
        let server = try FakeServer(readingPaused: true)
        let client = try LarderClient(server: server.address, options: ClientOptions(maxFrameBytes: 64 << 20))
        defer { client.close() }
        // Far more than the kernel buffers of both ends hold while the server reads nothing.
        let big = [UInt8](repeating: 7, count: 32 << 20)
        let bigCall = Task {
            await outcome { () async throws(RPCError) in try await client.callRaw(path: "/a/big", payload: big) }
        }
        while client.pendingCallCount < 1 { try await Task.sleep(for: .milliseconds(5)) }
        let codes = await withTaskGroup(of: StatusCode?.self) { group -> [StatusCode?] in
            for index in 0..<4 {
                group.addTask {
                    let result = await outcome { () async throws(RPCError) in
                        try await client.callRaw(path: "/a/small", payload: [UInt8(index)], timeout: .milliseconds(100))
                    }
                    return result.failure?.code
                }
            }
            var codes: [StatusCode?] = []
            for await code in group { codes.append(code) }
            return codes
        }
        #expect(codes == Array(repeating: StatusCode.deadlineExceeded, count: 4))
        #expect(client.pendingCallCount == 1)

        server.resumeReading()
        var iterator = server.requests.makeAsyncIterator()
        // A small call may have been written before the big one began (its thread ran first);
        // none queued behind the big one reaches the server.
        var before: [RequestEnvelope] = []
        var bigRequest: RequestEnvelope?
        while bigRequest == nil, let request = await iterator.next() {
            if request.method == "/a/big" { bigRequest = request } else { before.append(request) }
        }
        let first = try #require(bigRequest)
        #expect(first.payload == big)
        #expect(before.allSatisfy { $0.method == "/a/small" } && before.count < 4, "\(before.map(\.method))")
        server.reply(ResponseEnvelope(callID: first.callID, payload: [1, 2, 3]))
        #expect(try await bigCall.value.get() == [1, 2, 3])
        // The next request the server reads is a new call's: the expired ones behind the big
        // frame were dropped.
        let later = Task {
            await outcome { () async throws(RPCError) in try await client.callRaw(path: "/a/later", payload: [9]) }
        }
        let second = try #require(await iterator.next())
        #expect(second.method == "/a/later")
        server.reply(ResponseEnvelope(callID: second.callID, payload: [4]))
        #expect(try await later.value.get() == [4])
    }

    /// Calls with no deadline to a server that reads nothing stay pending without holding a
    /// thread, and `close()` ends them all with CANCELLED.
    /// Each call's error says whether its request was sent: the big one partly written is (the
    /// server may apply it), the ones queued behind it are not (safe to send again).
    @Test(.timeLimit(.minutes(2)))
    func closeEndsCallsWaitingBehindAFullSocket() async throws {
        let server = try FakeServer(readingPaused: true)
        let client = try LarderClient(server: server.address, options: ClientOptions(maxFrameBytes: 64 << 20))
        let big = [UInt8](repeating: 7, count: 32 << 20)
        func call(_ index: Int) -> Task<Result<[UInt8], RPCError>, Never> {
            Task {
                await outcome { () async throws(RPCError) in
                    try await client.callRaw(path: "/a/\(index)", payload: index == 0 ? big : [1])
                }
            }
        }
        let first = call(0)
        while server.unreadBytes == 0 { try await Task.sleep(for: .milliseconds(5)) }  // its writing began
        let behind = (1..<4).map(call)
        while client.pendingCallCount < 4 { try await Task.sleep(for: .milliseconds(5)) }
        client.close()
        let sent = await first.value.failure
        #expect(sent?.code == .cancelled && sent?.cause as? RequestDelivery == .sent, "\(String(describing: sent))")
        #expect(sent?.message.hasSuffix("(the request was sent: the server may have applied it)") == true)
        for call in behind {
            let notSent = await call.value.failure
            #expect(notSent?.code == .cancelled && notSent?.cause as? RequestDelivery == .notSent, "\(String(describing: notSent))")
            #expect(notSent?.message.hasSuffix("(the request was not sent)") == true)
        }
    }
}

@Suite("LarderClient waiting for a reconnect")
struct ReconnectWaitTests {
    /// Threads of this process named `larder-connect`: connect attempts under way.
    static func connectAttempts() -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .hasPrefix("larder-connect") == true
        }.count
    }

    /// A server whose listen backlog is full: a connect to it waits (the SYN is dropped).
    static func unreachableAfterClose() async throws -> (FakeServer, LarderClient, [Int32]) {
        let server = try FakeServer()
        let client = try LarderClient(server: server.address, options: ClientOptions(connectTimeout: .seconds(120)))
        // One call answered: the server has accepted the connection it then closes.
        let first = Task { await outcome { () async throws(RPCError) in try await client.callRaw(path: "/a/a", payload: []) } }
        var iterator = server.requests.makeAsyncIterator()
        let request = try #require(await iterator.next())
        server.reply(ResponseEnvelope(callID: request.callID, payload: []))
        _ = try await first.value.get()
        server.closeConnection()  // stops serving: the listener takes connections and never accepts
        while client.isConnected { try await Task.sleep(for: .milliseconds(10)) }
        var fillers: [Int32] = []
        for _ in 0..<16 {  // more than the backlog of 8 holds
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = server.address.port.bigEndian
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            fillers.append(fd)
        }
        return (server, client, fillers)
    }

    /// Cancelling the task, or closing the client, ends a call that waits for a connect attempt
    /// at once, CANCELLED (review 32 M2: it waited for the attempt, up to its timeout).
    @Test(.timeLimit(.minutes(2)))
    func aCallWaitingForAConnectEndsOnCancelAndOnClose() async throws {
        let (server, client, fillers) = try await Self.unreachableAfterClose()
        defer { for fd in fillers { close(fd) } }
        defer { _ = server }
        let before = Self.connectAttempts()
        let cancelled = Task { await outcome { () async throws(RPCError) in try await client.callRaw(path: "/a/b", payload: []) } }
        while Self.connectAttempts() == before { try await Task.sleep(for: .milliseconds(10)) }
        cancelled.cancel()
        let first = await cancelled.value.failure
        #expect(first?.code == .cancelled && first?.message.contains("cancelled while connecting") == true,
                "\(String(describing: first))")
        // The attempt is still under way: the next call waits for it too, until the client closes.
        let waiting = Task { await outcome { () async throws(RPCError) in try await client.callRaw(path: "/a/c", payload: []) } }
        try await Task.sleep(for: .milliseconds(50))
        client.close()
        let second = await waiting.value.failure
        #expect(second?.code == .cancelled && second?.message.contains("closed") == true, "\(String(describing: second))")
    }
}
