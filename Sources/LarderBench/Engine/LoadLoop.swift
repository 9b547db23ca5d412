import CLarderProto
import CProtobufC
import LarderHTTP2
import LarderSystem
import LarderTLS
import LarderWire
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One load thread: an event loop (epoll on Linux, poll elsewhere) over the connections it owns.
///
/// Each turn it reads everything available on ready connections, decodes
/// every complete reply (one protobuf-c unpack each), records latencies,
/// encodes the next calls straight into each connection's output buffer and
/// sends them with one write per connection. Handed to its thread once.
final class LoadLoop: @unchecked Sendable {
    // Sendable because it is handed to its thread once and touched only there afterwards;
    // other threads see only `progress` (atomics) and the result it returns when its thread ends.
    private let index: Int
    private let connections: [BenchConnection]
    private let control: RunControl
    private let progress: LoopProgress
    private let picker: CallPicker
    private var random: SplitMix64
    private let templates: RequestTemplates
    /// This loop's copies of the template envelopes (only `call_id` changes).
    private let envelopes: UnsafeMutableBufferPointer<Larder__Rpc__V1__RequestEnvelope>
    private var schedule: RateSchedule?
    private let serverPID: Int32?
    private let showProgress: ProgressLine?

    private var latency = LatencyHistogram()
    private var uncorrectedLatency = LatencyHistogram()
    /// Per workload of a mix (empty for a single workload).
    private var groupStats: [WorkloadStats]
    private var codeCounts = [Int](repeating: 0, count: 17)
    private var otherCodes: [Int32: Int] = [:]
    private var firstMessages: [Int32: String] = [:]
    private var lostCalls = 0
    private var connectionFailures: [String] = []
    private var totalCalls = 0
    /// Calls with no reply yet when the load stopped.
    private var unansweredCalls = 0
    /// Open loop: scheduled calls never sent (see `countUnsentCalls`).
    private var unsentCalls = 0
    /// The loop stopped because every connection it owns was closed (which stops the whole run).
    private var connectionsClosed = false
    /// Open loop: at the last look, calls were due and every open connection's slots were taken.
    private var slotsRanOut = false
    /// While the replies due after a run by duration are read: they are measured.
    private var measuringLate = false
    private var totalErrors = 0
    private var stopping = false
    private var startSample: CPUSample?
    private var endSample: CPUSample?
    private let waiter: SocketWaiter
    private var roundRobin = 0
    /// Measured calls over time (charts), and per step of a load schedule.
    private var timeline: TimeSeries
    private var steps: TimeSeries?
    /// Why the run stopped on this loop's side (a `--data` rendering that does not fit).
    private var templateFailure: String?
    /// Per group: whether its replies carry the id of a record it created (the create workload).
    private let capturesIDs: [Bool]
    /// Whether the loop waits for the replies still due when the load ends.
    private let drainsAtEnd: Bool
    /// Ids of the meal records create calls made (warm-up included), for deleting them afterwards.
    private var createdIDs: [String] = []
    /// Create replies whose id could not be read (then the records are found by name).
    private var uncapturedCreates = 0

    private static let maxFrameSize = Frame.defaultMaxSize
    private static let readChunk = 64 * 1024

