import LarderSystem
import Testing

@Suite("LockedValue")
struct LockedValueTests {
    /// Four threads contending for one lock: no update is lost, and (run under ThreadSanitizer
    /// by scripts/test.sh, with no suppressions) no race is reported, which
    /// `Synchronization.Mutex` could not promise: its contended hand-over is invisible to TSan.
    @Test func contendedUpdatesAreAllKept() {
        let shared = LockedValue<[Int]>([])
        let threads = (0..<4).map { thread in
            SystemThread(name: "locked-\(thread)") {
                for index in 0..<20_000 { shared.withLock { $0.append(thread * 100_000 + index) } }
            }
        }
        for thread in threads { thread.join() }
        let values = shared.withLock { $0 }
        #expect(values.count == 80_000)
        #expect(Set(values).count == 80_000)
    }

    /// A typed error thrown inside the lock comes out as is, and the lock is free again after it.
    @Test func aThrownErrorLeavesTheLockFree() {
        struct Refused: Error, Equatable {}
        let shared = LockedValue(1)
        #expect(throws: Refused()) { try shared.withLock { (value: inout Int) throws(Refused) in
            value = 2
            throw Refused()
        } }
        #expect(shared.withLock { $0 } == 2)
    }
}
