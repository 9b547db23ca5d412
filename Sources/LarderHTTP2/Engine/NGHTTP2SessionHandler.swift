/// A received frame, copied out of nghttp2's union into plain values.
struct NGHTTP2Frame {
    /// HTTP/2 frame types (RFC 9113 §6).
    enum Kind: UInt8 {
        case data = 0, headers = 1, priority = 2, rstStream = 3, settings = 4, pushPromise = 5
        case ping = 6, goaway = 7, windowUpdate = 8, continuation = 9
    }

    static let flagEndStream: UInt8 = 0x1
    static let flagAck: UInt8 = 0x1
    static let flagEndHeaders: UInt8 = 0x4
    static let flagPadded: UInt8 = 0x8

    var type: UInt8
    var flags: UInt8
    var streamID: Int32
    var length: Int
    /// RST_STREAM and GOAWAY: the error code.
    var errorCode: UInt32 = 0
    /// GOAWAY: the last stream id.
    var lastStreamID: Int32 = 0
    /// GOAWAY: its debug data, at most 256 bytes (nghttp2 writes why it ends the connection
    /// there). It points into nghttp2's frame: valid only during the handler call it comes with.
    /// (A pointer, not a String, keeps the frame a trivial value: copying it costs no reference
    /// counting on the path of every call.)
    var debugData = UnsafeRawBufferPointer(start: nil, count: 0)
    /// PING: the opaque data, big-endian.
    var pingData: UInt64 = 0
    /// DATA: the bytes of data it carried, its padding (and the Pad Length byte) left out.
    var dataLength = 0
    /// HEADERS: whether this block opens a request (as opposed to trailers).
    var isRequestHeaders = false

    var kind: Kind? { Kind(rawValue: type) }
    var endStream: Bool { flags & Self.flagEndStream != 0 }
    var isAck: Bool { flags & Self.flagAck != 0 }
}

/// What the handler says about a received header field.
enum NGHTTP2HeaderVerdict {
    case accept
    /// Reset this stream (nghttp2 sends RST_STREAM INTERNAL_ERROR) and keep the connection.
    case resetStream
    /// The peer misbehaves: fail the connection.
    case failConnection
}

/// What a handler wrote when nghttp2 asked for the body of a stream.
enum NGHTTP2DataRead {
    /// `count` bytes were written; `endOfData` ends the body, `endStream` also ends the stream
    /// (false when trailers follow, which the handler has submitted).
    case bytes(count: Int, endOfData: Bool, endStream: Bool)
    /// Nothing to send yet: nghttp2 waits for `resumeData`.
    case deferred
}

/// The callbacks of one nghttp2 session, as safe Swift calls: a session's owner subclasses it
/// and overrides what it needs (the defaults accept everything and do nothing). Returning
/// `false` fails the connection (nghttp2 gets NGHTTP2_ERR_CALLBACK_FAILURE).
///
/// A class, not a protocol, so that `NGHTTP2Session` holds it as an `Unmanaged` reference and
/// calls it without retaining and releasing it: a unary call runs ~17 callbacks, and loading
/// an unowned existential for each cost ~750 instructions per call (3 % of a Health/Check).
/// Public only because the public sessions subclass it; nothing outside this module can.
public class NGHTTP2SessionHandler {
    init() {}

    func beginFrame(type: UInt8, flags: UInt8, streamID: Int32, length: Int) -> Bool { true }
    func beginHeaders(_ frame: NGHTTP2Frame) -> Bool { true }
    func header(streamID: Int32, name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> NGHTTP2HeaderVerdict {
        .accept
    }
    func frameReceived(_ frame: NGHTTP2Frame) -> Bool { true }
    func dataChunk(streamID: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool { true }
    func frameSent(_ frame: NGHTTP2Frame) {}
    func streamClosed(streamID: Int32, errorCode: UInt32) {}
    func readData(streamID: Int32, into buffer: UnsafeMutableRawBufferPointer) -> NGHTTP2DataRead {
        .bytes(count: 0, endOfData: true, endStream: true)
    }
    /// nghttp2's text for an error it found (e.g. why it sends a GOAWAY).
    func libraryError(_ message: String) {}
}
