#if canImport(Glibc)
import Glibc
#endif

/// The limits of one HTTP/2 server session. Defaults follow gRPC servers where they have one.
public struct GRPCServerConfiguration: Sendable {
    /// SETTINGS_MAX_CONCURRENT_STREAMS: calls in flight per connection; more are refused
    /// (RST_STREAM REFUSED_STREAM).
    public var maxConcurrentStreams: UInt32 = 100
    /// SETTINGS_MAX_HEADER_LIST_SIZE, enforced: a request whose headers decode to more is
    /// answered RESOURCE_EXHAUSTED.
    public var maxHeaderListSize = 8 * 1024
    /// A header block decoding to more than this many times `maxHeaderListSize`, and to more
    /// than `headerBombRatio` times its own size on the wire, fails the connection (an HPACK
    /// bomb), as does one split into more than `maxContinuationFrames` CONTINUATIONs. A big
    /// block that is not a bomb (large metadata) only fails its call (RESOURCE_EXHAUSTED).
    public var headerBombFactor = 4
    /// How many times its wire size a header block must decode to, past `headerBombFactor`, to be a bomb.
    public var headerBombRatio = 8
    /// CONTINUATION frames accepted after one HEADERS frame.
    public var maxContinuationFrames = 8
    /// SETTINGS_HEADER_TABLE_SIZE: the HPACK table the peer may make us keep.
    public var headerTableSize: UInt32 = 4096
    /// The HPACK table of our own encoder (what the peer keeps for our headers).
    public var encoderTableSize = 4096
    /// SETTINGS_INITIAL_WINDOW_SIZE: bytes a client may send on one stream before we consume them.
    public var initialWindowSize: UInt32 = 1024 * 1024
    /// The connection-level receive window.
    public var connectionWindowSize: UInt32 = 4 * 1024 * 1024
    /// The largest request message, in bytes, compressed or once inflated; a larger one is
    /// answered RESOURCE_EXHAUSTED.
    public var maxMessageSize = 4 * 1024 * 1024
    /// What the compressed messages of one read may inflate to in all (they are all held until
    /// the read's events are handled): a message that would go past it is answered
    /// RESOURCE_EXHAUSTED. Bounds what a few bytes of gzip can make the server hold.
    public var maxDecompressedBytesPerRead = 8 * 1024 * 1024
    /// What compressed messages may inflate to on one connection, in all: this many bytes for
    /// each byte the connection sent, plus `initialInflateBytes`. Bounds the CPU a peer can make
    /// the server spend inflating to a multiple of what it sends (a gzip bomb inflates ~1,000×);
    /// a message past it is answered RESOURCE_EXHAUSTED, before it is inflated any further.
    public var inflateBytesPerReceivedByte = 32
    /// The inflating a connection may do before it has sent much (see `inflateBytesPerReceivedByte`).
    public var initialInflateBytes = 256 * 1024
    /// PINGs closer together than this without data from us between them are strikes.
    public var minPingIntervalNanoseconds: UInt64 = 300_000_000_000
    /// More strikes than this: GOAWAY ENHANCE_YOUR_CALM "too_many_pings".
    public var maxPingStrikes = 2
    /// RST_STREAM from the client on streams whose request was not started yet: token bucket
    /// (rapid reset, CVE-2023-44487).
    public var resetBurst = 200
    public var resetsPerSecond = 50
    /// RST_STREAM from the client on calls already started (or answered, the answer not yet
    /// sent): a bucket of its own, far larger, since clients cancel such calls in bulk for good
    /// reasons (deadlines expiring together, an application cancelling its streams: up to every
    /// call in flight at once). A reset call keeps its slot until its handler ends, which bounds
    /// the work in flight but not its rate: without this, opening and resetting bidirectional
    /// streams (or unary ones just after their half-close) ran a million calls a second.
    /// Past the bucket a reset is taken on credit and the server holds its reads until the bucket
    /// refills (`GRPCServerSession.takeReadHold`); owing a whole `startedResetBurst` more is
    /// GOAWAY ENHANCE_YOUR_CALM. (The session raises both to at least 2 × and 1 × `maxConcurrentStreams`.)
    public var startedResetBurst = 2048
    public var startedResetsPerSecond = 1000
    /// Messages on calls that stream their requests (the standard reflection), after the call
    /// started: token bucket. Each is answered on the event loop; without a bound one read of
    /// 8-byte `list_services` requests (up to 65,000 a loop turn) held the loop for a second,
    /// again and again, and other clients' calls waited (audit 32 F3). grpcurl sends a few.
    public var streamMessageBurst = 1000
    public var streamMessagesPerSecond = 500
    /// SETTINGS frames from the client: token bucket.
    public var settingsBurst = 100
    public var settingsPerSecond = 10
    /// Frames that carry no work (PRIORITY; DATA without END_STREAM that is empty or only padding): token bucket.
    public var idleFrameBurst = 1000
    public var idleFramesPerSecond = 100
    /// Queued SETTINGS and PING acknowledgements the peer has not read before nghttp2 calls it a flood.
    public var maxOutboundAcks = 1000
    /// A monotonic clock in nanoseconds; tests pass their own.
    public var clock: @Sendable () -> UInt64 = { monotonicNanoseconds() }

    public init() {}
}

/// CLOCK_MONOTONIC in nanoseconds.
func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
}
