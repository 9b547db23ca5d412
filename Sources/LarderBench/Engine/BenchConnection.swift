import LarderHTTP2

/// One TCP connection of a load loop and the calls it has in flight.
///
/// Calls occupy slots `0..<depth`; a call id is `sequence << 20 | (slot + 1)`,
/// so a reply finds its slot without a lookup table. Not thread-safe: owned
/// by one `LoadLoop`.
final class BenchConnection {
    static let slotBits: UInt64 = 20
    static let slotMask: UInt64 = (1 << slotBits) - 1
    static let maxDepth = Int(slotMask)

    let fd: Int32
    let depth: Int
    var input = ByteBuffer(capacity: 64 * 1024)
    var output = ByteBuffer(capacity: 16 * 1024)
    /// Call id in flight per slot; 0 = free.
    var callIDs: [UInt64]
    /// Intended send time per slot (the schedule's, for open loop).
    var intendedTimes: [UInt64]
    /// Actual send time per slot.
    var sentTimes: [UInt64]
    /// Workload group per slot (an index into the loop's picker).
    var groups: [UInt8]
    /// Free slots (open loop).
    var freeSlots: [Int]
    var inFlight = 0
    var nextSequence: UInt64 = 1
    var isOpen = true
    /// Set when the last write did not take everything (wait until writable).
    var wantsWritable = false
    /// Index among its loop's connections.
    var position = 0
    /// `--protocol grpc`: the HTTP/2 session whose streams carry the calls (a stream's tag is its slot).
    let http2: GRPCLoadClientSession?
    /// `--tls`: the connection's TLS session; `input` and `output` then hold plaintext.
    let tls: BenchTLSLink?

    init(fd: Int32, depth: Int, http2: GRPCLoadClientSession? = nil, tls: BenchTLSLink? = nil) {
        precondition(depth >= 1 && depth <= Self.maxDepth, "depth \(depth) out of range")
        self.fd = fd
        self.depth = depth
        self.http2 = http2
        self.tls = tls
        callIDs = [UInt64](repeating: 0, count: depth)
        intendedTimes = [UInt64](repeating: 0, count: depth)
        sentTimes = [UInt64](repeating: 0, count: depth)
        groups = [UInt8](repeating: 0, count: depth)
        freeSlots = Array((0..<depth).reversed())
    }

    deinit {
        input.deallocate()
        output.deallocate()
        if isOpen { TCPSocket.close(fd) }
    }

    /// Whether there are bytes to write: in the output buffer, frames the HTTP/2 session has
    /// ready, or ciphertext the TLS session has.
    var hasOutput: Bool { !output.isEmpty || http2?.wantsWrite == true || tls?.hasOutput == true }

    /// Appends `bytes` to the input (plaintext decrypted by TLS).
    func appendInput(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        input.reserve(bytes.count)
        bytes.withUnsafeBytes { raw in (input.base + input.end).copyMemory(from: raw.baseAddress!, byteCount: raw.count) }
        input.end += bytes.count
    }

    /// A new call id for `slot`.
    func makeCallID(slot: Int) -> UInt64 {
        let id = (nextSequence << Self.slotBits) | UInt64(slot + 1)
        nextSequence &+= 1
        if nextSequence >= (1 << (64 - Self.slotBits)) { nextSequence = 1 }
        return id
    }

    /// The slot a reply's call id names, if that call is in flight here.
    func slot(for callID: UInt64) -> Int? {
        let slot = Int(truncatingIfNeeded: callID & Self.slotMask) - 1
        guard slot >= 0, slot < depth, callIDs[slot] == callID else { return nil }
        return slot
    }

    func closeSocket() {
        if isOpen {
            TCPSocket.close(fd)
            isOpen = false
        }
    }
}