    init(index: Int, loopCount: Int, connections: [BenchConnection], control: RunControl, progress: LoopProgress,
         templates: RequestTemplates, mix: WorkloadMix, ratePerSecond: Double?, loadSchedule: LoadSchedule?,
         share: Double, seed: UInt64, serverPID: Int32?, progressLine: ProgressLine?, timelineSeconds: Double) {
        self.index = index
        self.connections = connections
        self.control = control
        self.progress = progress
        self.templates = templates
        picker = CallPicker(mix: mix, ranges: templates.ranges)
        groupStats = picker.workloads.count > 1 ? picker.workloads.map { _ in WorkloadStats() } : []
        random = SplitMix64(seed: seed)
        envelopes = .allocate(capacity: templates.envelopes.count)
        _ = envelopes.initialize(from: templates.envelopes)
        // Loops interleave: loop i of n starts i/n of its own interval in. (It started i whole
        // intervals in, so the first n(n-1)/2 calls were never scheduled and the loops fired in phase.)
        let phase = Double(index) / Double(loopCount)
        if let loadSchedule {
            schedule = RateSchedule(schedule: loadSchedule, share: share, start: control.start,
                                    origin: control.measureStart, phase: phase)
        } else if let ratePerSecond {
            schedule = RateSchedule(ratePerSecond: ratePerSecond, start: control.start, phase: phase)
        }
        capturesIDs = picker.workloads.map { $0 == .create }
        // Calls that may create something are answered before the data is deleted, so none lands after.
        drainsAtEnd = capturesIDs.contains(true) || (picker.workloads.contains(.call) && templates.callCreates)
        timeline = TimeSeries(widthSeconds: timelineSeconds)
        steps = loadSchedule.map { TimeSeries(widthSeconds: $0.stepSeconds) }
        self.serverPID = serverPID
        showProgress = progressLine
        for (position, connection) in connections.enumerated() { connection.position = position }
        waiter = SocketWaiter(fds: connections.map(\.fd))
    }

    deinit {
        envelopes.deallocate()
    }

    /// Runs until the run's end, then closes the connections.
    func run() -> LoopResult {
        // Open loop: a call is due at its time, and the kernel's default timer slack (50 µs) made
        // every wait for one end up to that much late, which the corrected latency then counted.
        if schedule != nil { SystemThread.setCurrentTimerSlack(nanoseconds: 1) }
        var now = MonotonicClock.nanoseconds()
        if schedule == nil {
            for connection in connections {
                for slot in 0..<connection.depth { issue(on: connection, slot: slot, intended: now, now: now) }
            }
            for connection in connections { flush(connection) }
        }
        while true {
            now = MonotonicClock.nanoseconds()
            if now >= control.end || control.stop.load(ordering: .relaxed) || stopping || control.isCancelled { break }
            if index == 0 && startSample == nil && now >= control.measureStart {
                startSample = CPUSample.take(serverPID: serverPID)
            }
            if schedule != nil {
                issueScheduled(now: now)
                flushPendingOutput()
            }
            if !waitForEvents(now: now) { break }
            serveReadyConnections()
            flushPendingOutput()
            progress.calls.store(totalCalls, ordering: .relaxed)
            progress.errors.store(totalErrors, ordering: .relaxed)
            showProgress?.tick(now: now)
            if !connections.contains(where: \.isOpen) {
                control.stop.store(true, ordering: .relaxed)
                connectionsClosed = true
                break
            }
            // Every call of a run by count is sent and this loop's are answered (some were lost,
            // or the other loops are still waiting for theirs): nothing is left for it to do.
            if control.sentAllRequests && !connections.contains(where: { $0.inFlight > 0 }) { break }
        }
        let endedAt = MonotonicClock.nanoseconds()
        if index == 0 {  // the CPU window is the run's, whatever the replies still due take
            if startSample == nil { startSample = CPUSample.take(serverPID: serverPID) }
            endSample = CPUSample.take(serverPID: serverPID)
        }
        countUnsentCalls(until: min(endedAt, control.measureEnd))
        // A run by duration: the calls still in flight at its end were sent inside it. Their
        // replies are awaited, until --time-limit, and their latencies measured, so a server that
        // stalled near the end shows, and what never came back (counted after) is reported.
        let byDuration = control.requests == nil && !control.isCancelled
        if byDuration { drainInFlight(measuring: true, until: max(control.hardEnd, endedAt)) }
        unansweredCalls = connections.reduce(0) { $0 + ($1.isOpen ? $1.inFlight : 0) }
        if !byDuration && drainsAtEnd { drainInFlight(measuring: false, until: endedAt + Self.createsGraceNanoseconds) }
        if drainsAtEnd { countUncapturedCreates() }
        for connection in connections { connection.closeSocket() }
        return makeResult(endedAt: endedAt)
    }

