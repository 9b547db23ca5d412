import Foundation
import LarderReactor
import LarderTestSupport
import Testing
import LarderSystem

/// `LingeringClose`: the server's last bytes reach a peer that is still writing, and a peer
/// that never closes holds the exit no longer than the time given.
@Suite(.offThePool) struct LingeringCloseTests {
    /// An accepted, non-blocking socket (as the server's) and the client connected to it.
    static func connectedPair() throws -> (listener: TCPListener, server: Int32, client: RawConnection) {
        let listener = try TCPListener(address: SocketAddress(host: "127.0.0.1", port: 0))
        let client = try RawConnection(port: listener.address.port)
        for _ in 0..<1000 {
            if let (fd, _) = try listener.accept() { return (listener, fd, client) }
            usleep(1000)
        }
        throw CancellationError()
    }

    /// Everything `client` reads until end of stream (true) or an error such as a reset (false).
    static func readToEnd(_ client: RawConnection) -> (bytes: [UInt8], endOfStream: Bool) {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { client.receiveSome(into: $0) }
            if count == 0 { return (bytes, true) }
            if count < 0 { return (bytes, false) }
            bytes += buffer[0..<count]
        }
    }

    @Test("bytes the peer sent that were never read are drained: the peer reads the last bytes and then end of stream, not a reset")
    func unreadInputDoesNotResetTheClose() async throws {
        let (listener, server, client) = try Self.connectedPair()
        defer { listener.close() }
        client.send([UInt8](repeating: 7, count: 1000))  // never read by the server's code
        usleep(50_000)
        _ = [UInt8]("final".utf8).withUnsafeBytes { write(server, $0.baseAddress, $0.count) }
        // The peer does not close: the drain ends at its deadline, having read what came.
        LingeringClose.drain([server], milliseconds: 300)
        close(server)
        let (bytes, endOfStream) = Self.readToEnd(client)
        #expect(bytes == Array("final".utf8))
        #expect(endOfStream, "a plain close with unread input answers with a reset")
    }

    @Test("a peer that closes after the end of stream ends the drain; one that never does is waited for until the deadline")
    func drainEndsWhenPeersClose() async throws {
        let (listener, server, client) = try Self.connectedPair()
        let (_, silentServer, silentClient) = try Self.connectedPair()
        defer { listener.close() }
        // Both sides on threads of their own, the peer's started by the drain's thread itself: on a
        // busy run the cooperative pool can be held by other tests for minutes (a peer started as a
        // child task once did not run within the drain's 120 s), and the peer must answer all the same.
        let (stillOpen, peerSawEndOfStream) = await offThePool { () -> (Int, Bool) in
            let ended = LockedValue(false)
            let peerDone = DispatchSemaphore(value: 0)
            Thread {
                let sawEnd = Self.readToEnd(client).endOfStream
                client.shutdownSending()  // the peer closes its side once it read the end of stream
                ended.withLock { $0 = sawEnd }
                peerDone.signal()
            }.start()
            let stillOpen = LingeringClose.drain([server], milliseconds: 120_000)
            peerDone.wait()
            return (stillOpen, ended.withLock { $0 })
        }
        #expect(stillOpen == 0, "the drain returned on the peer's close, not at its deadline")
        #expect(peerSawEndOfStream)
        close(server)

        let silentStart = ContinuousClock.now
        let silentStillOpen = LingeringClose.drain([silentServer], milliseconds: 200)
        #expect(silentStillOpen == 1)
        #expect(ContinuousClock.now - silentStart >= .milliseconds(200))
        close(silentServer)
        withExtendedLifetime(silentClient) {}
    }
}
