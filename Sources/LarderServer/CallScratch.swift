import LarderWire

/// Memory the event loop reuses from call to call: the arena requests are
/// unpacked in, and the arena and buffer inline replies are built in. Saves
/// a handful of mallocs per call. Loop thread only.
final class CallScratch {
    /// Where request envelopes and requests are unpacked, within `DecodeLimits.server`.
    let unpack = UnpackArena(limits: .server)
    /// Where inline replies are built as C structs; reset after each.
    let build = CArena()
    /// The encoded reply of the inline call that just ran.
    var reply: [UInt8] = []
}
