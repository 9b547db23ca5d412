import LarderWire
import Synchronization
import LarderSystem

/// The server-wide budget for memory held on behalf of peers: replies produced
/// but not yet written, and request bytes read but not yet decoded (partial
/// frames included), across all connections.
///
/// Updated from the loop and, for replies, from the store threads; read by
/// both when they decide whether a connection may start another call.
final class MemoryBudget: Sendable {
    /// Bytes all connections together may hold before the fattest are held back.
    let limit: Int
    /// Bytes one connection may hold before its new calls are refused, whatever the total.
    let perConnectionLimit: Int
    private let used = Atomic<Int>(0)
    private let connections = Atomic<Int>(0)
    /// Calls refused for a share of the exhausted budget since `takeRefusals`: the budget may be
    /// used up and free again between two of the loop's looks at it.
    private let refusals = Atomic<Int>(0)
    /// Calls parked now, all connections together, and parks since start (the metrics').
    private let parked = Atomic<Int>(0)
    private let parks = Atomic<UInt64>(0)

    init(limit: Int, perConnectionLimit: Int) {
        self.limit = limit
        self.perConnectionLimit = perConnectionLimit
    }

    /// Bytes held now, all connections together.
    var usedBytes: Int { used.load(ordering: .relaxed) }

    /// Open connections sharing the budget.
    var connectionCount: Int { connections.load(ordering: .relaxed) }

    /// True while all connections together hold the whole budget or more.
    var isExhausted: Bool { usedBytes >= limit }

    /// Each connection's fair part of the budget while it is exhausted.
    var share: Int { limit / max(connectionCount, 1) }

    /// Calls refused for the exhausted budget and not yet taken.
    var refusalCount: Int { refusals.load(ordering: .relaxed) }

    /// Counts a call refused because the whole budget was used up.
    func recordRefusal() { refusals.add(1, ordering: .relaxed) }

    /// The refusals counted since the last call, and starts counting again.
    func takeRefusals() -> Int { refusals.exchange(0, ordering: .relaxed) }

    /// Calls waiting now for their connection to read its replies (`ConnectionUsage.park`).
    var parkedCalls: Int { parked.load(ordering: .relaxed) }

    /// Parks since start; a call that waits twice counts twice.
    var parksSinceStart: UInt64 { parks.load(ordering: .relaxed) }

    /// Counts `count` calls parked (negative: resumed or abandoned).
    func parkedCallsChanged(by count: Int) {
        parked.add(count, ordering: .relaxed)
        if count > 0 { parks.add(UInt64(count), ordering: .relaxed) }
    }

    func add(_ bytes: Int) { used.add(bytes, ordering: .relaxed) }
    func remove(_ bytes: Int) { used.subtract(bytes, ordering: .relaxed) }
    func connectionOpened() { connections.add(1, ordering: .relaxed) }
    func connectionClosed() { connections.subtract(1, ordering: .relaxed) }
}

/// One connection's bytes in the `MemoryBudget`, shared with the store threads
/// that produce its replies.
final class ConnectionUsage: Sendable {
    let budget: MemoryBudget
    private let held = Atomic<Int>(0)
    /// What this connection's open HTTP/2 calls hold (their streams' heads): in the server-wide
    /// budget and this connection's share of it, but not in `--max-output-bytes` (a call's own
    /// stream would count against its admission) nor in whether reading waits (reading is how
    /// the client ends those streams).
    private let openCalls = Atomic<Int>(0)
    /// What this connection's lean calls waiting for the store hold (each one's decoded request,
    /// metadata and context, `CallCore.heldBytes(of:)`), from their start until their end reaches
    /// the loop: in the server-wide budget and this connection's share, like `openCalls`, and
    /// still counted after the connection closed, while the store still holds them.
    private let heldCalls = Atomic<Int>(0)

