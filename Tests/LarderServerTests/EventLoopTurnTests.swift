import Foundation
import LarderReactor
import LarderTestSupport
import Testing
import LarderSystem

/// `EventLoop`'s wake-ups (an edge-triggered eventfd that is never read) and `aroundTurn`.
@Suite("Event loop turns", .offThePool)
struct EventLoopTurnTests {
    /// Every `execute` from another thread wakes a loop blocked in epoll_wait: with no tick to
    /// fall back on, a lost wake-up would leave its task waiting (caught by the 60 s timeout).
    @Test func everyExecuteWakesTheLoop() async throws {
        let ran = try await offThePool { () throws -> Int in
            let loop = try EventLoop()
            let finished = DispatchSemaphore(value: 0)
            Thread {
                loop.run(tickMilliseconds: 3_600_000)
                finished.signal()
            }.start()
            var ran = 0
            for _ in 0..<2000 {
                let done = DispatchSemaphore(value: 0)
                loop.execute { done.signal() }
                guard done.wait(timeout: .now() + 60) == .success else { break }
                ran += 1
            }
            loop.stop()
            _ = finished.wait(timeout: .now() + 60)
            return ran
        }
        #expect(ran == 2000, "a task was not run: the loop missed a wake-up")
    }

    /// A task the loop queues for itself (an `execute` on the loop thread writes no eventfd)
    /// runs on the next turn without waiting: with no tick to fall back on, a loop that
    /// waited in epoll_wait would leave the chain stuck (caught by the 60 s timeout).
    @Test func aTaskQueuedFromTheLoopThreadRunsWithoutAWakeUp() async throws {
        final class Chain: Sendable {
            let loop: EventLoop
            let remaining = LockedValue(2000)
            let done = DispatchSemaphore(value: 0)
            init(_ loop: EventLoop) { self.loop = loop }
            func step() {
                let left = remaining.withLock { count in count -= 1; return count }
                if left == 0 { done.signal() } else { loop.execute { self.step() } }
            }
        }
        let left = try await offThePool { () throws -> Int in
            let loop = try EventLoop()
            let chain = Chain(loop)
            let finished = DispatchSemaphore(value: 0)
            Thread {
                loop.run(tickMilliseconds: 3_600_000)
                finished.signal()
            }.start()
            loop.execute { chain.step() }
            _ = chain.done.wait(timeout: .now() + 60)
            loop.stop()
            _ = finished.wait(timeout: .now() + 60)
            return chain.remaining.withLock { $0 }
        }
        #expect(left == 0, "a task queued from the loop thread was not run")
    }

    /// `aroundTurn` wraps each turn's events and tasks: a task runs inside it.
    @Test func tasksRunInsideAroundTurn() async throws {
        struct State: Sendable { var depth = 0; var turns = 0; var sawDepths: [Int] = [] }
        final class Box: Sendable { let state = LockedValue(State()) }
        let result = try await offThePool { () throws -> State in
            let loop = try EventLoop()
            let box = Box()
            loop.aroundTurn = { turn in
                box.state.withLock { $0.depth += 1; $0.turns += 1 }
                turn()
                box.state.withLock { $0.depth -= 1 }
            }
            let finished = DispatchSemaphore(value: 0)
            Thread {
                loop.run(tickMilliseconds: 3_600_000)
                finished.signal()
            }.start()
            for _ in 0..<10 {
                let done = DispatchSemaphore(value: 0)
                loop.execute {
                    box.state.withLock { $0.sawDepths.append($0.depth) }
                    done.signal()
                }
                _ = done.wait(timeout: .now() + 60)
            }
            loop.stop()
            _ = finished.wait(timeout: .now() + 60)
            return box.state.withLock { $0 }
        }
        #expect(result.sawDepths == Array(repeating: 1, count: 10), "each task ran inside exactly one aroundTurn")
        #expect(result.turns >= 10)
        #expect(result.depth == 0)
    }

