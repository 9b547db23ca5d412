import LarderTestSupport
import CSQLite
import Dispatch
import Foundation
import LarderAPI
import LarderPostgres
import LarderSQLite
import LarderStore
import LarderWire

/// A fresh database of one backend for one test: a SQLite file in a temporary
/// directory, or a PostgreSQL database of its own (see `PostgresTestDatabase`).
/// Removed on deinit.
final class TestDatabase {
    let backend: Backend
    let directory: URL
    /// The SQLite file, or the PostgreSQL URL.
    let path: String
    private let durability: SQLiteStore.Options.Durability
    private let postgres: PostgresTestDatabase?
    private(set) var store: any Store

    init(_ backend: Backend = .sqlite, seed: Bool = false,
         durability: SQLiteStore.Options.Durability = .normal) throws {
        self.backend = backend
        self.durability = durability
        directory = try makeTemporaryDirectory(prefix: "larder-store-tests")
        switch backend {
        case .sqlite:
            postgres = nil
            path = directory.appendingPathComponent("test.sqlite").path
        case .postgres:
            let database = try PostgresTestDatabase()
            postgres = database
            path = database.url
        }
        store = try Self.open(backend, path: path, seed: seed, durability: durability)
    }

    private static func open(_ backend: Backend, path: String, seed: Bool,
                             durability: SQLiteStore.Options.Durability) throws(RPCError) -> any Store {
        switch backend {
        case .sqlite:
            return try SQLiteStore.openAfterClose(path: path, options: .init(durability: durability, seed: seed))
        case .postgres:
            return try PostgresStore.open(url: path, options: .init(durability: durability == .full ? .full : .normal,
                                                                    seed: seed))
        }
    }

    /// Closes and opens the same database again.
    func reopen(seed: Bool = true) throws {
        store.close()
        store = try Self.open(backend, path: path, seed: seed, durability: .normal)
    }

    /// Closes the store and runs `sql` on the SQLite file through a connection of its own
    /// (what the API cannot do: old rows, damaged rows); `reopen` serves it again.
    func closeAndExecute(_ sql: String) throws {
        store.close()
        let connection = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READWRITE)
        try connection.execute(sql)
    }

    /// Closes the store and runs `sql` on its database with a connection of its own, on
    /// either backend (SQLite file or PostgreSQL database); `reopen` serves it again.
    func closeAndExecuteRaw(_ sql: String) throws {
        switch backend {
        case .sqlite:
            try closeAndExecute(sql)
        case .postgres:
            store.close()
            let connection = try PostgresConnection(url: path)
            defer { connection.close() }
            _ = try connection.execute(sql)
        }
    }

    deinit {
        store.close()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs a read operation and waits for its result.
    func read<Request: Sendable, Response: Sendable>(
        _ operation: @escaping @Sendable (Request, any StoreReader) throws(RPCError) -> Response,
        _ request: Request
    ) throws(RPCError) -> Response {
        let waiter = Waiter<Response>()
        store.read({ db throws(RPCError) in try operation(request, db) }, completion: waiter.finish)
        return try waiter.wait().get()
    }

    /// Runs a write operation and waits until its transaction committed.
    func write<Request: Sendable, Response: Sendable>(
        _ operation: @escaping @Sendable (Request, any StoreWriter) throws(RPCError) -> Response,
        _ request: Request
    ) throws(RPCError) -> Response {
        let waiter = Waiter<Response>()
        store.write({ db throws(RPCError) in try operation(request, db) }, completion: waiter.finish)
        return try waiter.wait().get()
    }

    /// Runs a write operation that answers with its encoding; returns the message,
    /// after checking that the bytes the reply carries decode to it.
    func write<Request: Sendable, Response: ProtoMessage & Equatable>(
        _ operation: @escaping @Sendable (Request, any StoreWriter) throws(RPCError) -> EncodedMessage<Response>,
        _ request: Request
    ) throws(RPCError) -> Response {
        let encoded: EncodedMessage<Response> = try write(operation, request)
        guard try ProtoCodec.decode(Response.self, from: encoded.bytes) == encoded.message else {
            throw RPCError.internalError("the reply's bytes do not decode to the message written")
        }
        return encoded.message
    }
}

/// Waits on a semaphore for one completion.
final class Waiter<Value: Sendable>: @unchecked Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private var result: Result<Value, RPCError>?

    func finish(_ result: Result<Value, RPCError>) {
        self.result = result
        semaphore.signal()
    }

    func wait() -> Result<Value, RPCError> {
        semaphore.wait()
        return result ?? .failure(.internalError("no result"))
    }

    /// True when the result is in (without waiting for it).
    var isFinished: Bool {
        guard semaphore.wait(timeout: .now()) == .success else { return false }
        semaphore.signal()
        return true
    }
}

/// The error `body` throws, or nil when it succeeds.
func rpcError<T>(_ body: () throws -> T) -> RPCError? {
    do {
        _ = try body()
        return nil
    } catch let error as RPCError {
        return error
    } catch {
        return RPCError(.unknown, "not an RPCError: \(error)")
    }
}

extension SQLiteStore {
    /// `open`, tried again for up to 60 s while the file's lock is held. Right after a store of
    /// this process closed the file, a child process another test is starting (a larder-server)
    /// may still hold a copy of the closed descriptor, and with it the `flock`, until it execs:
    /// seen once, under ThreadSanitizer, as "is in use by another larder-server". Use it to open
    /// a file after a close, not to check that a second store is refused.
    static func openAfterClose(path: String, options: Options) throws(RPCError) -> SQLiteStore {
        let deadline = ContinuousClock.now.advanced(by: .seconds(60))
        while true {
            do throws(RPCError) {
                return try open(path: path, options: options)
            } catch where error.code == .failedPrecondition && error.message.contains("is in use by another larder-server")
                && ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
    }
}
