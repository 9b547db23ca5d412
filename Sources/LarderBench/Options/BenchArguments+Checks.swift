import LarderClient
import LarderWire

/// The checks across flags, once every flag is read, and the defaults that depend on other flags.
extension BenchArguments.Draft {
    /// What the flags ask for, once they agree with each other.
    /// - Throws: INVALID_ARGUMENT naming the flags that disagree.
    mutating func invocation() throws(RPCError) -> BenchArguments.Invocation {
        try applyTLS()
        if let cleanUpPrefix {
            try checkCleanUp()
            return .cleanUp(options, prefix: cleanUpPrefix)
        }
        try applyCall()
        try applySchedule()
        if let schedule = options.schedule, !durationGiven, options.requests == nil {
            options.durationSeconds = schedule.defaultDurationSeconds
        }
        try applyMix()
        if options.requests != nil && durationGiven {
            throw .invalidArgument("give either --duration or --requests, not both")
        }
        applyDerivedDefaults()
        try checkTimeLimit()
        return .run(options)
    }

    /// A run by duration needs its warm-up and measured time within `--time-limit`: a shorter
    /// limit cut the window silently, and the report then blamed the server for the calls in flight.
    private func checkTimeLimit() throws(RPCError) {
        guard options.requests == nil else { return }
        let needed = options.warmupSeconds + options.durationSeconds
        guard options.timeLimitSeconds <= needed else { return }
        throw .invalidArgument("--time-limit \(Format.seconds(options.timeLimitSeconds)) is not longer than the run it bounds "
            + "(--warmup \(Format.seconds(options.warmupSeconds)) + --duration \(Format.seconds(options.durationSeconds))): "
            + "the calls in flight at its end need time to answer: raise it, or leave it out (default: those plus 5s)")
    }

    /// Sets `options.tls` when TLS is asked for; the TLS flags need `--tls` (or `LARDER_TLS`), a client
    /// certificate needs its key.
    private mutating func applyTLS() throws(RPCError) {
        if tlsWanted {
            guard (tls.certificateFile == nil) == (tls.keyFile == nil) else {
                throw .invalidArgument("a client certificate needs both --cert FILE and --key FILE (or LARDER_CERT and LARDER_KEY)")
            }
            options.tls = tls
        } else if let flag = tlsFlagsGiven.first {
            throw .invalidArgument("\(flag) applies to TLS connections: add --tls")
        }
    }

    /// `--clean-up` runs no load: any flag it does not use is a usage error rather than silently ignored.
    private func checkCleanUp() throws(RPCError) {
        if let ignored = flagsGiven.first(where: { !Self.cleanUpFlags.contains($0) }) {
            throw .invalidArgument("--clean-up runs no load: --\(ignored) does not apply to it (it takes --server, "
                + "--token, --metadata, --connect-timeout and the TLS flags)")
        }
    }

    /// The flags `--clean-up` uses.
    private static let cleanUpFlags: Set<String> = [
        "clean-up", "server", "token", "metadata", "connect-timeout", "tls", "ca", "server-name", "cert", "key",
        "insecure-skip-verify",
    ]

    /// Turns `--call` and `--data` into the `call` workload; `--call` excludes `--workload` and `--mix`.
    private mutating func applyCall() throws(RPCError) {
        if let callMethod {
            guard !workloadGiven else { throw .invalidArgument("give either --call or --workload, not both") }
            guard !mixGiven else { throw .invalidArgument("--mix needs --workload mix, not --call") }
            options.call = try CallSpec(method: callMethod, data: callData ?? "{}")
            options.workload = .call
        } else if callData != nil {
            throw .invalidArgument("--data needs --call METHOD")
        }
    }

    /// Checks the `--load-*` flags together and sets `options.schedule` (or `rate` for `const`).
    private mutating func applySchedule() throws(RPCError) {
        guard let kind = scheduleKind else {
            if loadStart != nil || loadStep != nil || loadStepSeconds != nil || loadEnd != nil {
                throw .invalidArgument("--load-start, --load-step, --load-step-duration and --load-end need --load-schedule step or line")
            }
            return
        }
        if kind == "const" {
            guard loadStep == nil, loadStepSeconds == nil, loadEnd == nil else {
                throw .invalidArgument("--load-schedule const takes only --rate (or --load-start)")
            }
            guard let rate = options.rate ?? loadStart else { throw .invalidArgument("--load-schedule const needs --rate") }
            options.rate = rate
            return
        }
        guard options.rate == nil else {
            throw .invalidArgument("--rate is a constant rate; --load-schedule \(kind) starts at --load-start instead")
        }
        guard let start = loadStart, let step = loadStep else {
            throw .invalidArgument("--load-schedule \(kind) needs --load-start R and --load-step R (see --help)")
        }
        if let end = loadEnd, step > 0 ? end < start : end > start {
            throw .invalidArgument("--load-end \(Format.compact(end)) lies the other way from --load-start \(Format.compact(start)) for --load-step \(Format.compact(step))")
        }
        if step < 0 && loadEnd == nil { throw .invalidArgument("a negative --load-step needs --load-end (the lowest rate)") }
        let schedule = LoadSchedule(kind: kind == "step" ? .step : .line, start: start, step: step,
                                    stepSeconds: loadStepSeconds ?? 1, end: loadEnd)
        if let ramp = schedule.rampSeconds, ramp / schedule.stepSeconds > 1000 {
            throw .invalidArgument("--load-schedule \(kind) would take \(Int(ramp / schedule.stepSeconds)) steps; at most 1000")
        }
        options.schedule = schedule
    }

    /// The standard mix for `--workload mix` without `--mix`, else the one workload; `--mix` needs `mix`.
    private mutating func applyMix() throws(RPCError) {
        if options.workload == .mix {
            if !mixGiven { options.mix = .standard }
        } else {
            if mixGiven { throw .invalidArgument("--mix needs --workload mix") }
            options.mix = WorkloadMix(single: options.workload)
        }
    }

    /// Connections default to at most 4 and never outnumber the calls in flight; threads never outnumber
    /// the connections; the time limit of a timed run defaults to its warm-up and duration plus 5 seconds.
    private mutating func applyDerivedDefaults() {
        if !connectionsGiven { options.connections = min(options.concurrency, 4) }
        options.connections = min(options.connections, options.concurrency)
        options.threads = min(options.threads, options.connections)
        if !timeLimitGiven && options.requests == nil {
            options.timeLimitSeconds = options.warmupSeconds + options.durationSeconds + 5
        }
    }
}
