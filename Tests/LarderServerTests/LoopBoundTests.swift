import Foundation
import LarderAPI
import LarderReactor
import LarderTestSupport
import Testing
@testable import LarderServer
import LarderClient
import LarderSystem

/// `LoopBound` and `EventLoop.isOnLoopThread`: loop-owned state reached off the loop's
/// thread traps in debug builds (each trap in a child process: an exit test).
@Suite("Loop discipline", .offThePool)
struct LoopBoundTests {
    /// A loop running on a thread of its own, until `stop()`.
    final class RunningLoop: Sendable {
        let loop: EventLoop
        private let finished = DispatchSemaphore(value: 0)

        init() throws {
            let loop = try EventLoop()
            self.loop = loop
            let started = DispatchSemaphore(value: 0)
            let finished = finished
            Thread {
                loop.execute { started.signal() }
                loop.run(tickMilliseconds: 50)
                finished.signal()
            }.start()
            // The first task runs inside run(), once the thread owns the loop.
            started.wait()
        }

        /// Runs `body` on the loop's thread and returns its result.
        func onLoop<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
            let result = LockedValue<T?>(nil)
            let done = DispatchSemaphore(value: 0)
            loop.execute {
                let value = body()
                result.withLock { $0 = value }
                done.signal()
            }
            done.wait()
            return result.withLock { $0 }!
        }

        func stop() {
            loop.stop()
            finished.wait()
        }
    }

    @Test func theLoopThreadIsTheOneInRun() async throws {
        let loop = try EventLoop()
        #expect(loop.isOnLoopThread, "before the first run, whoever sets the loop up owns it")
        let running = try await offThePool { () throws -> RunningLoop in
            let running = try RunningLoop()
            return running
        }
        #expect(!running.loop.isOnLoopThread, "a test thread is not the loop's")
        let onLoop = await offThePool { running.onLoop { running.loop.isOnLoopThread } }
        #expect(onLoop)
        await offThePool { running.stop() }
        #expect(!running.loop.isOnLoopThread, "the loop stays bound to the thread that ran it")
    }

    @Test func aLoopBoundValueIsReadAndWrittenOnTheLoop() async throws {
        let running = try await offThePool { try RunningLoop() }
        let counter = LoopBound(0, on: running.loop)
        let total = await offThePool { () -> Int in
            for _ in 0..<10 { running.loop.execute { counter.value += 1 } }
            return running.onLoop { counter.value }
        }
        #expect(total == 10)
        await offThePool { running.stop() }
    }

    #if DEBUG
    @Test func readingALoopBoundValueOffTheLoopTraps() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let running = try RunningLoop()
            let bound = LoopBound([1, 2, 3], on: running.loop)
            _ = bound.value.count
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("a LoopBound<Array<Int>> is owned by an event loop and was reached off its thread"),
                "\(message)")
    }

    @Test func registeringOffTheLoopTraps() async throws {
        await #expect(processExitsWith: .failure) {
            let running = try RunningLoop()
            running.loop.unregister(0)
        }
    }

    /// What the audit is for: a closure on another thread (here the test's) that touches the
    /// server's loop-owned state directly, instead of through `loop.execute`, traps.
    @Test func reachingTheServersConnectionsOffTheLoopTraps() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let server = try InProcessServer()
            let client = try server.client()
            // Answered, so the loop runs and owns its state.
            _ = try await client.call(HealthMethods.check, HealthCheckRequest())
            _ = server.server.connections.count
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("is owned by an event loop"), "\(message)")
    }
    #endif

    @Test func theServersStateIsReachableThroughTheLoop() async throws {
        try await withInProcessServer { server in
            let client = try server.client()
            defer { client.close() }
            _ = try await client.call(HealthMethods.check, HealthCheckRequest())
            let count = await offThePool { () -> Int in
                let result = LockedValue(-1)
                let done = DispatchSemaphore(value: 0)
                server.server.loop.execute {
                    result.withLock { $0 = server.server.connections.count }
                    done.signal()
                }
                done.wait()
                return result.withLock { $0 }
            }
            #expect(count == 1)
        }
    }
}
