import CEpoll
import LarderSystem
#if canImport(Glibc)
import Glibc
#endif

/// A single-threaded epoll reactor.
///
/// File descriptors and their handlers are registered from the loop's own
/// thread; other threads talk to the loop only through `execute(_:)` and
/// `stop()`, which wake it through an eventfd. Tasks submitted while the loop
/// is busy are run together on its next turn, so a burst costs one wake-up.
///
/// The loop's thread is the one that runs (or last ran) `run()`; before the first
/// `run()`, whoever sets the loop up owns it. State other objects keep for the loop
/// lives in `LoopBound`, which checks the thread in debug builds.
public final class EventLoop: @unchecked Sendable {
    // Sendable because: `epollFD` and `wakeFD` are immutable; `pending` is a LockedValue;
    // `owner` is atomic; `handlers` is touched only on the loop's thread, which
    // register and unregister check in debug builds (`assertOnLoopThread`), and
    // run() reads it on that thread; `aroundTurn` and `beforeSleep` are set before run() and read only by it. Tested in LoopBoundTests (a wrong-thread
    // register traps, in a child process).
    private let epollFD: Int32
    private let wakeFD: Int32
    /// Each watched descriptor's handler, and the registration it came with: events carry
    /// both (`token`), so an event reported for a descriptor closed earlier in the same turn
    /// never reaches a new connection that got its number.
    private var handlers: [Int32: (handler: any EventHandler, registration: UInt32)] = [:]
    private var lastRegistration: UInt32 = 0
    private let pending = LockedValue<PendingTasks>(PendingTasks())
    /// The thread in (or last in) `run()`; none before the first run.
    private let owner = ThreadOwner()
    /// Wraps each turn's work (its events, then its queued tasks): e.g. a store that holds the
    /// jobs submitted meanwhile and wakes its threads once at the end. Set before `run()`.
    public var aroundTurn: ((() -> Void) -> Void)?
    /// Work to finish before the loop sleeps, e.g. a store's read transaction held between
    /// turns. Set before `run()`.
    public var beforeSleep: SleepHook?

    /// What `beforeSleep` runs, and when: `isPending` is asked on every turn that could
    /// wait for events (so it must be cheap); when it says yes, the loop first looks for
    /// events without waiting and calls `run` only if there are none.
    public struct SleepHook {
        public let isPending: () -> Bool
        public let run: () -> Void

        public init(isPending: @escaping () -> Bool, run: @escaping () -> Void) {
            self.isPending = isPending
            self.run = run
        }
    }

    private struct PendingTasks: ~Copyable {
        var tasks: [@Sendable () -> Void] = []
        var stopRequested = false
        var wakePending = false
    }