    /// Open loop: the calls the schedule meant to start in the measured window before `until`
    /// that were never sent because every slot was waiting (`slotsRanOut`: not merely due
    /// after the loop's last turn). At most 100 million are counted.
    ///
    /// Each goes into the corrected latencies with what it had waited by `until`, a lower bound
    /// of what it would have taken: left out, a server that stalled for 40 % of the window
    /// showed a p90 of 1.9 ms, the calls it kept from being sent counted nowhere.
    private func countUnsentCalls(until: UInt64) {
        // A run by count sends exactly --requests: calls the schedule has beyond them are not owed.
        guard var pending = schedule, slotsRanOut, !control.isCancelled, control.requests == nil else { return }
        var looked = 0
        while pending.nextTime < until && looked < 100_000_000 {
            if pending.nextTime >= control.measureStart {
                unsentCalls += 1
                latency.record(RateSchedule.correctedLatency(intended: pending.nextTime, completed: until))
            }
            pending.advance()
            looked += 1
        }
    }

    /// How long after a run by count the replies of its creates are waited for (their ids).
    static let createsGraceNanoseconds: UInt64 = 5_000_000_000

    /// After the load: reads the replies still due (until `deadline`, none followed by another
    /// call), so every create call's id is known; with `measuring`, the calls sent inside the
    /// measured window are measured as they come back.
    private func drainInFlight(measuring: Bool, until deadline: UInt64) {
        stopping = true
        measuringLate = measuring
        defer { measuringLate = false }
        while connections.contains(where: { $0.isOpen && $0.inFlight > 0 }) {
            // Output still due goes out too: over HTTP/2, calls beyond the server's stream limit
            // wait in the session for others to end.
            flushPendingOutput()
            let now = MonotonicClock.nanoseconds()
            guard now < deadline, waiter.wait(nanoseconds: min(deadline - now, 50_000_000)) else { break }
            serveReadyConnections()
        }
    }

    /// Reads the replies of the connections `waiter` found readable, and writes to the writable.
    private func serveReadyConnections() {
        for ready in waiter.ready {
            let connection = connections[ready.index]
            if ready.readable { readReplies(connection) }
            if ready.writable && connection.isOpen { flush(connection) }
        }
    }

    /// Writes what each open connection has to send, unless it already waits to be writable.
    private func flushPendingOutput() {
        for connection in connections where connection.hasOutput && !connection.wantsWritable && connection.isOpen {
            flush(connection)
        }
    }

    /// Creates still unanswered after the drain are counted as uncaptured (their ids are unknown).
    private func countUncapturedCreates() {
        for connection in connections where connection.isOpen {
            for slot in 0..<connection.depth where connection.callIDs[slot] != 0 && capturesIDs[Int(connection.groups[slot])] {
                uncapturedCreates += 1
            }
        }
    }

    // MARK: - Waiting

    /// Waits until a connection is ready or something is due; false when waiting fails.
    private func waitForEvents(now: UInt64) -> Bool {
        var wake = min(control.end, now + 50_000_000)
        if index == 0 && startSample == nil { wake = min(wake, max(control.measureStart, now)) }
        if let schedule, connections.contains(where: { $0.isOpen && !$0.freeSlots.isEmpty }) {
            wake = min(wake, max(schedule.nextTime, now))
        }
        if waiter.wait(nanoseconds: wake > now ? wake - now : 0) { return true }
        connectionFailures.append("waiting for sockets failed: \(TCPSocket.errnoText(errno))")
        return false
    }

    // MARK: - Sending

