import LarderHTTP2
import LarderSystem
import Synchronization
import LarderWire

/// Runs the load loops of one measurement: opens the connections, spreads the
/// calls in flight over them and the connections over threads, and merges
/// what every loop measured.
enum LoadEngine {
    /// Runs the load described by `options` with `templates`, blocking the calling thread.
    /// - Throws: UNAVAILABLE when a connection cannot be opened.
    static func run(_ options: BenchOptions, templates: RequestTemplates, seeded: [String], showProgress: Bool,
                    cancellation: BenchCancellation? = nil) throws(RPCError) -> BenchResult
    {
        let tls = try options.tls.map { tls throws(RPCError) in
            try BenchTLSContext(tls, server: options.server, transport: options.transport)
        }
        var connections = try openConnections(options, tls: tls)
        let threadCount = min(options.threads, connections.count)
        let control = RunControl(
            start: MonotonicClock.nanoseconds(), warmupSeconds: options.warmupSeconds,
            durationSeconds: options.requests == nil ? options.durationSeconds : nil,
            requests: options.requests, timeLimitSeconds: options.timeLimitSeconds, cancellation: cancellation)
        let progresses = (0..<threadCount).map { _ in LoopProgress() }
        let progressLine = showProgress
            ? ProgressLine(loops: progresses, start: control.start, measureStart: control.measureStart) : nil
        let loops = makeLoops(connections, options: options, templates: templates, control: control,
                              progresses: progresses, progressLine: progressLine)
        connections.removeAll()  // the loops own them from here on
        let merged = runLoops(loops, progressLine: progressLine)
        return makeResult(merged, options: options, control: control, seeded: seeded, tls: tls?.handshakes)
    }

    /// Opens `min(--connections, --concurrency)` connections (over TLS with `tls`) and spreads the calls
    /// in flight over them, the first ones taking one more when they do not divide evenly.
    /// - Throws: UNAVAILABLE when a connection cannot be opened.
    private static func openConnections(_ options: BenchOptions, tls: BenchTLSContext?) throws(RPCError)
        -> [BenchConnection]
    {
        let connectionCount = min(options.connections, options.concurrency)
        var connections: [BenchConnection] = []
        var awaitTickets = true
        for index in 0..<connectionCount {
            let depth = options.concurrency / connectionCount + (index < options.concurrency % connectionCount ? 1 : 0)
            let (fd, link, early) = try connect(options, tls: tls, awaitTicket: &awaitTickets,
                                                anotherFollows: index + 1 < connectionCount)
            let session = try grpcSession(options, fd: fd)
            let connection = BenchConnection(fd: fd, depth: depth, http2: session, tls: link)
            connection.appendInput(early)
            connections.append(connection)
        }
        return connections
    }

    /// Opens one non-blocking connection to `--server`, over TLS with `tls`: its socket, its TLS session and
    /// the plaintext already read. While `awaitTicket` holds and `anotherFollows`, waits for the session
    /// ticket, clearing `awaitTicket` when the server sends none.
    private static func connect(_ options: BenchOptions, tls: BenchTLSContext?, awaitTicket: inout Bool,
                                anotherFollows: Bool) throws(RPCError)
        -> (fd: Int32, link: BenchTLSLink?, early: [UInt8])
    {
        guard let tls else {
            let fd = try TCPSocket.connect(to: options.server, timeoutSeconds: options.connectTimeoutSeconds,
                                           nonBlocking: true)
            return (fd, nil, [])
        }
        let (fd, link, plaintext) = try tls.connect(timeoutSeconds: options.connectTimeoutSeconds, nonBlocking: true)
        var early = plaintext
        if awaitTicket && anotherFollows {
            // TLS 1.3 sends the session ticket after the handshake: waiting for it (a
            // round trip) lets the next connection resume; a server that sends none
            // costs one wait, then no connection waits.
            early += try link.awaitTicket(fd, address: options.server, milliseconds: 200)
            awaitTicket = link.hasTicket
            tls.keepTicket(from: link)
        }
        return (fd, link, early)
    }

