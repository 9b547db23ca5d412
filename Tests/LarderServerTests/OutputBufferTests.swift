@testable import LarderServer
import Testing

@Suite("OutputBuffer")
struct OutputBufferTests {
    /// Writes up to `count` bytes from the front, as a socket taking that much would, and checks their order.
    private static func write(_ count: Int, from buffer: inout OutputBuffer, expecting next: inout UInt8) {
        let taken = min(count, buffer.unwrittenCount)
        let inOrder = buffer.withUnwrittenBytes { bytes in
            var inOrder = true
            for byte in bytes.prefix(taken) {
                inOrder = inOrder && byte == next
                next &+= 1
            }
            return inOrder
        }
        #expect(inOrder, "the bytes written are the ones appended, in order")
        buffer.consume(taken)
    }

    private static func bytes(_ count: Int, from first: inout UInt8) -> [UInt8] {
        (0..<count).map { _ in
            defer { first &+= 1 }
            return first
        }
    }

    /// A peer that reads steadily but never catches up: before, the buffer kept every byte ever
    /// sent (it was dropped only once everything was written).
    @Test func aBufferThatNeverEmptiesHoldsAtMostTwiceItsUnwrittenBytes() {
        var buffer = OutputBuffer()
        var appended: UInt8 = 0
        var written: UInt8 = 0
        for _ in 0..<500 {
            buffer.append(Self.bytes(10_000, from: &appended))
            Self.write(9_000, from: &buffer, expecting: &written)
            #expect(!buffer.isEmpty)
            #expect(buffer.heldCount <= 2 * buffer.unwrittenCount + OutputBuffer.compactionThreshold + 10_000)
        }
        // 5 MB went through, 0.5 MB are left unwritten; the buffer holds about that, not 5 MB.
        #expect(buffer.unwrittenCount == 500_000)
        #expect(buffer.heldCount < 1_100_000, "\(buffer.heldCount)")
        Self.write(buffer.unwrittenCount, from: &buffer, expecting: &written)
        #expect(buffer.isEmpty && buffer.heldCount == 0 && written == appended)
    }

    @Test func appendsThroughTheClosureAndWholeArraysKeepTheirOrder() {
        var buffer = OutputBuffer()
        var appended: UInt8 = 0
        var written: UInt8 = 0
        buffer.append(Self.bytes(5, from: &appended))
        #expect(buffer.append { $0.append(contentsOf: Self.bytes(7, from: &appended)) } == 7)
        Self.write(3, from: &buffer, expecting: &written)
        #expect(buffer.unwrittenCount == 9 && buffer.heldCount == 12)  // small prefixes stay until empty
        buffer.append(Self.bytes(100_000, from: &appended))
        Self.write(70_000, from: &buffer, expecting: &written)
        #expect(buffer.unwrittenCount == 30_009 && buffer.heldCount == 30_009)  // compacted: 70,003 ≥ 30,009
        Self.write(30_009, from: &buffer, expecting: &written)
        #expect(buffer.isEmpty && written == appended)
        buffer.append(Self.bytes(4, from: &appended))
        buffer.removeAll()
        #expect(buffer.isEmpty && buffer.heldCount == 0)
    }
}
