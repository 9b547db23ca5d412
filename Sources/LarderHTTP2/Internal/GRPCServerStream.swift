import LarderWire

/// One request stream's state inside a `GRPCServerSession`.
final class GRPCServerStream {
    enum Phase {
        /// HEADERS are arriving.
        case receivingHeaders
        /// A call whose request is delivered whole (`GRPCServerSession.deliversWholeRequest`):
        /// its message is held until the client half-closes. The core knows nothing of it yet.
        case collecting
        /// The core has the call (`requestStarted` or `request` delivered) and has not sent trailers.
        case active
        /// The response is complete from our side (trailers submitted, by the core or the session).
        case answered
    }

    /// The trailers that end a response once its messages are out.
    enum Trailers {
        /// `grpc-status: 0` alone, from prebuilt storage.
        case ok
        case fields([HTTP2HeaderField])
    }

    let id: Int32
    var phase = Phase.receivingHeaders
    /// The decoded size of the header block so far (RFC 9113 §6.5.2 accounting).
    var headerListSize = 0
    var head: GRPCRequestHead?
    var deframer: GRPCMessageDeframer
    var clientHalfClosed = false
    /// The request message of a `collecting` call, once it came.
    var heldMessage: [UInt8]?
    /// While `collecting`: the decoded size of its request head, which the session holds (and
    /// counts in `GRPCServerSession.bufferedInputBytes`) until the request is delivered.
    var heldHeadBytes = 0
    /// Once the core has the call: what the open stream holds until it closes (its head, whose
    /// metadata stays with the call, and the stream's own state), counted in
    /// `GRPCServerSession.openCallBytes`.
    var openCallBytes = 0
    /// The encoding replies are compressed with (the request's, when the client accepts it);
    /// nil for uncompressed replies.
    var replyEncoding: GRPCMessageEncoding?
    /// Response HEADERS submitted (with a body provider).
    var responseStarted = false
    /// Trailers to send once the queued messages are out.
    var pendingTrailers: Trailers?
    /// Response bytes not yet handed to nghttp2, in order: `first` from `firstOffset`, then
    /// `rest` (empty for a unary reply, so a one-message response needs no array of arrays).
    private var first: [UInt8] = []
    private var firstOffset = 0
    private var rest: [[UInt8]] = []
    private var restIndex = 0
    private(set) var queuedBytes = 0

    init(id: Int32, maxMessageSize: Int) {
        self.id = id
        deframer = GRPCMessageDeframer(maxMessageSize: maxMessageSize)
    }

    var isQueueEmpty: Bool { queuedBytes == 0 }

    /// Queues `bytes` from `offset` on (the part already framed as gRPC messages).
    func enqueue(_ bytes: [UInt8], from offset: Int) {
        let count = bytes.count - offset
        guard count > 0 else { return }
        queuedBytes += count
        if firstOffset == first.count && rest.isEmpty {
            first = bytes
            firstOffset = offset
        } else {
            // Rare (a stream message while a previous one waits): the offset is applied now.
            rest.append(offset == 0 ? bytes : Array(bytes[offset...]))
        }
    }

    /// Copies queued bytes into `buffer`; returns the count.
    func dequeue(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var written = 0
        while written < buffer.count {
            if firstOffset == first.count {
                guard restIndex < rest.count else { break }
                first = rest[restIndex]
                firstOffset = 0
                rest[restIndex] = []
                restIndex += 1
                if restIndex == rest.count {
                    rest.removeAll()
                    restIndex = 0
                }
                continue
            }
            let take = min(first.count - firstOffset, buffer.count - written)
            first.withUnsafeBytes { source in
                let slice = UnsafeRawBufferPointer(rebasing: source[firstOffset..<(firstOffset + take)])
                UnsafeMutableRawBufferPointer(rebasing: buffer[written..<(written + take)]).copyMemory(from: slice)
            }
            written += take
            firstOffset += take
        }
        if firstOffset == first.count && !first.isEmpty {
            first = []
            firstOffset = 0
        }
        queuedBytes -= written
        return written
    }
}
