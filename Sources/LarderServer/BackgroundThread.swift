#if canImport(Glibc)
import Glibc
#endif

/// A joinable pthread running one closure (the metrics HTTP listener).
final class BackgroundThread: @unchecked Sendable {
    private final class Start {
        let body: @Sendable () -> Void
        init(body: @escaping @Sendable () -> Void) { self.body = body }
    }

    private var handle: pthread_t = 0
    private var joined = false

    /// Starts a thread running `body`.
    init(_ body: @escaping @Sendable () -> Void) {
        let start = Unmanaged.passRetained(Start(body: body)).toOpaque()
        let result = pthread_create(&handle, nil, { argument in
            guard let argument else { return nil }
            Unmanaged<Start>.fromOpaque(argument).takeRetainedValue().body()
            return nil
        }, start)
        precondition(result == 0, "pthread_create failed: \(result)")
    }

    /// Waits for the thread to finish. Call once, from another thread.
    func join() {
        guard !joined else { return }
        joined = true
        _ = pthread_join(handle, nil)
    }
}
