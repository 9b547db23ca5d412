import LarderSystem
import LarderWire

/// Feeds a byte stream to `FrameDecoder` in pieces whose sizes come from the
/// input, taking frames with both `next()` and `withNextFrame`, and checks
/// the frames and the error against a one-shot parse of the whole stream.
///
/// Input: byte 0 picks the maximum frame size, byte 1 seeds the piece sizes,
/// the rest is the stream.
enum FrameFuzzer {
    static let maxFrameSizes = [0, 1, 5, 16, 64, 300, 4096, Frame.defaultMaxSize]

    static func run(_ data: UnsafeRawBufferPointer) throws(FuzzFailure) {
        guard data.count >= 2 else { return }
        let limit = maxFrameSizes[Int(data[0]) % maxFrameSizes.count]
        var random = SplitMix64(seed: UInt64(data[1]))
        let stream = UnsafeRawBufferPointer(rebasing: data[2...])
        let expected = reference(stream, limit: limit)

        var decoder = FrameDecoder(maxFrameSize: limit)
        var frames: [[UInt8]] = []
        var failure: FrameDecoder.Failure?
        var offset = 0
        feeding: while offset < stream.count {
            let piece = min(stream.count - offset, 1 + Int(random.next() % 97))
            decoder.append(UnsafeRawBufferPointer(rebasing: stream[offset..<(offset + piece)]))
            offset += piece
            while true {
                do throws(FrameDecoder.Failure) {
                    let frame: [UInt8]?
                    if frames.count % 2 == 0 {
                        frame = try decoder.next()
                    } else {
                        frame = try decoder.withNextFrame { body in
                            // What the server does with a frame: decode the envelope.
                            _ = try? ProtoCodec.decode(RequestEnvelope.self, from: body)
                            return Array(body)
                        }
                    }
                    guard let frame else { break }
                    frames.append(frame)
                } catch {
                    failure = error
                    break feeding
                }
            }
        }

        guard frames == expected.frames else {
            throw FuzzFailure("frames differ: got \(frames.map(\.count)), expected \(expected.frames.map(\.count))")
        }
        guard failure == expected.failure else {
            throw FuzzFailure("error differs: got \(String(describing: failure)), expected \(String(describing: expected.failure))")
        }
        if failure == nil && decoder.bufferedByteCount != expected.leftover {
            throw FuzzFailure("\(decoder.bufferedByteCount) bytes buffered, expected \(expected.leftover)")
        }
        if decoder.bufferedPrefix.count > 4 { throw FuzzFailure("bufferedPrefix longer than 4 bytes") }
    }

    /// The frames of a whole stream, the error it ends with, and the bytes of
    /// an incomplete last frame.
    static func reference(_ stream: UnsafeRawBufferPointer, limit: Int)
        -> (frames: [[UInt8]], failure: FrameDecoder.Failure?, leftover: Int)
    {
        var frames: [[UInt8]] = []
        var offset = 0
        while stream.count - offset >= 4 {
            let length = stream[offset..<(offset + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            if Int(length) > limit { return (frames, .frameTooLarge(length: length, limit: limit), 0) }
            guard stream.count - offset - 4 >= Int(length) else { break }
            frames.append(Array(stream[(offset + 4)..<(offset + 4 + Int(length))]))
            offset += 4 + Int(length)
        }
        return (frames, nil, stream.count - offset)
    }
}

