import Dispatch
import Foundation
import LarderAPI
import LarderSQLite
import LarderStore
import LarderWire

/// A temporary directory holding one SQLite database for one test; removed on deinit.
final class TestDatabase {
    let directory: URL
    let path: String
    private(set) var store: SQLiteStore

    init(seed: Bool = false, durability: SQLiteStore.Options.Durability = .normal) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("larder-store-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("test.sqlite").path
        store = try SQLiteStore.open(path: path, options: .init(durability: durability, seed: seed))
    }

    /// Closes and opens the same file again.
    func reopen(seed: Bool = true) throws {
        store.close()
        store = try SQLiteStore.open(path: path, options: .init(durability: .normal, seed: seed))
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
