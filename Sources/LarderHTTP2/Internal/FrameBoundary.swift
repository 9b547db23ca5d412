/// Where a connection's input stands against HTTP/2's framing (RFC 9113 §3.4, §4.1): inside
/// the client preface or a frame, or between frames. nghttp2 keeps a partial frame to itself;
/// the session tracks the boundaries alongside it, so that a peer trickling a frame byte by
/// byte is seen as holding one open (the server's frame timeout), as a lean peer is.
struct FrameBoundary {
    /// Preface bytes still to come.
    private var prefaceLeft = HTTP2Preface.bytes.count
    /// Bytes of the current frame header seen so far (0-8), and its length field.
    private var headerSeen = 0
    private var length = 0
    /// Payload bytes of the current frame still to come.
    private var payloadLeft = 0

    /// True when the input seen so far ends inside the preface or a frame.
    var isInsideFrame: Bool {
        (prefaceLeft > 0 && prefaceLeft < HTTP2Preface.bytes.count) || headerSeen > 0 || payloadLeft > 0
    }

    /// Follows `bytes`, the next input of the connection: a jump per frame whose header
    /// arrived whole, byte by byte only through a header cut by a read.
    mutating func advance(over bytes: UnsafeRawBufferPointer) {
        let count = bytes.count
        var index = min(prefaceLeft, count)
        prefaceLeft -= index
        while index < count {
            if payloadLeft > 0 {
                let take = min(payloadLeft, count - index)
                payloadLeft -= take
                index += take
            } else if headerSeen == 0 && count - index >= 9 {
                // A frame header (a 24-bit length, then type, flags and stream id).
                payloadLeft = Int(bytes[index]) << 16 | Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
                index += 9
            } else {
                if headerSeen < 3 { length = length << 8 | Int(bytes[index]) }
                headerSeen += 1
                index += 1
                if headerSeen == 9 {
                    payloadLeft = length
                    headerSeen = 0
                    length = 0
                }
            }
        }
    }
}