    public init() throws(SystemError) {
        epollFD = try syscall("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        do {
            wakeFD = try syscall("eventfd") { eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)) }
        } catch {
            close(epollFD)
            throw error
        }
        // Edge-triggered, and never read: every write to an eventfd signals its waiters, so each
        // wake-up is reported once and a turn costs no read(2) of the counter. The counter only
        // grows (by one per wake-up, at most one per turn): it cannot reach its limit of 2^64 - 2.
        var event = epoll_event(events: EPOLLIN.rawValue | EPOLLET.rawValue, data: epoll_data_t(u64: Self.token(wakeFD, 0)))
        _ = epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event)
    }

    deinit {
        close(wakeFD)
        close(epollFD)
    }

    /// Watches `fd` for `events`, calling `handler` on this loop's thread. A peer's
    /// half-close (EPOLLRDHUP) is reported along with readability, never without it:
    /// it stays signalled, and a handler not reading would be called in a busy loop.
    public func register(_ fd: Int32, for events: IOEvents, handler: any EventHandler) throws(SystemError) {
        assertOnLoopThread("the handler table")
        lastRegistration = lastRegistration == .max ? 1 : lastRegistration + 1  // 0 is the wake-up's
        var event = epoll_event(events: Self.epollEvents(events), data: epoll_data_t(u64: Self.token(fd, lastRegistration)))
        try syscall("epoll_ctl(ADD)") { epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) }
        handlers[fd] = (handler, lastRegistration)
    }

    /// Changes the events watched for `fd`.
    public func modify(_ fd: Int32, for events: IOEvents) throws(SystemError) {
        assertOnLoopThread("the handler table")
        guard let registration = handlers[fd]?.registration else { throw SystemError("epoll_ctl(MOD)", errno: EBADF) }
        var event = epoll_event(events: Self.epollEvents(events), data: epoll_data_t(u64: Self.token(fd, registration)))
        try syscall("epoll_ctl(MOD)") { epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event) }
    }

    /// An event's data: the descriptor in the low half, its registration in the high one.
    private static func token(_ fd: Int32, _ registration: UInt32) -> UInt64 {
        UInt64(registration) << 32 | UInt64(UInt32(bitPattern: fd))
    }

    private static func epollEvents(_ events: IOEvents) -> UInt32 {
        events.contains(.readable) ? events.rawValue | EPOLLRDHUP.rawValue : events.rawValue
    }

    /// Stops watching `fd`. The caller still owns and closes it.
    public func unregister(_ fd: Int32) {
        assertOnLoopThread("the handler table")
        var event = epoll_event()
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, &event)
        handlers[fd] = nil
    }

    /// True on the loop's thread: the one running (or that last ran) `run()`, and,
    /// before the loop first runs, on any thread (the one setting it up).
    public var isOnLoopThread: Bool {
        owner.isUnowned || owner.isCurrentThread
    }

    /// Traps, in debug builds only, unless called on the loop's thread (`isOnLoopThread`):
    /// what `LoopBound` checks on every access. `owned` names what was reached, for the message.
    @inlinable
    public func assertOnLoopThread(_ owned: @autoclosure () -> String,
                                   file: StaticString = #fileID, line: UInt = #line) {
        assert(isOnLoopThread, "\(owned()) is owned by an event loop and was reached off its thread; "
               + "reach it with loop.execute { } from other threads", file: file, line: line)
    }

    /// Runs `task` on the loop thread soon. Callable from any thread; on the loop's own
    /// thread it costs no wake-up (the loop does not wait while tasks are queued).
    public func execute(_ task: @escaping @Sendable () -> Void) {
        let mustWake = pending.withLock { state in
            state.tasks.append(task)
            defer { state.wakePending = true }
            return !state.wakePending
        }
        if mustWake && !isOnLoopThread { wake() }
    }

    /// Makes `run()` return after its current turn. Callable from any thread.
    public func stop() {
        pending.withLock { $0.stopRequested = true }
        wake()
    }

    /// Dispatches events until `stop()`. Call from the thread that owns the loop.
    /// `onTick` runs every `tickMilliseconds` (not after every turn: a busy loop
    /// turns hundreds of thousands of times a second).
    public func run(tickMilliseconds: Int32 = 1000, onTick: () -> Void = {}) {
        owner.take()
        let capacity = 256
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        defer { events.deallocate() }
        let tickNanoseconds = UInt64(max(tickMilliseconds, 1)) * 1_000_000
        var nextTick = MonotonicClock.nanoseconds() + tickNanoseconds
        while true {
            let now = MonotonicClock.nanoseconds()
            // Tasks the loop queued for itself (see `execute`) are run without waiting.
            let tasksQueued = pending.withLock { !$0.tasks.isEmpty }
            let wait = now >= nextTick || tasksQueued ? 0 : Int32((nextTick - now + 999_999) / 1_000_000)
            let count = waitForEvents(events, capacity: capacity, milliseconds: wait)
            if count < 0 && errno != EINTR { fatalError("epoll_wait: \(SystemError("epoll_wait", errno: errno))") }
            var stop = false
            if let aroundTurn {
                aroundTurn { stop = dispatch(events, count: Int(count)) }
            } else {
                stop = dispatch(events, count: Int(count))
            }
            if stop { return }
            if MonotonicClock.nanoseconds() >= nextTick {
                onTick()
                nextTick = MonotonicClock.nanoseconds() + tickNanoseconds
            }
        }
    }

    /// epoll_wait for up to `milliseconds`, running `beforeSleep` first if it would sleep.
    private func waitForEvents(_ events: UnsafeMutablePointer<epoll_event>, capacity: Int,
                               milliseconds: Int32) -> Int32 {
        if milliseconds > 0, let beforeSleep, beforeSleep.isPending() {
            let ready = epoll_wait(epollFD, events, Int32(capacity), 0)
            if ready != 0 { return ready }
            beforeSleep.run()
        }
        return epoll_wait(epollFD, events, Int32(capacity), milliseconds)
    }

    /// One turn: the handlers of `count` ready events, then the queued tasks; true when stop was requested.
    private func dispatch(_ events: UnsafeMutablePointer<epoll_event>, count: Int) -> Bool {
        for index in 0..<max(count, 0) {
            let token = events[index].data.u64
            let fd = Int32(bitPattern: UInt32(truncatingIfNeeded: token))
            if fd == wakeFD { continue }  // edge-triggered: nothing to read (see init)
            // A handler closed earlier this turn may have left its number to a new registration.
            guard let entry = handlers[fd], UInt64(entry.registration) == token >> 32 else { continue }
            entry.handler.handle(IOEvents(rawValue: events[index].events))
        }
        return runPendingTasks()
    }

    /// Runs queued tasks; returns true when stop was requested.
    private func runPendingTasks() -> Bool {
        var tasks: [@Sendable () -> Void] = []
        let stop = pending.withLock { state in
            swap(&tasks, &state.tasks)
            state.wakePending = false
            return state.stopRequested
        }
        for task in tasks { task() }
        return stop
    }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }
}
