import LarderSystem
public import LarderWire

/// Runs a whole bench: creates the data it needs, then the load, off the
/// Swift concurrency pool (the load loops block in poll()), then deletes
/// what it created unless `--keep-data`.
public enum BenchRunner {
    /// Runs `options`; `notify` gets progress notices (what is being created and deleted).
    /// `cancellation` ends the run early (Ctrl-C); the data is deleted all the same.
    /// - Throws: the RPCError that stopped the run before any load (connect, seeding), after deleting what was created.
    public static func run(_ options: BenchOptions, showProgress: Bool = false, cancellation: BenchCancellation? = nil,
                           data: CreatedData? = nil,
                           notify: @escaping @Sendable (String) -> Void = { _ in }) async throws(RPCError) -> BenchResult
    {
        let data = data ?? CreatedData()
        let outcome: Result<BenchResult, RPCError> = await withCheckedContinuation { continuation in
            // Detached when dropped: the thread ends with the run.
            _ = SystemThread(name: "larder-bench") {
                continuation.resume(returning: runBlocking(options, data: data, showProgress: showProgress,
                                                           cancellation: cancellation, notify: notify))
            }
        }
        return try outcome.get()
    }

    /// The metadata of every call: `--metadata`, then the token as `authorization: Bearer …`.
    static func metadata(_ options: BenchOptions) -> [(String, String)] {
        var metadata = options.metadata.map { ($0.key, $0.value) }
        if let token = options.token {
            metadata.removeAll { $0.0 == "authorization" }
            metadata.append(("authorization", "Bearer \(token)"))
        }
        return metadata
    }

    static func seedMetadata(_ options: BenchOptions) -> [String: String] {
        Dictionary(metadata(options), uniquingKeysWith: { _, last in last })
    }

    private static func runBlocking(_ options: BenchOptions, data: CreatedData, showProgress: Bool,
                                    cancellation: BenchCancellation?, notify: (String) -> Void)
        -> Result<BenchResult, RPCError>
    {
        var outcome: Result<BenchResult, RPCError>
        do throws(RPCError) {
            let prepared = try RequestCatalog.prepare(options, data: data, cancellation: cancellation, notify: notify)
            let templates = RequestTemplates(payloads: prepared.groups, metadata: metadata(options),
                                             callCreates: options.call.map { !$0.isReadOnly } ?? false,
                                             overTLS: options.tls != nil)
            outcome = .success(try LoadEngine.run(options, templates: templates, seeded: prepared.seeded,
                                                  showProgress: showProgress, cancellation: cancellation))
        } catch {
            outcome = .failure(error)
        }
        if case .success(let result) = outcome, options.activeWorkloads.contains(.create) {
            data.addCreated(result.createdMealIDs, complete: result.uncapturedCreates == 0)
        }
        guard !data.isEmpty else { return outcome }
        var cleanup: CleanupReport
        if options.keepData {
            cleanup = CleanupReport(prefix: data.prefix, created: data.summary)
            cleanup.tls = options.tls
            cleanup.kept = true
        } else {
            cleanup = DataCleaner.clean(data, server: options.server, tls: options.tls, metadata: seedMetadata(options),
                                        connectTimeoutSeconds: options.connectTimeoutSeconds, notify: notify)
        }
        switch outcome {
        case .success(var result):
            result.cleanup = cleanup
            return .success(result)
        case .failure:
            notify(BenchReport.cleanupText(cleanup, server: options.server))
            return outcome
        }
    }
}
