#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CLarderSystem
import LarderSystem
import Synchronization
import Testing

@Suite("SystemThread")
struct SystemThreadTests {
    @Test("join waits for the body, which ran on another thread")
    func joinWaitsForTheBody() {
        let ran = Atomic<Int>(0)
        let callerThread = pthread_self()
        let onOtherThread = Atomic<Bool>(false)
        let thread = SystemThread(name: "test-join") {
            // Long enough that a join that did not wait would see 0.
            usleep(100_000)
            onOtherThread.store(pthread_equal(pthread_self(), callerThread) == 0, ordering: .relaxed)
            ran.add(1, ordering: .releasing)
        }
        thread.join()
        let runs = ran.load(ordering: .acquiring)
        #expect(runs == 1)
        let wasOnOtherThread = onOtherThread.load(ordering: .relaxed)
        #expect(wasOnOtherThread)
        thread.join()  // a second join returns at once
        let runsAfterSecondJoin = ran.load(ordering: .acquiring)
        #expect(runsAfterSecondJoin == 1)
    }

    @Test("the thread carries its name, cut to Linux's 15 bytes")
    func name() {
        let seen = LockedValue<String>("")
        let thread = SystemThread(name: "larder-a-rather-long-name") {
            let name = SystemThread.currentName
            seen.withLock { $0 = name }
        }
        thread.join()
        let name = seen.withLock { $0 }
        #if canImport(Glibc)
        #expect(name == "larder-a-rather")
        #else
        #expect(name == "larder-a-rather-long-name")
        #endif
    }

    @Test("a stack size is applied")
    func stackSize() {
        let size = Atomic<Int>(0)
        let thread = SystemThread(name: "test-stack", stackSize: 64 << 20) {
            size.store(Int(clarder_current_thread_stack_size()), ordering: .releasing)
        }
        thread.join()
        let bytes = size.load(ordering: .acquiring)
        #expect(bytes >= 64 << 20)
    }

    @Test("dropped without a join, the thread still runs to the end (detached)")
    func detachedWhenDropped() async throws {
        let done = Atomic<Bool>(false)
        do {
            _ = SystemThread(name: "test-detach") { done.store(true, ordering: .releasing) }
        }
        // Generous bound for a loaded machine; normally a few microseconds.
        for _ in 0..<3000 where !done.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(10)) }
        let finished = done.load(ordering: .acquiring)
        #expect(finished)
    }

    @Test("ThreadCondition hands a value from one thread to another")
    func condition() {
        let condition = ThreadCondition()
        let box = LockedValue<Int?>(nil)
        let thread = SystemThread(name: "test-cond") {
            condition.withLock { box.withLock { $0 = 42 } }
            condition.signal()
        }
        condition.lock()
        while box.withLock({ $0 }) == nil { condition.wait() }
        condition.unlock()
        thread.join()
        let value = box.withLock { $0 }
        #expect(value == 42)
    }

    @Test("a thread's timer slack is its own")
    func timerSlack() {
        let seen = LockedValue<(Int?, Int?)>((nil, nil))
        let thread = SystemThread(name: "test-slack") {
            let before = SystemThread.currentTimerSlack
            SystemThread.setCurrentTimerSlack(nanoseconds: 1234)
            seen.withLock { $0 = (before, SystemThread.currentTimerSlack) }
        }
        thread.join()
        let (before, after) = seen.withLock { $0 }
        #expect(before != nil && before != 1234, "inherited (Linux's default is 50,000)")
        #expect(after == 1234)
        #expect(SystemThread.currentTimerSlack != 1234, "another thread's setting")
    }
}
