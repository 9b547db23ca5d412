import Foundation
import LarderWire

/// Runs a whole bench: creates the data it needs, then the load, off the
/// Swift concurrency pool (the load loops block in poll()).
public enum BenchRunner {
    /// Runs `options`; `notify` gets progress notices (what is being created).
    /// - Throws: the RPCError that stopped the run before any load (connect, seeding).
    public static func run(_ options: BenchOptions, showProgress: Bool = false,
                           notify: @escaping @Sendable (String) -> Void = { _ in }) async throws(RPCError) -> BenchResult
    {
        let outcome: Result<BenchResult, RPCError> = await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: runBlocking(options, showProgress: showProgress, notify: notify))
            }
            thread.start()
        }
        return try outcome.get()
    }

    private static func runBlocking(_ options: BenchOptions, showProgress: Bool, notify: (String) -> Void)
        -> Result<BenchResult, RPCError>
    {
        do throws(RPCError) {
            let prepared = try RequestCatalog.prepare(options, notify: notify)
            var metadata: [(String, String)] = []
            if let token = options.token { metadata.append(("authorization", "Bearer \(token)")) }
            let templates = RequestTemplates(payloads: prepared.groups, metadata: metadata)
            return .success(try LoadEngine.run(options, templates: templates, seeded: prepared.seeded,
                                               showProgress: showProgress))
        } catch {
            return .failure(error)
        }
    }
}
