import LarderWire
import Testing

@Suite("FrameDecoder")
struct FrameDecoderTests {
    static let bodies: [[UInt8]] = [[], [0x2A], Array("こんにちは".utf8), (0..<300).map { UInt8(truncatingIfNeeded: $0) }]

    private func drain(_ decoder: inout FrameDecoder) throws -> [[UInt8]] {
        var frames: [[UInt8]] = []
        while let frame = try decoder.next() {
            frames.append(frame)
            if frames.count > 1000 { break }
        }
        return frames
    }

    @Test("bytes delivered one at a time give every frame exactly once")
    func byteByByte() throws {
        var stream: [UInt8] = []
        for body in Self.bodies { Frame.append(body, to: &stream) }
        var decoder = FrameDecoder()
        var frames: [[UInt8]] = []
        for byte in stream {
            decoder.append([byte])
            frames += try drain(&decoder)
        }
        #expect(frames == Self.bodies)
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test("several frames in one append")
    func severalInOneAppend() throws {
        var stream: [UInt8] = []
        for body in Self.bodies { Frame.append(body, to: &stream) }
        // Plus the first half of one more frame.
        let partial = Frame.encode([1, 2, 3, 4, 5, 6])
        stream += partial[..<5]
        var decoder = FrameDecoder()
        decoder.append(stream)
        #expect(try drain(&decoder) == Self.bodies)
        #expect(decoder.bufferedByteCount == 5)
        #expect(decoder.nextLength == 6)
        decoder.append(Array(partial[5...]))
        #expect(try decoder.next() == [1, 2, 3, 4, 5, 6])
        #expect(try decoder.next() == nil)
    }

    @Test("a header is big-endian")
    func header() throws {
        #expect(Frame.encode([0xAB]) == [0, 0, 0, 1, 0xAB])
        var header: [UInt8] = []
        Frame.appendHeader(length: try #require(FrameLength(exactly: 0x0102_0304)), to: &header)
        #expect(header == [1, 2, 3, 4])
    }

    @Test("a frame length is made only from a count the prefix holds")
    func frameLengthFitsThePrefix() {
        #expect(FrameLength(exactly: Int(UInt32.max))?.value == UInt32.max)
        #expect(FrameLength(exactly: Int(UInt32.max) + 1) == nil)
        #expect(FrameLength(exactly: -1) == nil)
        #expect(FrameLength(exactly: 1025, limit: 1024) == nil)
        #expect(FrameLength(exactly: 1024, limit: 1024)?.value == 1024)
        // Every decoder refuses the prefix an unframeable body gets.
        var decoder = FrameDecoder(maxFrameSize: 1 << 30)
        var header: [UInt8] = []
        Frame.appendHeader(length: .unframeable, to: &header)
        decoder.append(header)
        #expect(throws: FrameDecoder.Failure.frameTooLarge(length: UInt32.max, limit: 1 << 30)) { try decoder.next() }
    }

    @Test("a reply larger than the frame limit becomes RESOURCE_EXHAUSTED for that call")
    func oversizeReplyIsRefused() throws {
        var buffer: [UInt8] = []
        ResponseFrame.append(callID: 7, code: .ok, message: "", payload: [UInt8](repeating: 1, count: 2000),
                             maxSize: 1024, to: &buffer)
        var decoder = FrameDecoder(maxFrameSize: 1024)
        decoder.append(buffer)
        let body = try #require(try decoder.next())
        let envelope = try ProtoCodec.decode(ResponseEnvelope.self, from: body)
        #expect(envelope.callID == 7)
        #expect(envelope.statusCode == .resourceExhausted)
        #expect(envelope.statusMessage == ResponseFrame.tooLargeMessage(replyBytes: 2005, limit: 1024))
        #expect(envelope.statusMessage.hasPrefix("the reply is 2005 bytes, more than the 1024 bytes a reply frame may hold"))
        #expect(envelope.statusMessage.contains("with a page_size on a List call (then follow next_page_token)"))
        #expect(try decoder.next() == nil)

        // Within the limit, the reply is sent as it is.
        buffer.removeAll()
        ResponseFrame.append(callID: 8, code: .ok, message: "", payload: [1, 2, 3], maxSize: 1024, to: &buffer)
        decoder.append(buffer)
        let ok = try ProtoCodec.decode(ResponseEnvelope.self, from: try #require(try decoder.next()))
        #expect(ok.statusCode == .ok && ok.payload == [1, 2, 3])
    }

    @Test("append returns the refusal it sent instead of a reply, at the limit's exact byte")
    func appendReturnsItsRefusal() throws {
        // Envelope: call id 7 (2 bytes), payload tag + 2-byte length + the payload.
        let fits = [UInt8](repeating: 1, count: 1024 - 5)
        var buffer: [UInt8] = []
        #expect(ResponseFrame.append(callID: 7, code: .ok, message: "", payload: fits, maxSize: 1024, to: &buffer) == nil)
        #expect(buffer.count == 4 + 1024, "sent as it is")

        buffer.removeAll()
        let refusal = try #require(ResponseFrame.append(callID: 7, code: .ok, message: "", payload: fits + [1],
                                                        maxSize: 1024, to: &buffer))
        var decoder = FrameDecoder(maxFrameSize: 1024)
        decoder.append(buffer)
        let sent = try ProtoCodec.decode(ResponseEnvelope.self, from: try #require(try decoder.next()))
        #expect(refusal.code == sent.statusCode && refusal.message == sent.statusMessage)
        #expect(refusal.message.hasPrefix("the reply is 1025 bytes"))
    }

    @Test("an oversize length is rejected from its header alone")
    func oversizeRejectedBeforeBody() throws {
        var decoder = FrameDecoder(maxFrameSize: 1024)
        var header: [UInt8] = []
        Frame.appendHeader(length: try #require(FrameLength(exactly: 1025)), to: &header)
        decoder.append(header)
        #expect(throws: FrameDecoder.Failure.frameTooLarge(length: 1025, limit: 1024)) { try decoder.next() }
        // Nothing of the body had to arrive (or be buffered) for the error.
        #expect(decoder.bufferedByteCount == 4)
    }

    @Test("a huge announced length is rejected with the default limit")
    func hugeLength() {
        var decoder = FrameDecoder()
        decoder.append([0xFF, 0xFF, 0xFF, 0xFF, 0x00])
        #expect(throws: FrameDecoder.Failure.frameTooLarge(length: UInt32.max, limit: Frame.defaultMaxSize)) {
            try decoder.next()
        }
    }

    @Test("exactly the maximum size is allowed", arguments: [0, 1, 64])
    func exactMaximum(limit: Int) throws {
        var decoder = FrameDecoder(maxFrameSize: limit)
        let body = [UInt8](repeating: 7, count: limit)
        decoder.append(Frame.encode(body))
        #expect(try decoder.next() == body)
        decoder.append(Frame.encode(body + [7]))
        #expect(throws: FrameDecoder.Failure.frameTooLarge(length: UInt32(limit + 1), limit: limit)) {
            try decoder.next()
        }
    }

    @Test("fewer than 4 bytes is not yet a frame")
    func partialHeader() throws {
        var decoder = FrameDecoder()
        decoder.append([0, 0, 0])
        #expect(decoder.nextLength == nil)
        #expect(try decoder.next() == nil)
        #expect(decoder.bufferedPrefix == [0, 0, 0])
        decoder.append([0])
        #expect(try decoder.next() == [])
    }

    @Test("long streams with interleaved appends and reads stay in order")
    func interleaved() throws {
        var decoder = FrameDecoder(maxFrameSize: 512)
        var expected: [[UInt8]] = []
        var received: [[UInt8]] = []
        var pending: [UInt8] = []
        for index in 0..<500 {
            let body = [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: index % 37)
            expected.append(body)
            Frame.append(body, to: &pending)
            // Deliver in chunks of 13 bytes, leaving a remainder for next time.
            while pending.count >= 13 {
                decoder.append(Array(pending[..<13]))
                pending.removeFirst(13)
                received += try drain(&decoder)
            }
        }
        decoder.append(pending)
        received += try drain(&decoder)
        #expect(received == expected)
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test("discarding the partial frame keeps the whole frames before it")
    func discardPartialFrameKeepsWholeFrames() throws {
        var decoder = FrameDecoder()
        decoder.append(Frame.encode([1, 2, 3]) + Frame.encode([4]) + Array(Frame.encode([5, 6, 7, 8]).prefix(6)))
        decoder.discardPartialFrame()
        #expect(decoder.bufferedByteCount == 7 + 5)
        #expect(try decoder.next() == [1, 2, 3])
        #expect(try decoder.next() == [4])
        #expect(try decoder.next() == nil)
        #expect(decoder.bufferedByteCount == 0)
        // Only a partial frame (here a header cut short): everything goes.
        decoder.append([0, 0])
        decoder.discardPartialFrame()
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test("a big frame's buffer is given back once it is consumed, by next() and withNextFrame")
    func bigBuffersAreGivenBack() throws {
        let big = [UInt8](repeating: 7, count: 4 * 1024 * 1024)
        for useClosure in [false, true] {
            var decoder = FrameDecoder()
            decoder.append(Frame.encode(big))
            #expect(decoder.capacity >= big.count)
            if useClosure {
                #expect(try decoder.withNextFrame { $0.count } == big.count)
            } else {
                #expect(try decoder.next()?.count == big.count)
            }
            #expect(decoder.bufferedByteCount == 0)
            #expect(decoder.capacity <= FrameDecoder.retainedCapacity)
            // Small frames keep their buffer: no allocation per frame.
            decoder.append(Frame.encode([1, 2, 3]))
            _ = try decoder.next()
            decoder.append(Frame.encode([4, 5, 6]))
            #expect(try decoder.next() == [4, 5, 6])
        }
    }
}
