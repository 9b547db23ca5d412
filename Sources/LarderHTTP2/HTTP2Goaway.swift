/// A GOAWAY frame a client session received: the last stream the server will process, and why.
public struct HTTP2Goaway: Sendable, Equatable {
    public var lastStreamID: Int32
    public var code: HTTP2ErrorCode

    public init(lastStreamID: Int32, code: HTTP2ErrorCode) {
        self.lastStreamID = lastStreamID
        self.code = code
    }
}
