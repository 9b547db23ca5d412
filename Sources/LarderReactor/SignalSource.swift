import CEpoll
#if canImport(Glibc)
import Glibc
#endif

/// Delivers signals such as SIGTERM to an event loop through a signalfd.
///
/// `block(_:)` must run before any other thread starts, so that no thread
/// takes the signal with its default action; the signals then wait, pending,
/// until a `SignalSource` registered on a loop reads them. No signal is lost
/// between start-up and registration.
public final class SignalSource: EventHandler {
    private let fd: Int32
    private let handler: (Int32) -> Void

    /// Blocks `signals` in the calling thread and the threads it creates later.
    public static func block(_ signals: [Int32]) throws(SystemError) {
        var set = sigset_t()
        let result = signals.withUnsafeBufferPointer { cepoll_block_signals($0.baseAddress, Int32($0.count), &set) }
        if result != 0 { throw SystemError("pthread_sigmask", errno: result) }
    }

    /// Reads `signals` (already blocked with `block`) on `loop`, calling `handler` on the loop thread.
    public init(signals: [Int32], loop: EventLoop, handler: @escaping (Int32) -> Void) throws(SystemError) {
        var set = sigset_t()
        sigemptyset(&set)
        for number in signals { sigaddset(&set, number) }
        fd = try syscall("signalfd") { signalfd(-1, &set, Int32(SFD_NONBLOCK | SFD_CLOEXEC)) }
        self.handler = handler
        do {
            try loop.register(fd, for: .readable, handler: self)
        } catch {
            close(fd)
            throw error
        }
    }

    deinit { close(fd) }

    public func handle(_ events: IOEvents) {
        var info = signalfd_siginfo()
        while read(fd, &info, MemoryLayout<signalfd_siginfo>.size) == MemoryLayout<signalfd_siginfo>.size {
            handler(Int32(info.ssi_signo))
        }
    }
}