    /// Calls admitted already that found the connection over what it may hold when they came
    /// to run (`mustWait`), oldest first.
    private let parked = LockedValue<[ParkedCall]>([])
    /// Set once the connection closed (`closeParking`): no call parks after that (nobody would
    /// resume it), and calls the store has not started need not run. Set before the parked
    /// calls are taken under `parked`'s lock, and read under it by `park`, so a call either
    /// parks before they are taken or sees it.
    private let closed = Atomic<Bool>(false)
    private let parkedCount = Atomic<Int>(0)
    /// What the parked calls hold: in the server-wide budget and this connection's share, and
    /// capped per connection (`storeCallAdmissionError`): over HTTP/2 a closed flow-control
    /// window does not stop reading, so without the cap a peer could park 1,024 calls of 4 MiB.
    private let parkedBytes = Atomic<Int>(0)
    /// The part of `parkedBytes` parking added to the budget: not that of calls counted as held
    /// already (`ParkedCall.countedAsHeld`), which would otherwise count twice.
    private let parkedBudgetBytes = Atomic<Int>(0)

    init(budget: MemoryBudget) {
        self.budget = budget
        budget.connectionOpened()
    }

    /// True when a call for the database admitted already must wait before it runs: the
    /// connection's unread replies and undecoded requests are over its limit, or over its share
    /// of a used-up budget. Checked when the call comes to run, since calls pipelined at once
    /// were all admitted before any reply existed. It then parks (`park`) instead of failing: a
    /// client reading as fast as it can leaves just-made replies unread too.
    var mustWait: Bool { isOverShare(countingCalls: false) }

    /// Keeps `call` until the connection has room (`takeParkedIfRoom`); false, keeping nothing,
    /// once the connection has closed (the call then ends without running).
    func park(_ call: ParkedCall) -> Bool {
        let kept = parked.withLock { calls in
            guard !closed.load(ordering: .relaxed) else { return false }
            calls.append(call)
            parkedCount.add(1, ordering: .relaxed)
            parkedBytes.add(call.bytes, ordering: .relaxed)
            if !call.countedAsHeld { parkedBudgetBytes.add(call.bytes, ordering: .relaxed) }
            budget.parkedCallsChanged(by: 1)  // under the lock: a take cannot count it first
            return true
        }
        if kept && !call.countedAsHeld { budget.add(call.bytes) }
        return kept
    }

    /// True when calls are parked (a cheap look for the loop before `takeParkedIfRoom`).
    var hasParkedCalls: Bool { parkedCount.load(ordering: .relaxed) > 0 }

    /// Up to `limit` parked calls, oldest first, once the connection holds at most half of its
    /// limit (and of its share, while the budget is used up); none otherwise. The caller submits
    /// them again. A few at a time: calls resumed together may fill the connection again, and
    /// those that then park once more would make the store run them again for nothing.
    func takeParkedIfRoom(limit: Int) -> [ParkedCall] {
        let bytes = bytes
        guard bytes <= budget.perConnectionLimit / 2 && !(budget.isExhausted && bytes > budget.share / 2) else { return [] }
        return takeParked(limit: limit)
    }

    /// Marks the connection closed and takes all its parked calls, to be abandoned.
    func closeParking() -> [ParkedCall] {
        closed.store(true, ordering: .releasing)
        return takeParked(limit: .max)
    }

    /// True once the connection has closed (`closeParking`): a call of it the store has not
    /// started yet need not run (`CallContext.connectionClosed`).
    var isClosed: Bool { closed.load(ordering: .acquiring) }

    private func takeParked(limit: Int) -> [ParkedCall] {
        let taken = parked.withLock { calls -> [ParkedCall] in
            let count = min(limit, calls.count)
            guard count > 0 else { return [] }
            let taken = Array(calls.prefix(count))
            calls.removeFirst(count)
            parkedCount.subtract(count, ordering: .relaxed)
            budget.parkedCallsChanged(by: -count)
            return taken
        }
        let bytes = taken.reduce(0) { $0 + $1.bytes }
        if bytes != 0 { parkedBytes.subtract(bytes, ordering: .relaxed) }
        let budgeted = taken.reduce(0) { $0 + ($1.countedAsHeld ? 0 : $1.bytes) }
        if budgeted != 0 {
            parkedBudgetBytes.subtract(budgeted, ordering: .relaxed)
            budget.add(-budgeted)
        }
        return taken
    }

