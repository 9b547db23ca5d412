import Foundation
@testable import LarderServer
import Testing

@Suite("OutputBuffer")
struct OutputBufferTests {
    /// Writes up to `count` bytes from the front, as a socket taking that much would (one chunk
    /// per write at most), and checks their order; returns the bytes written.
    @discardableResult
    private static func write(_ count: Int, from buffer: inout OutputBuffer, expecting next: inout UInt8) -> Int {
        var left = min(count, buffer.unwrittenCount)
        var total = 0
        while left > 0 {
            let (taken, inOrder) = buffer.withUnwrittenBytes { bytes in
                let taken = min(left, bytes.count)
                let inOrder = countUp(UnsafeRawBufferPointer(rebasing: bytes[..<taken]), from: next)
                next &+= UInt8(truncatingIfNeeded: taken)
                return (taken, inOrder)
            }
            #expect(inOrder, "the bytes written are the ones appended, in order")
            #expect(taken > 0)
            buffer.consume(taken)
            left -= taken
            total += taken
        }
        return total
    }

    /// `count` bytes counting up by one (mod 256) from `first`, which is left at the next value.
    private static func bytes(_ count: Int, from first: inout UInt8) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        while bytes.count < count {  // in runs of up to 256, copied from `twoCycles`
            let length = min(256, count - bytes.count)
            bytes += twoCycles[Int(first)..<Int(first) + length]
            first &+= UInt8(truncatingIfNeeded: length)
        }
        return bytes
    }

    /// 0…255 twice: a run of up to 256 bytes counting up from any value is a slice of it. The
    /// tests append and check megabytes, a byte at a time too slow under ThreadSanitizer.
    private static let twoCycles: [UInt8] = (0..<512).map { UInt8(truncatingIfNeeded: $0) }

    /// Whether `bytes` count up by one (mod 256) from `first`.
    private static func countUp(_ bytes: UnsafeRawBufferPointer, from first: UInt8) -> Bool {
        twoCycles.withUnsafeBytes { cycles in
            var offset = 0
            while offset < bytes.count {
                let length = min(256, bytes.count - offset)
                let start = Int(first &+ UInt8(truncatingIfNeeded: offset))
                guard let run = bytes.baseAddress, let expected = cycles.baseAddress,
                      memcmp(run + offset, expected + start, length) == 0 else { return false }
                offset += length
            }
            return true
        }
    }

    /// A peer that reads steadily but never catches up: the buffer frees what was written
    /// (before the compaction fix it kept every byte ever sent).
    @Test func aBufferThatNeverEmptiesHoldsItsUnwrittenBytesAndAboutAChunk() {
        var buffer = OutputBuffer()
        var appended: UInt8 = 0
        var written: UInt8 = 0
        for _ in 0..<500 {
            buffer.append(Self.bytes(10_000, from: &appended))
            Self.write(9_000, from: &buffer, expecting: &written)
            #expect(!buffer.isEmpty)
            #expect(buffer.heldCount <= buffer.unwrittenCount + 4 * OutputBuffer.growthLimit)
        }
        // 5 MB went through, 0.5 MB are left unwritten; the buffer holds about that, not 5 MB.
        #expect(buffer.unwrittenCount == 500_000)
        #expect(buffer.heldCount < 500_000 + 4 * OutputBuffer.growthLimit, "\(buffer.heldCount)")
        Self.write(buffer.unwrittenCount, from: &buffer, expecting: &written)
        #expect(buffer.isEmpty && written == appended)
        #expect(buffer.heldCount <= OutputBuffer.retainedCapacity)
    }

    /// Peers that never read, each with many big replies (a page of 1,000 records is ~0.5 MB):
    /// one array that doubled as it grew held up to twice what was unwritten.
    @Test func bigRepliesAreKeptAsTheyAreNotCopiedIntoADoublingArray() {
        var buffer = OutputBuffer()
        var appended: UInt8 = 0
        var written: UInt8 = 0
        var replies: [[UInt8]] = []
        for _ in 0..<20 {
            let reply = Self.bytes(456_000, from: &appended)
            replies.append(reply)
            buffer.append(reply)
            buffer.append(Self.bytes(40, from: &appended))  // a small reply in between
        }
        #expect(buffer.unwrittenCount == 20 * 456_040)
        // The big arrays are the very ones appended (no copy): their storage is shared.
        let shared = replies.filter { reply in reply.withUnsafeBytes { mine in
            var found = false
            var probe = buffer
            while !probe.isEmpty && !found {
                probe.withUnwrittenBytes { bytes in found = bytes.baseAddress == mine.baseAddress }
                probe.consume(probe.withUnwrittenBytes { $0.count })
            }
            return found
        } }
        #expect(shared.count == 20)
        replies.removeAll()
        #expect(buffer.heldCount < buffer.unwrittenCount + 4 * OutputBuffer.growthLimit, "\(buffer.heldCount)")
        Self.write(456_040 * 10 + 1_000, from: &buffer, expecting: &written)
        #expect(buffer.heldCount < buffer.unwrittenCount + 4 * OutputBuffer.growthLimit + 456_040, "\(buffer.heldCount)")
        Self.write(buffer.unwrittenCount, from: &buffer, expecting: &written)
        #expect(buffer.isEmpty && written == appended)
    }

    /// Peers that never read, with small or middling replies: an array grown by doubling held
    /// up to twice their bytes (1.95× for 1 KB replies); the buffer's own chunks hold them
    /// within a quarter, plus the last chunk.
    @Test(arguments: [(1_000, 1.05), (30_000, 1.34), (60_000, 1.34)])
    func smallRepliesHoldAboutTheirOwnSize(replySize: Int, ratio: Double) {
        var buffer = OutputBuffer()
        var appended: UInt8 = 0
        var written: UInt8 = 0
        let slack = 2 * OutputBuffer.growthLimit + OutputBuffer.retainedCapacity
        var worst = (held: 0, unwritten: 0, excess: -Double.infinity)
        for index in 0..<((8 << 20) / replySize) {
            let reply = Self.bytes(replySize, from: &appended)
            if index % 2 == 0 {
                buffer.append(reply)
            } else {
                reply.withUnsafeBytes { buffer.append($0) }
            }
            let excess = Double(buffer.heldCount) - Double(buffer.unwrittenCount) * ratio - Double(slack)
            if excess > worst.excess { worst = (buffer.heldCount, buffer.unwrittenCount, excess) }
        }
        #expect(worst.excess <= 0, "\(worst.held) bytes held for \(worst.unwritten) unwritten")
        Self.write(buffer.unwrittenCount, from: &buffer, expecting: &written)
        #expect(buffer.isEmpty && written == appended)
    }

    @Test func appendsThroughTheClosureAndWholeArraysKeepTheirOrder() {
        var buffer = OutputBuffer()
        var appended: UInt8 = 0
        var written: UInt8 = 0
        buffer.append(Self.bytes(5, from: &appended))
        #expect(buffer.append(reserving: 7) { $0.append(contentsOf: Self.bytes(7, from: &appended)) } == 7)
        #expect(buffer.append(reserving: 100) { _ in } == 0)
        Self.write(3, from: &buffer, expecting: &written)
        #expect(buffer.unwrittenCount == 9)
        buffer.append(Self.bytes(100_000, from: &appended))
        #expect(buffer.append(reserving: 300_000) { $0.append(contentsOf: Self.bytes(300_000, from: &appended)) } == 300_000)
        buffer.append(Self.bytes(6, from: &appended))
        Self.write(70_000, from: &buffer, expecting: &written)
        #expect(buffer.unwrittenCount == 330_015)
        Self.write(330_015, from: &buffer, expecting: &written)
        #expect(buffer.isEmpty && written == appended)
        buffer.append(Self.bytes(4, from: &appended))
        buffer.removeAll()
        #expect(buffer.isEmpty && buffer.unwrittenCount == 0)
        #expect(buffer.heldCount <= OutputBuffer.retainedCapacity)
    }

    @Test func drainPassesEveryChunkInOrderAndEmptiesTheBuffer() {
        var buffer = OutputBuffer()
        var appended: UInt8 = 0
        var expected: [UInt8] = []
        for size in [10, 70_000, 3, 300_000, 200_000, 9] {
            let piece = Self.bytes(size, from: &appended)
            expected += piece
            buffer.append(piece)
        }
        var seen: [UInt8] = []
        var calls = 0
        buffer.drain { bytes in
            seen += bytes
            calls += 1
        }
        #expect(seen == expected)
        #expect(calls > 1, "several chunks")
        #expect(buffer.isEmpty && buffer.unwrittenCount == 0)
    }
}
