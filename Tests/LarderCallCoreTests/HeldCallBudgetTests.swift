#if canImport(Glibc)
import Glibc
#endif
import LarderAPI
@testable import LarderServer
import LarderWire
import Testing
import LarderTestSupport

/// Lean calls waiting for the store hold their request, metadata and context: they count in the
/// memory budget from their start until their end reaches the loop (`ConnectionUsage.addHeldCalls`).
/// Before, 200 connections × 1,024 queued calls with 7 KB of metadata held 1.6 GB against a
/// 256 MiB budget, and none was refused.
@Suite(.offThePool) struct HeldCallBudgetTests {
    static let getPath = LocationMethods.getLocation.path

    static func loop(_ store: HeldStore, budget: MemoryBudget) throws -> TestLoop {
        try TestLoop(store: store, budget: budget) { router in
            router.read(LocationMethods.getLocation) { request, _ throws(RPCError) in Location(id: request.id, name: "x") }
        }
    }

    @Test func callsWaitingForTheStoreCountUntilTheirEnd() throws {
        let store = HeldStore()
        let loop = try Self.loop(store, budget: MemoryBudget(limit: 1 << 26, perConnectionLimit: 1 << 24))
        let lean = loop.connect(streaming: false)
        let payloads = [ProtoCodec.encode(GetLocationRequest(id: "a")),
                        ProtoCodec.encode(GetLocationRequest(id: String(repeating: "b", count: 5000)))]
        for (index, payload) in payloads.enumerated() {
            loop.start(Self.getPath, callID: UInt64(index + 1), on: lean, payload: payload)
        }
        let held = payloads.reduce(0) { $0 + $1.count + 1024 }
        #expect(store.heldCount == 2)
        #expect(loop.budget.usedBytes == held)
        // An HTTP/2 connection counts its calls' streams itself: the core adds nothing for them.
        let http2 = loop.connect(streaming: true)
        loop.start(Self.getPath, callID: 1, on: http2, payload: ProtoCodec.encode(GetLocationRequest(id: "c")))
        #expect(store.heldCount == 3 && loop.budget.usedBytes == held)

        store.release()
        #expect(loop.received(by: lean) { $0.count == 2 }.count == 2)
        for _ in 0..<3000 where loop.budget.usedBytes != 0 { usleep(10_000) }
        #expect(loop.budget.usedBytes == 0, "given back once their ends reached the loop")
    }

    @Test func aConnectionOverItsShareOfAnExhaustedBudgetIsRefusedNewCalls() throws {
        let store = HeldStore()
        let loop = try Self.loop(store, budget: MemoryBudget(limit: 64 * 1024, perConnectionLimit: 1 << 24))
        let lean = loop.connect(streaming: false)
        let payload = ProtoCodec.encode(GetLocationRequest(id: String(repeating: "d", count: 6000)))
        // 64 KiB hold 9 such calls (7 KiB each); the 10th exhausts the budget, the 11th is refused.
        for callID in UInt64(1)...11 { loop.start(Self.getPath, callID: callID, on: lean, payload: payload) }
        #expect(store.heldCount == 10)
        let refusal = loop.sync { lean.received }
        #expect(refusal.count == 1)
        guard case .reply(11, .resourceExhausted, let message, _) = refusal.first else {
            Issue.record("expected call 11 refused RESOURCE_EXHAUSTED, got \(refusal)")
            return
        }
        #expect(message.contains("\(10 * (payload.count + 1024)) bytes of calls waiting for the database"), "\(message)")
        // The ten admitted run and succeed: what they hold was judged at their admission, and is
        // not held against them again when they start to run.
        store.release()
        let answers = loop.received(by: lean) { $0.count == 11 }.dropFirst()
        #expect(answers.count == 10)
        #expect(answers.allSatisfy { if case .reply(_, .ok, _, _) = $0 { true } else { false } }, "\(answers)")
        // Once the store answered them, calls are admitted again.
        for _ in 0..<3000 where loop.budget.usedBytes != 0 { usleep(10_000) }
        loop.start(Self.getPath, callID: 12, on: lean, payload: payload)
        #expect(store.heldCount == 1)
        store.release()
    }
}

/// The budget counts the calls refused while it is used up, so the loop's tick logs an
/// exhaustion that filled and freed between two looks (`memory_budget_exhausted`, `calls_refused`).
@Suite struct MemoryBudgetRefusalTests {
    @Test func refusalsForTheExhaustedBudgetAreCountedUntilTaken() {
        let budget = MemoryBudget(limit: 1000, perConnectionLimit: 10_000)
        let greedy = ConnectionUsage(budget: budget)
        let modest = ConnectionUsage(budget: budget)
        greedy.add(900)
        #expect(greedy.admissionError() == nil, "the budget is not used up yet")
        modest.add(200)
        #expect(budget.isExhausted)
        #expect(greedy.admissionError() != nil, "over its share (500) of the exhausted budget")
        #expect(modest.admissionError() == nil, "within its share")
        #expect(greedy.admissionError(countingCalls: false) != nil)
        #expect(budget.refusalCount == 2)
        greedy.remove(900)
        #expect(!budget.isExhausted)
        #expect(budget.takeRefusals() == 2, "still there once the budget is free again")
        #expect(budget.takeRefusals() == 0)
        // Over the per-connection limit alone is not the budget's exhaustion.
        let single = MemoryBudget(limit: 1 << 20, perConnectionLimit: 100)
        let big = ConnectionUsage(budget: single)
        big.add(200)
        #expect(big.admissionError() != nil && single.refusalCount == 0)
        // Nor while the budget is exhausted too: the per-connection limit refused it.
        let both = MemoryBudget(limit: 300, perConnectionLimit: 100)
        let over = ConnectionUsage(budget: both)
        over.add(300)
        #expect(both.isExhausted && over.admissionError() != nil && both.refusalCount == 0)
    }
}
