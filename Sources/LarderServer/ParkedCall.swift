/// A call for the database that came to run while its connection held more than it may
/// (`ConnectionUsage.mustWait`): it waits in `ConnectionUsage`, without running, for the client
/// to read.
struct ParkedCall: Sendable {
    /// Submits the call again (once the connection has room).
    let resubmit: @Sendable () -> Void
    /// Ends the call without running it (the connection closed first): its end frees its slot.
    let abandon: @Sendable () -> Void
    /// What it holds while it waits (its request and context).
    let bytes: Int
    /// True when `bytes` are in the budget already, as a lean call waiting for the store
    /// (`ConnectionUsage.addHeldCalls`): parking counts them only against the parked-bytes cap.
    let countedAsHeld: Bool
}
