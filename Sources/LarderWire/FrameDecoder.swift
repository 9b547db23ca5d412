/// Splits a byte stream into frames, incrementally.
///
/// Append bytes as they arrive, then take complete frames with `next()`. A
/// length above `maxFrameSize` is an error before any byte of it is buffered.
public struct FrameDecoder: Sendable {
    /// Why a stream is not valid framing.
    public enum Failure: Error, Equatable, Sendable {
        /// The peer announced a frame larger than the limit.
        case frameTooLarge(length: UInt32, limit: Int)
    }

    public let maxFrameSize: Int
    /// Capacity kept once every buffered frame is consumed; a larger buffer
    /// (a big frame came through) is given back, so an idle connection holds
    /// no more than this.
    public static let retainedCapacity = 64 * 1024
    private var buffer: [UInt8] = []
    private var start = 0

    public init(maxFrameSize: Int = Frame.defaultMaxSize) {
        self.maxFrameSize = maxFrameSize
    }

    /// Bytes received but not yet returned as frames.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Bytes of memory the buffer holds now, used or not.
    public var capacity: Int { buffer.capacity }

    /// The first bytes buffered (up to 4), for diagnosing a peer that speaks another protocol.
    public var bufferedPrefix: [UInt8] { Array(buffer[start..<min(start + 4, buffer.count)]) }

    /// Adds received bytes.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compactIfNeeded()
        buffer.append(contentsOf: bytes)
    }

    /// Adds received bytes.
    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// The length announced by the next frame header, if 4 bytes are buffered.
    public var nextLength: UInt32? { length(at: start) }

    /// True when `next` has a frame to give now, or an oversized header to refuse.
    public var hasWholeFrame: Bool {
        guard let length = nextLength else { return false }
        return Int(length) > maxFrameSize || bufferedByteCount >= Frame.headerSize + Int(length)
    }

    /// The length announced by the frame header at `offset`, if its 4 bytes are buffered.
    private func length(at offset: Int) -> UInt32? {
        guard buffer.count - offset >= Frame.headerSize else { return nil }
        return UInt32(buffer[offset]) << 24 | UInt32(buffer[offset + 1]) << 16
            | UInt32(buffer[offset + 2]) << 8 | UInt32(buffer[offset + 3])
    }

    /// The next complete frame body, or nil when more bytes are needed.
    public mutating func next() throws(Failure) -> [UInt8]? {
        guard let length = nextLength else { return nil }
        guard Int(length) <= maxFrameSize else { throw .frameTooLarge(length: length, limit: maxFrameSize) }
        let end = start + Frame.headerSize + Int(length)
        guard buffer.count >= end else { return nil }
        let body = Array(buffer[(start + Frame.headerSize)..<end])
        start = end
        if start == buffer.count { releaseConsumed() }
        return body
    }

    /// Calls `body` with the next complete frame body, in place (no copy), and
    /// consumes it; returns nil without calling `body` when more bytes are needed.
    public mutating func withNextFrame<R>(_ body: (UnsafeRawBufferPointer) -> R) throws(Failure) -> R? {
        guard let length = nextLength else { return nil }
        guard Int(length) <= maxFrameSize else {
            throw .frameTooLarge(length: length, limit: maxFrameSize)
        }
        let bodyStart = start + Frame.headerSize
        let end = bodyStart + Int(length)
        guard buffer.count >= end else { return nil }
        start = end
        let result = buffer.withUnsafeBytes { raw in
            body(UnsafeRawBufferPointer(rebasing: raw[bodyStart..<end]))
        }
        if start == buffer.count { releaseConsumed() }
        return result
    }

    /// Drops the bytes held (a frame begun that can never be completed: the peer ended its
    /// input) and gives back their memory.
    public mutating func discardBuffered() {
        buffer = []
        start = 0
    }

    /// Drops the trailing frame begun and never to be completed (the peer ended its input),
    /// keeping the whole frames before it (not yet taken); gives the memory back when nothing
    /// is left.
    public mutating func discardPartialFrame() {
        var end = start
        while let length = length(at: end), buffer.count - end - Frame.headerSize >= Int(length) {
            end += Frame.headerSize + Int(length)
        }
        if end == start {
            discardBuffered()
        } else {
            buffer.removeSubrange(end...)
        }
    }

    /// Empties the buffer, keeping its memory only when it is small.
    private mutating func releaseConsumed() {
        buffer.removeAll(keepingCapacity: buffer.capacity <= Self.retainedCapacity)
        start = 0
    }

    private mutating func compactIfNeeded() {
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
    }
}
