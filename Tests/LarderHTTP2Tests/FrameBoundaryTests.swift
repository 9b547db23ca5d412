@testable import LarderHTTP2
import Testing

/// The session's view of HTTP/2 framing, which the server's frame timeout reads: whether the
/// input so far ends inside the preface or a frame.
@Suite("HTTP/2 frame boundaries")
struct FrameBoundaryTests {
    /// The state after each of `pieces`, fed in order.
    static func states(_ pieces: [[UInt8]]) -> [Bool] {
        var boundary = FrameBoundary()
        return pieces.map { piece in
            piece.withUnsafeBytes { boundary.advance(over: $0) }
            return boundary.isInsideFrame
        }
    }

    @Test("nothing yet, a partial preface, the whole preface")
    func preface() {
        #expect(Self.states([[]]) == [false])
        #expect(Self.states([Array(HTTP2Preface.bytes.prefix(5)), Array(HTTP2Preface.bytes.dropFirst(5))]) == [true, false])
    }

    @Test("a frame split at every byte is inside until its last byte", arguments: [0, 1, 10, 300])
    func everyByte(_ payloadLength: Int) {
        let frame = RawFrames.frame(0, stream: 1, [UInt8](repeating: 9, count: payloadLength))
        let states = Self.states([HTTP2Preface.bytes] + frame.map { [$0] })
        #expect(states.first == false)
        #expect(states.dropFirst().dropLast().allSatisfy { $0 })
        #expect(states.last == false)
    }

    @Test("several frames in one piece, then one cut short, then its rest")
    func manyInOnePiece() {
        let frames = RawFrames.frame(4) + RawFrames.frame(8, [0, 0, 0, 1]) + RawFrames.frame(6, [UInt8](repeating: 0, count: 8))
        let cut = RawFrames.frame(1, flags: 4, stream: 1, [UInt8](repeating: 1, count: 70_000 & 0xFFFF))
        #expect(Self.states([HTTP2Preface.bytes + frames, Array(cut.prefix(20)), Array(cut.dropFirst(20))])
                == [false, true, false])
    }

    @Test("a frame with a length of 2^24 - 1 counts all of it")
    func largestLength() {
        var header = RawFrames.frame(0, stream: 1)
        header[0] = 0xFF; header[1] = 0xFF; header[2] = 0xFF
        var boundary = FrameBoundary()
        (HTTP2Preface.bytes + header).withUnsafeBytes { boundary.advance(over: $0) }
        let chunk = [UInt8](repeating: 0, count: 0xFF_FFFF - 1)
        chunk.withUnsafeBytes { boundary.advance(over: $0) }
        #expect(boundary.isInsideFrame)
        [UInt8(0)].withUnsafeBytes { boundary.advance(over: $0) }
        #expect(!boundary.isInsideFrame)
    }

    @Test("the session reports a partial frame as incomplete input, and a whole one as not")
    func session() throws {
        let server = try GRPCServerSession()
        _ = try server.receive(RawFrames.start)
        #expect(!server.holdsIncompleteInput)
        let ping = RawFrames.frame(6, [UInt8](repeating: 0, count: 8))
        _ = try server.receive(Array(ping.prefix(12)))
        #expect(server.holdsIncompleteInput)
        _ = try server.receive(Array(ping.dropFirst(12)))
        #expect(!server.holdsIncompleteInput)
    }
}
