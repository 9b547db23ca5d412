#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A joinable pthread running one closure; the store's own threads.
final class StoreThread: @unchecked Sendable {
    // Sendable because `handle` is written once, in init, before the object is shared, and
    // `joined` only by `join()`, which its one owner (StoreExecutor.close, run once) calls.
    // Not an Atomic: pthread_t is a pointer on Darwin. (The plumbing module replaces this.)
    private final class Start {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    #if canImport(Glibc)
    private var handle: pthread_t = 0
    #else
    private var handle: pthread_t?
    #endif
    private var joined = false

    /// Starts a thread running `body`; `name` labels it where the platform allows.
    init(name: String, _ body: @escaping @Sendable () -> Void) {
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        let result = pthread_create(&handle, nil, { argument in
            guard let argument else { return nil }
            let start = Unmanaged<Start>.fromOpaque(argument).takeRetainedValue()
            #if canImport(Darwin)
            _ = pthread_setname_np(start.name)
            #endif
            start.body()
            return nil
        }, start)
        precondition(result == 0, "pthread_create failed: \(result)")
    }

    /// Waits for the thread to finish. Call once.
    func join() {
        guard !joined else { return }
        joined = true
        #if canImport(Glibc)
        _ = pthread_join(handle, nil)
        #else
        if let handle { _ = pthread_join(handle, nil) }
        #endif
    }
}