    /// `beforeSleep` runs when the loop is about to wait, not while it has work queued: a
    /// chain of tasks the loop queues for itself sees no call, the idle loop then one (the
    /// pending flag is cleared by it), and a loop with nothing pending makes none.
    @Test func beforeSleepRunsOnlyWhenTheLoopWouldWait() async throws {
        struct State: Sendable { var pending = false; var calls = 0; var callsDuringChain = -1 }
        final class Box: Sendable {
            let state = LockedValue(State())
            let slept = DispatchSemaphore(value: 0)
            let remaining = LockedValue(500)
            let chainDone = DispatchSemaphore(value: 0)
        }
        let result = try await offThePool { () throws -> State in
            let loop = try EventLoop()
            let box = Box()
            loop.beforeSleep = EventLoop.SleepHook(
                isPending: { box.state.withLock { $0.pending } },
                run: {
                    box.state.withLock { $0.pending = false; $0.calls += 1 }
                    box.slept.signal()
                })
            let finished = DispatchSemaphore(value: 0)
            Thread {
                loop.run(tickMilliseconds: 3_600_000)
                finished.signal()
            }.start()
            @Sendable func step() {
                let left = box.remaining.withLock { count in count -= 1; return count }
                if left > 0 { loop.execute { step() }; return }
                box.state.withLock { $0.callsDuringChain = $0.calls }
                box.chainDone.signal()
            }
            loop.execute {
                box.state.withLock { $0.pending = true }
                step()
            }
            _ = box.chainDone.wait(timeout: .now() + 60)
            _ = box.slept.wait(timeout: .now() + 60)
            // Nothing pending now: further turns (each of these tasks) make no call.
            for _ in 0..<20 {
                let done = DispatchSemaphore(value: 0)
                loop.execute { done.signal() }
                _ = done.wait(timeout: .now() + 60)
            }
            loop.stop()
            _ = finished.wait(timeout: .now() + 60)
            return box.state.withLock { $0 }
        }
        #expect(result.callsDuringChain == 0, "beforeSleep ran while the loop had tasks queued")
        #expect(result.calls == 1, "beforeSleep ran \(result.calls) times; once, when the chain ended, was expected")
    }

    /// A handler that closes another descriptor while the turn's events are dispatched, and a
    /// new registration that gets its number in the same turn: the closed one's event, already
    /// taken from epoll, must not reach the new handler (its descriptor is not ready at all).
    @Test func anEventOfADescriptorClosedThisTurnDoesNotReachItsSuccessor() async throws {
        /// Touched on the loop thread only (set up before `run`, read after it returned).
        final class Turn: @unchecked Sendable {
            var closedOne = false
            var reused = false
            var staleCalls = 0
            var open: Set<Int32> = []
        }
        final class Closer: EventHandler {
            let loop: EventLoop, turn: Turn, other: Int32
            init(_ loop: EventLoop, _ turn: Turn, other: Int32) { self.loop = loop; self.turn = turn; self.other = other }
            func handle(_ events: IOEvents) {
                guard !turn.closedOne else { return }
                turn.closedOne = true
                loop.unregister(other)
                // A new pipe put at the closed one's number (dup2 closes it and reuses it at once:
                // other tests of this process open descriptors too, so the lowest free one may not be it).
                var ends: [Int32] = [-1, -1]
                guard pipe(&ends) == 0 else { return }
                let successor = dup2(ends[0], other)  // nothing is ever written to it: never readable
                close(ends[0])
                turn.open.insert(ends[1])
                turn.reused = successor == other
                try? loop.register(successor, for: .readable, handler: Stale(turn))
                loop.stop()
            }
        }
        final class Stale: EventHandler {
            let turn: Turn
            init(_ turn: Turn) { self.turn = turn }
            func handle(_ events: IOEvents) { turn.staleCalls += 1 }
        }
        let turn = try await offThePool { () throws -> Turn in
            let loop = try EventLoop()
            let turn = Turn()
            // Both readable from the start, so one epoll_wait reports both; whichever handler
            // runs first closes the other's descriptor, whose event is then still to dispatch.
            var first: [Int32] = [-1, -1], second: [Int32] = [-1, -1]
            guard pipe(&first) == 0, pipe(&second) == 0 else { throw CocoaError(.fileReadUnknown) }
            turn.open = Set(first + second)
            for end in [first[1], second[1]] { _ = write(end, "x", 1) }
            let a = first[0], b = second[0]
            try loop.register(a, for: .readable, handler: Closer(loop, turn, other: b))
            try loop.register(b, for: .readable, handler: Closer(loop, turn, other: a))
            loop.run(tickMilliseconds: 3_600_000)
            for fd in turn.open { close(fd) }
            return turn
        }
        #expect(turn.closedOne)
        #expect(turn.reused, "the new pipe got the closed one's number (else this test shows nothing)")
        #expect(turn.staleCalls == 0, "the closed descriptor's event reached the new handler")
    }
}