    /// Encodes one call on `slot` into the connection's output buffer.
    private func issue(on connection: BenchConnection, slot: Int, intended: UInt64, now: UInt64) {
        // A run by count sends its calls and no more: none beyond them is left in flight at the end.
        if let requests = control.requests, now >= control.measureStart,
           control.sentWhileMeasuring.wrappingAdd(1, ordering: .relaxed).newValue > requests {
            connection.freeSlots.append(slot)
            return
        }
        let (template, group) = picker.pick(&random)
        var payload: [UInt8]?
        if let generator = templates.generators[template] {
            let number = control.requestNumber.wrappingAdd(1, ordering: .relaxed).oldValue
            do throws(RPCError) {
                payload = try generator.encode(number: number, random: &random)
            } catch {
                templateFailure = error.message
                stopping = true
                control.stop.store(true, ordering: .relaxed)
                connection.freeSlots.append(slot)
                return
            }
        }
        let callID = connection.makeCallID(slot: slot)
        if let session = connection.http2 {
            guard session.goaways.isEmpty else {
                // The server is going away: no new calls here; the connection ends when its calls have.
                connection.freeSlots.append(slot)
                return
            }
            let body = payload.map { GRPCLoadClientSession.body(message: $0) } ?? templates.grpcBodies[template]
            guard session.startCall(templates.grpcHeaders[template], body: body, tag: slot,
                                    captureReply: capturesIDs[group]) else {
                connection.freeSlots.append(slot)
                fail(connection, code: .unavailable,
                     message: "HTTP/2: no new stream allowed (the server sent GOAWAY, or stream ids ran out)")
                return
            }
        } else {
            pack(template: template, callID: callID, payload: payload, into: connection)
        }
        connection.callIDs[slot] = callID
        connection.intendedTimes[slot] = intended
        connection.sentTimes[slot] = now
        connection.groups[slot] = UInt8(truncatingIfNeeded: group)
        connection.inFlight += 1
    }

    /// Encodes template `template`'s envelope with `callID` (and `payload`, for a generator's template) as one frame.
    private func pack(template: Int, callID: UInt64, payload: [UInt8]?, into connection: BenchConnection) {
        let envelope = envelopes.baseAddress! + template
        envelope.pointee.call_id = callID
        if let payload {
            payload.withUnsafeBufferPointer { bytes in
                envelope.pointee.payload = ProtobufCBinaryData(
                    len: bytes.count, data: bytes.isEmpty ? nil : UnsafeMutablePointer(mutating: bytes.baseAddress))
                pack(envelope, into: connection)
                envelope.pointee.payload = ProtobufCBinaryData(len: 0, data: nil)
            }
        } else {
            pack(envelope, into: connection)
        }
    }

    /// Appends `envelope` as one frame to the connection's output.
    private func pack(_ envelope: UnsafeMutablePointer<Larder__Rpc__V1__RequestEnvelope>, into connection: BenchConnection) {
        let message = UnsafeRawPointer(envelope).assumingMemoryBound(to: ProtobufCMessage.self)
        let size = protobuf_c_message_get_packed_size(message)
        connection.output.reserve(Frame.headerSize + size)
        let out = (connection.output.base + connection.output.end).assumingMemoryBound(to: UInt8.self)
        let length = UInt32(truncatingIfNeeded: size)
        out[0] = UInt8(truncatingIfNeeded: length >> 24)
        out[1] = UInt8(truncatingIfNeeded: length >> 16)
        out[2] = UInt8(truncatingIfNeeded: length >> 8)
        out[3] = UInt8(truncatingIfNeeded: length)
        let packed = protobuf_c_message_pack(message, out + Frame.headerSize)
        connection.output.end += Frame.headerSize + packed
    }

