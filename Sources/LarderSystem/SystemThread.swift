#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CLarderSystem
import Synchronization

/// A POSIX thread running one closure: named, with an optional stack size,
/// joined with `join()` or, when dropped without a join, detached.
///
/// `@unchecked Sendable`: `handle` (a `pthread_t`, not `Sendable` everywhere) is a
/// constant; `joined` is atomic, so only one caller joins or detaches it.
public final class SystemThread: @unchecked Sendable {
    private final class Start {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    #if canImport(Glibc)
    private typealias Handle = pthread_t
    private static let noHandle: Handle = 0
    #else
    private typealias Handle = pthread_t?
    private static let noHandle: Handle = nil
    #endif

    private let handle: Handle
    private let joined = Atomic<Bool>(false)

    /// Starts a thread running `body`.
    /// - Parameters:
    ///   - name: the thread's name in `ps`, debuggers and crash reports (at most 15 bytes kept on Linux).
    ///   - stackSize: bytes of stack; nil for the platform default.
    public convenience init(name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) {
        let started = Self.create(name: name, stackSize: stackSize, body)
        precondition(started.result == 0, "pthread_create failed: \(started.result)")
        self.init(handle: started.handle)
    }

    /// Starts a thread running `body`, or returns nil when the system has no thread to give
    /// (EAGAIN: a process or user thread limit), for callers that can carry on without it.
    public convenience init?(startingIfPossible name: String, _ body: @escaping @Sendable () -> Void) {
        let started = Self.create(name: name, stackSize: nil, body)
        guard started.result == 0 else { return nil }
        self.init(handle: started.handle)
    }

    private init(handle: Handle) { self.handle = handle }

    /// `pthread_create`'s result and the new thread's handle (valid when the result is 0).
    private static func create(name: String, stackSize: Int?, _ body: @escaping @Sendable () -> Void)
        -> (result: Int32, handle: Handle)
    {
        var handle = noHandle
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        if let stackSize {
            precondition(pthread_attr_setstacksize(&attributes, stackSize) == 0, "bad thread stack size \(stackSize)")
        }
        let start = Unmanaged.passRetained(Start(name: name, body: body))
        let result = pthread_create(&handle, &attributes, { argument in
            guard let argument else { return nil }
            let start = Unmanaged<Start>.fromOpaque(argument).takeRetainedValue()
            SystemThread.nameCurrentThread(start.name)
            start.body()
            return nil
        }, start.toOpaque())
        if result != 0 { start.release() }  // no thread took it
        return (result, handle)
    }

    deinit {
        guard !joined.exchange(true, ordering: .acquiringAndReleasing) else { return }
        #if canImport(Glibc)
        _ = pthread_detach(handle)
        #else
        if let handle { _ = pthread_detach(handle) }
        #endif
    }

    /// Waits for the thread to finish; later calls return at once. Call from another thread.
    public func join() {
        guard !joined.exchange(true, ordering: .acquiringAndReleasing) else { return }
        #if canImport(Glibc)
        _ = pthread_join(handle, nil)
        #else
        if let handle { _ = pthread_join(handle, nil) }
        #endif
    }

    /// The calling thread's name ("" when it has none).
    public static var currentName: String {
        var buffer = [CChar](repeating: 0, count: 64)
        guard clarder_current_thread_name(&buffer, buffer.count) == 0 else { return "" }
        return buffer.withUnsafeBufferPointer { pointer in pointer.baseAddress.map { String(cString: $0) } ?? "" }
    }

    /// Lets the kernel end the calling thread's timed waits at most `nanoseconds` late (Linux's
    /// default is 50 µs; nothing elsewhere). For a thread whose waits are a schedule.
    public static func setCurrentTimerSlack(nanoseconds: UInt) {
        _ = clarder_set_current_thread_timer_slack(nanoseconds)
    }

    /// The calling thread's timer slack in nanoseconds; nil where it cannot be read.
    public static var currentTimerSlack: Int? {
        let slack = clarder_current_thread_timer_slack()
        return slack < 0 ? nil : slack
    }

    /// Names the calling thread; Linux keeps at most 15 bytes, cut at a character boundary.
    private static func nameCurrentThread(_ name: String) {
        #if canImport(Glibc)
        var bytes = 0
        var kept = ""
        for character in name {
            bytes += character.utf8.count
            if bytes > 15 { break }
            kept.append(character)
        }
        _ = clarder_set_current_thread_name(kept)
        #else
        _ = clarder_set_current_thread_name(name)
        #endif
    }
}