    /// With `--protocol grpc`, the HTTP/2 session to run over the connection `fd`, else nil.
    /// - Throws: INTERNAL, after closing `fd`, when the session cannot be made.
    private static func grpcSession(_ options: BenchOptions, fd: Int32) throws(RPCError) -> GRPCLoadClientSession? {
        guard options.transport == .grpc else { return nil }
        do throws(GRPCSessionError) {
            return try GRPCLoadClientSession(options: GRPCLoadClientSession.Options())
        } catch {
            TCPSocket.close(fd)
            throw .internalError(error.message)
        }
    }

    /// One load loop per progress counter (one per thread), loop `i` owning every connection whose index is `i`
    /// modulo their number, with its share of the calls in flight and of `--rate`; loop 0 draws `progressLine`.
    private static func makeLoops(_ connections: [BenchConnection], options: BenchOptions, templates: RequestTemplates,
                                  control: RunControl, progresses: [LoopProgress], progressLine: ProgressLine?)
        -> [LoadLoop]
    {
        let threadCount = progresses.count
        let timelineSeconds = Self.timelineSeconds(options)
        var seedSource = SplitMix64(seed: UInt64(truncatingIfNeeded: control.start) ^ UInt64(getProcessID()))
        return (0..<threadCount).map { index in
            let owned = connections.indices.filter { $0 % threadCount == index }.map { connections[$0] }
            let depth = owned.reduce(0) { $0 + $1.depth }
            return LoadLoop(
                index: index, loopCount: threadCount, connections: owned, control: control, progress: progresses[index],
                templates: templates, mix: options.mix,
                ratePerSecond: options.rate.map { $0 * Double(depth) / Double(options.concurrency) },
                loadSchedule: options.schedule, share: Double(depth) / Double(options.concurrency),
                seed: seedSource.next(), serverPID: options.serverPID, progressLine: index == 0 ? progressLine : nil,
                timelineSeconds: timelineSeconds)
        }
    }

    /// The width of a timeline window. By count the length is unknown: fine windows (at most 2,000 up to
    /// the time limit), merged to ~100 after.
    private static func timelineSeconds(_ options: BenchOptions) -> Double {
        options.requests == nil ? TimeSeries.chartWidth(forSeconds: options.durationSeconds)
            : max(0.01, (options.timeLimitSeconds - options.warmupSeconds) / 2000)
    }

    /// Runs loop 0 on this thread and every other loop on a thread of its own, then ends the progress line.
    /// - Returns: what every loop measured, merged.
    private static func runLoops(_ loops: [LoadLoop], progressLine: ProgressLine?) -> LoopResult {
        let results = LockedValue<[LoopResult]>([])
        let threads = loops.dropFirst().enumerated().map { offset, loop in
            SystemThread(name: "larder-bench-\(offset + 1)", stackSize: 1 << 20) {
                let result = loop.run()
                results.withLock { $0.append(result) }
            }
        }
        var merged = loops[0].run()
        for thread in threads { thread.join() }
        progressLine?.finish()
        for result in results.withLock({ $0 }) { merged.merge(result) }
        return merged
    }

    private static func truncated(_ series: TimeSeries, _ seconds: Double) -> TimeSeries {
        var series = series
        series.truncate(toSeconds: seconds)
        return series
    }

    /// Why a run by count has fewer calls than it asked for, when its time limit ended it.
    private static func shortfall(_ merged: LoopResult, _ options: BenchOptions, _ control: RunControl) -> String? {
        guard let requests = options.requests, !control.isCancelled else { return nil }
        let measured = control.measured.load(ordering: .relaxed)
        guard measured < requests, merged.endedAt >= control.hardEnd else { return nil }
        return "--time-limit \(Format.seconds(options.timeLimitSeconds)) ended the run after \(Format.grouped(measured)) "
            + "of \(Format.grouped(requests)) calls; \(Format.grouped(merged.unansweredCalls)) had no reply yet "
            + "(a slow or stuck server? raise --time-limit to wait longer)"
    }

    /// Why a run by duration ends in error although calls were answered: some of those sent
    /// inside it had no reply by `--time-limit`.
    private static func stall(_ merged: LoopResult, _ options: BenchOptions, _ control: RunControl) -> String? {
        guard options.requests == nil, !control.isCancelled, !merged.callsByCode.isEmpty, merged.unansweredCalls > 0
        else { return nil }
        let grace = control.hardEnd > control.measureEnd ? Double(control.hardEnd - control.measureEnd) / 1e9 : 0
        return "\(Format.grouped(merged.unansweredCalls)) calls had no reply within \(Format.seconds(grace)) after the run "
            + "ended (a stalled or overloaded server?); they are not in the latencies (raise --time-limit to wait longer)"
    }