    /// Open loop: sends every call whose intended time has come, while slots are free.
    private func issueScheduled(now: UInt64) {
        guard var schedule else { return }
        defer { self.schedule = schedule }
        let count = connections.count
        while schedule.nextTime <= now {
            var chosen: BenchConnection?
            for step in 0..<count {
                let candidate = connections[(roundRobin + step) % count]
                if candidate.isOpen && !candidate.freeSlots.isEmpty {
                    chosen = candidate
                    roundRobin = (roundRobin + step + 1) % count
                    break
                }
            }
            guard let connection = chosen, let slot = connection.freeSlots.popLast(), !stopping else {
                // Due, and no open connection has a free slot: the server is behind the rate.
                slotsRanOut = chosen == nil && connections.contains(where: \.isOpen)
                return
            }
            slotsRanOut = false
            issue(on: connection, slot: slot, intended: schedule.nextTime, now: now)
            schedule.advance()
        }
    }

    /// Writes as much output as the socket takes.
    private func flush(_ connection: BenchConnection) {
        defer { failIfSessionEnded(connection) }
        if connection.http2 != nil && !collectOutput(connection) { return }
        if let tls = connection.tls {
            flushTLS(connection, tls)
            return
        }
        while !connection.output.isEmpty {
            let pending = connection.output.pendingCount
            switch TCPSocket.write(connection.fd, from: connection.output.base + connection.output.start, count: pending) {
            case .bytes(let written):
                connection.output.consume(written)
                if written < pending {
                    setWantsWritable(connection, true)
                    return
                }
            case .wouldBlock:
                setWantsWritable(connection, true)
                return
            case .closed:
                fail(connection, code: .unavailable, message: "server closed the connection")
                return
            case .failed(let code):
                fail(connection, code: .unavailable, message: "write failed: \(TCPSocket.errnoText(code))")
                return
            }
        }
        setWantsWritable(connection, false)
    }

    /// `--tls`: encrypts the plaintext output, then writes as much ciphertext as the socket takes.
    private func flushTLS(_ connection: BenchConnection, _ tls: BenchTLSLink) {
        if !connection.output.isEmpty {
            do throws(TLSError) {
                try tls.seal(UnsafeRawBufferPointer(start: connection.output.base + connection.output.start,
                                                    count: connection.output.pendingCount))
            } catch {
                fail(connection, code: error.code, message: "TLS: \(error.message)")
                return
            }
            connection.output.consume(connection.output.pendingCount)
        }
        switch tls.flush(connection.fd) {
        case .done: setWantsWritable(connection, false)
        case .blocked: setWantsWritable(connection, true)
        case .failed(let error): fail(connection, code: error.code, message: error.message)
        }
    }

    /// Fails a connection whose HTTP/2 session ended by itself: nghttp2 answered a frame it could
    /// not take (an oversized one, say) with GOAWAY and wants neither to read nor write. Before,
    /// the run waited out its time limit and blamed a stuck server.
    private func failIfSessionEnded(_ connection: BenchConnection) {
        guard connection.isOpen, let session = connection.http2, session.isFinished else { return }
        if let goaway = session.goaways.last {
            fail(connection, code: .unavailable, message: "the server sent \(goaway.summary)")
        } else {
            let reason = session.lastLibraryError ?? "the HTTP/2 session ended"
            fail(connection, code: .internal, message: "the server broke HTTP/2: \(reason)")
        }
    }

    /// Appends the frames the HTTP/2 session has ready to the connection's output; false when it failed.
    private func collectOutput(_ connection: BenchConnection) -> Bool {
        guard let session = connection.http2 else { return true }
        do throws(GRPCSessionError) {
            try session.writeOutput { chunk in
                guard let source = chunk.baseAddress else { return }
                connection.output.reserve(chunk.count)
                (connection.output.base + connection.output.end).copyMemory(from: source, byteCount: chunk.count)
                connection.output.end += chunk.count
            }
        } catch {
            fail(connection, code: .internal, message: error.description)
            return false
        }
        return true
    }

