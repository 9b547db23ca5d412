/// A call for the database that came to run while its connection held more than it may
/// (`ConnectionUsage.mustWait`): it waits in `ConnectionUsage`, without running, for the client
/// to read.
struct ParkedCall: Sendable {
    /// Submits the call again (once the connection has room).
    let resubmit: @Sendable () -> Void
    /// Ends the call without running it (the connection closed first): its end frees its slot.
    let abandon: @Sendable () -> Void
    /// What it holds while it waits, as the memory budget counts it (its request and context).
    let bytes: Int
}
