@testable import LarderServer
import LarderWire
import Testing

/// What parked calls add to the memory budget (`ConnectionUsage.park`).
@Suite("Connection usage: parked calls in the budget")
struct ConnectionUsageTests {
    static func parked(_ bytes: Int, countedAsHeld: Bool) -> ParkedCall {
        ParkedCall(resubmit: {}, abandon: {}, bytes: bytes, countedAsHeld: countedAsHeld)
    }

    /// A lean call waiting for the store is in the budget from its start (`addHeldCalls`);
    /// parking it added its bytes a second time, so refusals came at half the documented use.
    @Test func aParkedLeanCallCountsOnceInTheBudget() {
        let budget = MemoryBudget(limit: 1 << 20, perConnectionLimit: 1 << 16)
        let usage = ConnectionUsage(budget: budget)
        usage.addHeldCalls(2048)
        #expect(usage.park(Self.parked(2048, countedAsHeld: true)))
        #expect(budget.usedBytes == 2048, "held once, not held and parked")
        let taken = usage.takeParkedIfRoom(limit: 8)
        #expect(taken.count == 1)
        #expect(budget.usedBytes == 2048, "still held until its end reaches the loop")
        usage.addHeldCalls(-2048)
        #expect(budget.usedBytes == 0)
    }

    /// An HTTP/2 call's request is counted only while it is parked.
    @Test func aParkedHTTP2CallCountsWhileParked() {
        let budget = MemoryBudget(limit: 1 << 20, perConnectionLimit: 1 << 16)
        let usage = ConnectionUsage(budget: budget)
        #expect(usage.park(Self.parked(4096, countedAsHeld: false)))
        #expect(budget.usedBytes == 4096)
        #expect(usage.closeParking().count == 1)
        #expect(budget.usedBytes == 0)
    }

    /// The cap on what a connection's parked calls hold counts every parked call, lean or not.
    @Test func theParkedBytesCapCountsEveryParkedCall() {
        let budget = MemoryBudget(limit: 1 << 30, perConnectionLimit: 10_000)
        let usage = ConnectionUsage(budget: budget)
        for _ in 0..<3 { #expect(usage.park(Self.parked(4000, countedAsHeld: true))) }
        #expect(usage.storeCallAdmissionError()?.code == .resourceExhausted)
        #expect(usage.closeParking().count == 3)
        #expect(usage.storeCallAdmissionError() == nil)
    }
}
