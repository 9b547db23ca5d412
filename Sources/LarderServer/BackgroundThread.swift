#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A joinable pthread running one closure (the metrics HTTP listener).
final class BackgroundThread: Sendable {
    private final class Start {
        let body: @Sendable () -> Void
        init(body: @escaping @Sendable () -> Void) { self.body = body }
    }

    private let handle: pthread_t
    private let joined = Atomic<Bool>(false)

    /// Starts a thread running `body`.
    init(_ body: @escaping @Sendable () -> Void) {
        let start = Unmanaged.passRetained(Start(body: body)).toOpaque()
        var handle: pthread_t = 0
        let result = pthread_create(&handle, nil, { argument in
            guard let argument else { return nil }
            Unmanaged<Start>.fromOpaque(argument).takeRetainedValue().body()
            return nil
        }, start)
        precondition(result == 0, "pthread_create failed: \(result)")
        self.handle = handle
    }

    /// Waits for the thread to finish. Call once, from another thread.
    func join() {
        guard !joined.exchange(true, ordering: .acquiringAndReleasing) else { return }
        _ = pthread_join(handle, nil)
    }
}
