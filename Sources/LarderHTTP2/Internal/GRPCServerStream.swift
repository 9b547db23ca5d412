import LarderWire

/// One request stream's state inside a `GRPCServerSession`.
final class GRPCServerStream {
    enum Phase {
        /// HEADERS are arriving.
        case receivingHeaders
        /// The core has the call (`requestStarted` delivered) and has not sent trailers.
        case active
        /// The response is complete from our side (trailers submitted, by the core or the session).
        case answered
    }

    let id: Int32
    var phase = Phase.receivingHeaders
    /// The request's header fields while they arrive; emptied once parsed.
    var fields: [HTTP2HeaderField] = []
    /// The decoded size of the header block so far (RFC 9113 §6.5.2 accounting).
    var headerListSize = 0
    var head: GRPCRequestHead?
    var deframer: GRPCMessageDeframer
    var clientHalfClosed = false
    /// Response HEADERS submitted (with a body provider).
    var responseStarted = false
    /// Trailers to send once the queued messages are out.
    var pendingTrailers: [HTTP2HeaderField]?
    /// Response bytes not yet handed to nghttp2, in order; `queueOffset` into the first.
    var queue: [[UInt8]] = []
    var queueOffset = 0
    var queuedBytes = 0

    init(id: Int32, maxMessageSize: Int) {
        self.id = id
        deframer = GRPCMessageDeframer(maxMessageSize: maxMessageSize)
        fields.reserveCapacity(12)  // a gRPC request's pseudo-headers and usual fields, without regrowing
    }

    /// Copies queued bytes into `buffer`; returns the count.
    func dequeue(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var written = 0
        while written < buffer.count, let first = queue.first {
            let take = min(first.count - queueOffset, buffer.count - written)
            first.withUnsafeBytes { source in
                let slice = UnsafeRawBufferPointer(rebasing: source[queueOffset..<(queueOffset + take)])
                UnsafeMutableRawBufferPointer(rebasing: buffer[written..<(written + take)]).copyMemory(from: slice)
            }
            written += take
            queueOffset += take
            if queueOffset == first.count {
                queue.removeFirst()
                queueOffset = 0
            }
        }
        queuedBytes -= written
        return written
    }
}