    private func setWantsWritable(_ connection: BenchConnection, _ wanted: Bool) {
        connection.wantsWritable = wanted
        waiter.setWantsWritable(connection.position, wanted)
    }

    // MARK: - Receiving

    /// Reads everything available and handles every complete reply.
    private func readReplies(_ connection: BenchConnection) {
        while connection.isOpen {
            let target: UnsafeMutableRawPointer
            let space: Int
            if let tls = connection.tls {
                (target, space) = (tls.readBuffer, BenchTLSLink.readCapacity)
            } else {
                connection.input.reserve(Self.readChunk)
                (target, space) = (connection.input.base + connection.input.end, connection.input.freeCount)
            }
            switch TCPSocket.read(connection.fd, into: target, count: space) {
            case .bytes(let count):
                if let tls = connection.tls {
                    do throws(TLSError) {
                        try tls.open(count: count)
                    } catch {
                        flush(connection)  // the alert that tells the server why
                        fail(connection, code: error.code, message: "TLS: \(error.message)")
                        return
                    }
                    connection.appendInput(tls.plaintext)
                } else {
                    connection.input.end += count
                }
                if let session = connection.http2 {
                    handleHTTP2(connection, session)
                } else {
                    handleFrames(connection, now: MonotonicClock.nanoseconds())
                }
                if connection.isOpen, connection.tls?.peerClosed == true {
                    fail(connection, code: .unavailable, message: "server closed the connection (TLS close_notify)")
                    return
                }
                if count < space { return }
            case .wouldBlock:
                return
            case .closed:
                fail(connection, code: .unavailable, message: "server closed the connection")
                return
            case .failed(let code):
                fail(connection, code: .unavailable, message: "read failed: \(TCPSocket.errnoText(code))")
                return
            }
        }
    }

    private func handleFrames(_ connection: BenchConnection, now: UInt64) {
        while connection.isOpen && connection.input.pendingCount >= Frame.headerSize {
            let head = (connection.input.base + connection.input.start).assumingMemoryBound(to: UInt8.self)
            let length = Int(UInt32(head[0]) << 24 | UInt32(head[1]) << 16 | UInt32(head[2]) << 8 | UInt32(head[3]))
            guard length <= Self.maxFrameSize else {
                fail(connection, code: .internal, message: "server sent a frame of \(length) bytes (limit \(Self.maxFrameSize))"
                     + Self.foreignProtocolHint(head))
                return
            }
            guard connection.input.pendingCount >= Frame.headerSize + length else {
                connection.input.reserve(Frame.headerSize + length - connection.input.pendingCount)
                return
            }
            handleReply(connection, body: head + Frame.headerSize, length: length, now: now)
            connection.input.consume(Frame.headerSize + length)
        }
    }

    /// Feeds what was read to the HTTP/2 session and handles every call it ended.
    private func handleHTTP2(_ connection: BenchConnection, _ session: GRPCLoadClientSession) {
        let bytes = UnsafeRawBufferPointer(start: connection.input.base + connection.input.start,
                                           count: connection.input.pendingCount)
        connection.input.consume(connection.input.pendingCount)
        do throws(GRPCSessionError) {
            try session.receive(bytes)
        } catch {
            fail(connection, code: .internal, message: "the server broke HTTP/2: \(error.message)")
            return
        }
        let now = MonotonicClock.nanoseconds()
        session.takeCompletions { completion in
            guard connection.isOpen else { return }
            let slot = completion.tag
            guard slot >= 0, slot < connection.depth, connection.callIDs[slot] != 0 else {
                fail(connection, code: .internal, message: "HTTP/2: a stream ended for slot \(slot), which is not in flight")
                return
            }
            let code = completion.status.rawValue
            if code != 0 && firstMessages[code] == nil { firstMessages[code] = completion.message ?? "" }
            if code == 0 && capturesIDs[Int(connection.groups[slot])] {
                completion.reply.withUnsafeBufferPointer { captureID(data: $0.baseAddress, count: $0.count) }
            }
            complete(connection, slot: slot, code: code, now: now)
        }
        guard connection.isOpen else { return }
        if let goaway = session.goaways.last, goaway.code != .noError || connection.inFlight == 0 || session.isFinished {
            let reason = session.lastLibraryError.map { ": \($0)" } ?? ""
            fail(connection, code: .unavailable, message: "the server sent \(goaway.summary)\(reason)")
        }
    }