    /// RESOURCE_EXHAUSTED when a new call for the database may not start on this connection:
    /// its parked calls hold more than `--max-output-bytes`, or the budget is used up and the
    /// connection holds more than its share. (Unread replies alone do not refuse it: it parks.)
    func storeCallAdmissionError() -> RPCError? {
        let parkedBytes = parkedBytes.load(ordering: .relaxed)
        if parkedBytes > budget.perConnectionLimit {
            return RPCError(.resourceExhausted,
                            "this connection has \(parkedBytes) bytes of calls waiting for room, for it to read its replies "
                                + "or for the requests it is still sending to arrive (limit \(budget.perConnectionLimit), "
                                + "--max-output-bytes); read the replies, or send fewer large requests at once, before sending more calls")
        }
        return admissionError(perConnection: false)
    }

    /// Bytes this connection holds now.
    var bytes: Int { held.load(ordering: .relaxed) }

    /// Everything this connection holds in the budget: its bytes, its open calls' streams, its
    /// calls waiting for the store and its parked calls.
    var budgetedBytes: Int {
        bytes + openCalls.load(ordering: .relaxed) + heldCalls.load(ordering: .relaxed)
            + parkedBudgetBytes.load(ordering: .relaxed)
    }

    /// What its open HTTP/2 calls hold: about what ending its streams gives back (a unary
    /// call's stream counts too, `Server.shedOverBudget`).
    var openCallBytes: Int { openCalls.load(ordering: .relaxed) }

    func add(_ count: Int) {
        guard count != 0 else { return }
        held.add(count, ordering: .relaxed)
        budget.add(count)
    }

    func remove(_ count: Int) { add(-count) }

    /// Changes what the connection's open HTTP/2 calls hold by `count` bytes.
    func addOpenCalls(_ count: Int) {
        guard count != 0 else { return }
        openCalls.add(count, ordering: .relaxed)
        budget.add(count)
    }

    /// Changes what the connection's lean calls waiting for the store hold by `count` bytes.
    func addHeldCalls(_ count: Int) {
        guard count != 0 else { return }
        heldCalls.add(count, ordering: .relaxed)
        budget.add(count)
    }

    /// Gives back the `bytes` the closing connection held on the loop (its open calls'
    /// too) and leaves the budget. Replies still queued for it are given back as the loop
    /// drops them.
    func release(_ bytes: Int) {
        remove(bytes)
        addOpenCalls(-openCalls.load(ordering: .relaxed))
        budget.connectionClosed()
    }

    /// True when this connection holds more than it may: over the per-connection limit, or
    /// over its share while the whole budget is used up; `countingCalls`: what its calls in
    /// flight hold counts toward the share too (for admitting a new call, not for one already
    /// admitted, which would then be refused for its own bytes).
    func isOverShare(countingCalls: Bool, perConnection: Bool = true) -> Bool {
        let bytes = bytes
        let calls = countingCalls
            ? openCalls.load(ordering: .relaxed) + heldCalls.load(ordering: .relaxed)
                + parkedBudgetBytes.load(ordering: .relaxed) : 0
        return (perConnection && bytes > budget.perConnectionLimit) || (budget.isExhausted && bytes + calls > budget.share)
    }

    /// True when the whole budget is used up and this connection holds more than its share:
    /// reading from it waits (partial frames count too).
    var mustHoldInput: Bool { budget.isExhausted && bytes > budget.share }

    /// RESOURCE_EXHAUSTED when this connection may not start another call now; with
    /// `perConnection` false, only when the whole budget is used up and it holds more than its
    /// share (a call for the store, which waits for room instead: `mustWait`).
    func admissionError(countingCalls: Bool = true, perConnection: Bool = true) -> RPCError? {
        guard isOverShare(countingCalls: countingCalls, perConnection: perConnection) else { return nil }
        // Counted for the budget's log line only when the share, not the per-connection limit, refused it.
        if budget.isExhausted && bytes <= budget.perConnectionLimit { budget.recordRefusal() }
        let open = openCalls.load(ordering: .relaxed)
        let held = heldCalls.load(ordering: .relaxed)
        return RPCError(.resourceExhausted,
                        "this connection holds \(bytes) bytes of unread replies and undecoded requests"
                            + (open > 0 ? " and \(open) bytes of open calls' headers" : "")
                            + (held > 0 ? " and \(held) bytes of calls waiting for the database" : "")
                            + " (limit \(budget.perConnectionLimit), --max-output-bytes; server-wide budget \(budget.limit), "
                            + "--memory-budget-bytes); read the replies, or end some calls, before sending more")
    }
}
