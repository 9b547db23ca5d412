/// An HTTP/2 error code (RFC 9113 §7), as carried by RST_STREAM and GOAWAY.
public struct HTTP2ErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let noError = HTTP2ErrorCode(rawValue: 0x0)
    public static let protocolError = HTTP2ErrorCode(rawValue: 0x1)
    public static let internalError = HTTP2ErrorCode(rawValue: 0x2)
    public static let flowControlError = HTTP2ErrorCode(rawValue: 0x3)
    public static let settingsTimeout = HTTP2ErrorCode(rawValue: 0x4)
    public static let streamClosed = HTTP2ErrorCode(rawValue: 0x5)
    public static let frameSizeError = HTTP2ErrorCode(rawValue: 0x6)
    public static let refusedStream = HTTP2ErrorCode(rawValue: 0x7)
    public static let cancel = HTTP2ErrorCode(rawValue: 0x8)
    public static let compressionError = HTTP2ErrorCode(rawValue: 0x9)
    public static let connectError = HTTP2ErrorCode(rawValue: 0xa)
    public static let enhanceYourCalm = HTTP2ErrorCode(rawValue: 0xb)
    public static let inadequateSecurity = HTTP2ErrorCode(rawValue: 0xc)
    public static let http11Required = HTTP2ErrorCode(rawValue: 0xd)

    private static let names = [
        "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT",
        "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR",
        "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED",
    ]

    public var description: String {
        Self.names.indices.contains(Int(rawValue)) ? Self.names[Int(rawValue)] : "0x\(String(rawValue, radix: 16))"
    }
}