    /// What an impossible frame length says of the peer when its 4 bytes are another protocol's
    /// (`ForeignFramePrefix`): text (HTTP/1's "HTTP") or a TLS record header; empty otherwise.
    static func foreignProtocolHint(_ head: UnsafePointer<UInt8>) -> String {
        switch ForeignFramePrefix(UnsafeBufferPointer(start: head, count: 4)) {
        case .text(let text): " (it starts with \"\(text)\": not a Larder server on that port?)"
        case .tlsRecord: " (it starts like a TLS record: does the server want --tls?)"
        case nil: ""
        }
    }

    private func handleReply(_ connection: BenchConnection, body: UnsafePointer<UInt8>, length: Int, now: UInt64) {
        let descriptor = larder__rpc__v1__response_envelope__descriptor_ptr()
        guard let message = protobuf_c_message_unpack(descriptor, nil, length, body) else {
            fail(connection, code: .internal, message: "server sent a reply that is not a ResponseEnvelope"
                 + " (not a Larder server on that port? A server that speaks only gRPC over HTTP/2 needs --protocol grpc)")
            return
        }
        defer { protobuf_c_message_free_unpacked(message, nil) }
        let envelope = UnsafeRawPointer(message).assumingMemoryBound(to: Larder__Rpc__V1__ResponseEnvelope.self)
        let callID = envelope.pointee.call_id
        let code = envelope.pointee.status_code
        if code != 0 && firstMessages[code] == nil {
            firstMessages[code] = envelope.pointee.status_message.map { String(cString: $0) } ?? ""
        }
        if callID == 0 {
            let text = envelope.pointee.status_message.map { String(cString: $0) } ?? ""
            // A connection error says why in a non-zero code; one that does not is still an error.
            fail(connection, code: code == 0 ? .unknown : StatusCode(rawValue: code),
                 message: "connection error from server: \(text.isEmpty ? "(no message)" : text)")
            return
        }
        guard let slot = connection.slot(for: callID) else {
            fail(connection, code: .internal, message: "server replied to call id \(callID), which is not in flight")
            return
        }
        if code == 0 && capturesIDs[Int(connection.groups[slot])] { captureID(envelope.pointee.payload) }
        complete(connection, slot: slot, code: code, now: now)
    }

    /// Keeps the id of a created record: field 1 (a 36-character UUID string) leads a MealRecord's encoding.
    private func captureID(_ payload: ProtobufCBinaryData) {
        captureID(data: payload.data, count: payload.len)
    }

    private func captureID(data: UnsafePointer<UInt8>?, count: Int) {
        guard count >= 38, let data, data[0] == 0x0A, data[1] == 36 else {
            uncapturedCreates += 1
            return
        }
        createdIDs.append(String(decoding: UnsafeBufferPointer(start: data + 2, count: 36), as: UTF8.self))
    }

