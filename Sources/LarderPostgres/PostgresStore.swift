import LarderAPI
import LarderStore
import LarderWire

/// The PostgreSQL `Store`: one writer connection doing group commit and a pool
/// of reader connections, each on a thread of its own (`StoreExecutor`).
///
/// Any number of server processes may open the same database: each keeps only
/// its connections, PostgreSQL's locks and constraints keep the data consistent
/// across them (a unique name taken by another replica is ALREADY_EXISTS), and
/// migrations and the default data run exactly once, under an advisory lock.
public final class PostgresStore: Store {
    private let executor: StoreExecutor
    /// The database URL without its password.
    public let target: String

    private init(target: String, executor: StoreExecutor) {
        self.target = target
        self.executor = executor
    }

    /// Connects to `url` (`postgres://user[:password]@host[:port]/database[?…]`),
    /// migrates the schema (seeding a new database when `options.seed`), and opens
    /// the reader pool.
    ///
    /// - Throws: UNAVAILABLE when the server cannot be reached, PERMISSION_DENIED
    ///   when it refuses the login, FAILED_PRECONDITION when the schema is newer
    ///   than this build, ABORTED when migrating kept conflicting with other replicas.
    public static func open(url: String, options: Options = Options()) throws(RPCError) -> PostgresStore {
        let target = PostgresURL.redacted(url)
        do throws(PostgresError) {
            let connect = { () throws(PostgresError) -> PostgresConnection in
                try PostgresConnection(url: url, applicationName: options.applicationName,
                                       connectTimeoutSeconds: options.connectTimeoutSeconds)
            }
            let setup = options.durability == .normal ? ["SET synchronous_commit TO off"] : []
            let writer = try PostgresSession(connection: try connect(), setup: setup)
            do throws(PostgresError) {
                try PostgresMigrator(session: writer).migrate(seed: options.seed)
            } catch {
                writer.close()
                throw error
            }
            var readers: [any StoreConnection] = []
            do throws(PostgresError) {
                for _ in 0..<max(1, options.readerCount) {
                    readers.append(try PostgresSession(connection: try connect()))
                }
            } catch {
                for reader in readers { reader.close() }
                writer.close()
                throw error
            }
            let executor = StoreExecutor(writer: writer, readers: readers,
                                         options: StoreExecutor.Options(maxWriteBatch: options.maxWriteBatch))
            return PostgresStore(target: target, executor: executor)
        } catch {
            var rpc = error.sqlState == PostgresMigrator.newerSchemaState
                ? RPCError.failedPrecondition(error.message) : error.rpcError
            if !rpc.message.contains(target) { rpc.message = "database \"\(target)\": " + rpc.message }
            throw rpc
        }
    }

    public func submitBatch(_ body: () -> Void) { executor.submitBatch(body) }

    public func setCompletionsDelivered(_ body: @escaping @Sendable () -> Void) {
        executor.setCompletionsDelivered(body)
    }

    public func read<R: Sendable>(
        _ operation: @escaping @Sendable (any StoreReader) throws(RPCError) -> R,
        completion: @escaping @Sendable (Result<R, RPCError>) -> Void
    ) {
        executor.read(operation, completion: completion)
    }

    public func write<R: Sendable>(
        _ operation: @escaping @Sendable (any StoreWriter) throws(RPCError) -> R,
        completion: @escaping @Sendable (Result<R, RPCError>) -> Void
    ) {
        executor.write(operation, completion: completion)
    }

    /// Finishes queued work, then closes every connection. Idempotent.
    public func close() { executor.close() }
}