    /// Why a run by duration ended before its measured window did: a load thread's connections
    /// were all closed (a server that drained or restarted, or closed them). Its report covers the
    /// part that ran.
    private static func cutShort(_ merged: LoopResult, _ options: BenchOptions, _ control: RunControl) -> String? {
        guard options.requests == nil, !control.isCancelled, merged.connectionsClosed, merged.endedAt < control.measureEnd
        else { return nil }
        let ran = merged.endedAt > control.measureStart ? Double(merged.endedAt - control.measureStart) / 1e9 : 0
        let window = Double(control.measureEnd - control.measureStart) / 1e9
        let closed = options.threads == 1 ? "every connection was closed"
            : "every connection of one of the \(options.threads) load threads was closed, which ends the run,"
        return "\(closed) after \(Format.seconds(ran)) of the \(Format.seconds(window)) window (the server stopped, "
            + "restarted or closed them?); the report covers that part only"
    }

    /// Why a run by duration has no calls: every call it sent is still unanswered at its end.
    private static func silence(_ merged: LoopResult, _ options: BenchOptions, _ control: RunControl) -> String? {
        guard options.requests == nil, !control.isCancelled, merged.callsByCode.isEmpty, merged.unansweredCalls > 0
        else { return nil }
        return "no call was answered during the run: \(Format.grouped(merged.unansweredCalls)) had no reply "
            + "(a stuck server, or not a Larder server on that port?)"
    }

    private static func makeResult(_ merged: LoopResult, options: BenchOptions, control: RunControl, seeded: [String],
                                   tls: TLSSummary?) -> BenchResult
    {
        let windowEnd: UInt64
        if options.requests != nil {
            let last = control.lastCompletion.load(ordering: .relaxed)
            windowEnd = last > 0 ? last : min(merged.endedAt, control.hardEnd)
        } else {
            windowEnd = min(merged.endedAt, control.measureEnd)
        }
        let seconds = windowEnd > control.measureStart ? Double(windowEnd - control.measureStart) / 1e9 : 0
        var callsByCode: [StatusCode: Int] = [:]
        for (code, count) in merged.callsByCode { callsByCode[StatusCode(rawValue: code), default: 0] += count }
        var firstMessages: [StatusCode: String] = [:]
        for (code, message) in merged.firstMessages { firstMessages[StatusCode(rawValue: code)] = message }
        let start = merged.startSample
        let end = merged.endSample
        var serverSeconds: Double?
        if let before = start?.serverSeconds, let after = end?.serverSeconds { serverSeconds = after - before }
        return BenchResult(
            options: options, seconds: seconds, latency: merged.latency,
            uncorrectedLatency: options.isOpenLoop ? merged.uncorrectedLatency : nil, byWorkload: merged.byWorkload,
            callsByCode: callsByCode, firstMessages: firstMessages, lostCalls: merged.lostCalls,
            unsentCalls: merged.unsentCalls,
            connectionFailures: merged.connectionFailures,
            benchCPUSeconds: max(0, (end?.selfSeconds ?? 0) - (start?.selfSeconds ?? 0)),
            serverCPUSeconds: serverSeconds,
            cpuWindowSeconds: Double((end?.wallNanoseconds ?? 0) &- (start?.wallNanoseconds ?? 0)) / 1e9,
            seeded: seeded, timeline: truncated(merged.timeline, seconds).coarsened(toAtMost: 120), steps: merged.steps.map { truncated($0, seconds) },
            interrupted: control.isCancelled, stopReason: merged.templateFailure ?? shortfall(merged, options, control)
                ?? silence(merged, options, control) ?? stall(merged, options, control) ?? cutShort(merged, options, control),
            createdMealIDs: merged.createdIDs, uncapturedCreates: merged.uncapturedCreates, tls: tls,
            serverStreamLimit: merged.serverStreamLimit, callsAboveStreamLimit: merged.callsAboveStreamLimit)
    }
}