    /// Records a finished call and, in a closed loop, sends the next one on its slot.
    private func complete(_ connection: BenchConnection, slot: Int, code: Int32, now: UInt64) {
        let intended = connection.intendedTimes[slot]
        let sent = connection.sentTimes[slot]
        connection.callIDs[slot] = 0
        connection.inFlight -= 1
        totalCalls += 1
        if code != 0 { totalErrors += 1 }
        let inWindow = now >= control.measureStart && now < control.measureEnd && !stopping
        // After a run by duration, a late reply to a call sent inside the window (see drainInFlight).
        let late = measuringLate && intended >= control.measureStart && intended < control.measureEnd
        if inWindow || late {
            var measure = true
            if let requests = control.requests {
                let count = control.measured.wrappingAdd(1, ordering: .relaxed).newValue
                if count >= requests {
                    measure = count == requests
                    if measure { control.lastCompletion.store(now, ordering: .relaxed) }
                    control.stop.store(true, ordering: .relaxed)
                    stopping = true
                }
            }
            if measure {
                let corrected = RateSchedule.correctedLatency(intended: intended, completed: now)
                latency.record(corrected)
                if !groupStats.isEmpty {
                    let group = Int(connection.groups[slot])
                    groupStats[group].latency.record(corrected)
                    if code != 0 { groupStats[group].errors += 1 }
                }
                if schedule != nil {
                    uncorrectedLatency.record(RateSchedule.uncorrectedLatency(sent: sent, completed: now))
                }
                // A late reply adds its latency; it counts as a call only when it failed (no error
                // hides), so the window's calls per second stay those completed inside it.
                if inWindow || code != 0 {
                    if code >= 0 && code < 17 { codeCounts[Int(code)] += 1 } else { otherCodes[code, default: 0] += 1 }
                }
                if inWindow {
                    let elapsed = now - control.measureStart
                    timeline.record(elapsed: elapsed, latency: corrected, failed: code != 0)
                    steps?.record(elapsed: elapsed, latency: corrected, failed: code != 0)
                }
            }
        }
        if schedule == nil && !stopping && now < control.end {
            issue(on: connection, slot: slot, intended: now, now: now)
        } else {
            connection.freeSlots.append(slot)
        }
    }

    /// Closes a broken connection and counts its calls in flight as lost.
    private func fail(_ connection: BenchConnection, code: StatusCode, message: String) {
        guard connection.isOpen else { return }
        lostCalls += connection.inFlight
        totalErrors += connection.inFlight
        for slot in 0..<connection.depth where connection.callIDs[slot] != 0 {
            if capturesIDs[Int(connection.groups[slot])] { uncapturedCreates += 1 }
            connection.callIDs[slot] = 0
            connection.freeSlots.append(slot)
        }
        connection.inFlight = 0
        connection.output.consume(connection.output.pendingCount)
        connection.wantsWritable = false
        waiter.remove(connection.position)
        connection.closeSocket()
        // The message may quote the server (a connection error's status message): escaped here
        // once, it is inert in every report and on stderr.
        connectionFailures.append(SafeText.escaped("\(code.name): \(message)"))
    }

    private func makeResult(endedAt: UInt64) -> LoopResult {
        var result = LoopResult()
        result.latency = latency
        result.uncorrectedLatency = uncorrectedLatency
        for (code, count) in codeCounts.enumerated() where count > 0 { result.callsByCode[Int32(code)] = count }
        for (code, count) in otherCodes { result.callsByCode[code, default: 0] += count }
        result.firstMessages = firstMessages
        for (group, stats) in groupStats.enumerated() { result.byWorkload[picker.workloads[group]] = stats }
        result.lostCalls = lostCalls
        result.connectionFailures = connectionFailures
        result.templateFailure = templateFailure
        result.createdIDs = createdIDs
        result.uncapturedCreates = uncapturedCreates
        result.timeline = timeline
        result.steps = steps
        result.totalCalls = totalCalls
        result.unansweredCalls = unansweredCalls
        result.unsentCalls = unsentCalls
        result.connectionsClosed = connectionsClosed
        for connection in connections {
            guard let limit = connection.http2?.serverStreamLimit.map(Int.init), limit < connection.depth else { continue }
            result.serverStreamLimit = min(result.serverStreamLimit ?? limit, limit)
            result.callsAboveStreamLimit += connection.depth - limit
        }
        result.endedAt = endedAt
        result.startSample = startSample
        result.endSample = endSample
        return result
    }
}
