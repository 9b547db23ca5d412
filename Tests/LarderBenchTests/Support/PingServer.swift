import Foundation
import LarderWire
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import LarderSystem

/// A tiny Larder server on 127.0.0.1:0 for bench tests: every connection gets
/// its own thread that answers each request envelope with `reply(request)`.
/// Every thread ends when `stop()` is called (each test defers it), or after `lifetime`
/// seconds as a last resort: a test's bound, never. A 30 s lifetime ran out under a
/// loaded suite before a test's last call, which then waited for a reply that never came.
final class PingServer: Sendable {
    let port: UInt16
    private let listenFD: Int32
    private let stopped = Atomic<Bool>(false)
    private let received = LockedValue<[String: Int]>([:])
    private let reply: @Sendable (RequestEnvelope) -> ResponseEnvelope

    init(lifetime: Double = 900, reply: @escaping @Sendable (RequestEnvelope) -> ResponseEnvelope = {
        ResponseEnvelope(callID: $0.callID)
    }) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RPCError(.internal, "socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw RPCError(.internal, "bind/listen: \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listenFD = fd
        port = UInt16(bigEndian: address.sin_port)
        self.reply = reply
        let deadline = Date().addingTimeInterval(lifetime)
        Thread { [self] in acceptLoop(until: deadline) }.start()
    }

    deinit { close(listenFD) }

    /// Requests seen so far, by method.
    var requestsByMethod: [String: Int] { received.withLock { $0 } }

    func stop() { stopped.store(true, ordering: .relaxed) }

    private func acceptLoop(until deadline: Date) {
        while !stopped.load(ordering: .relaxed) && Date() < deadline {
            var pfd = pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 50) > 0 else { continue }
            let client = accept(listenFD, nil, nil)
            guard client >= 0 else { continue }
            Thread { [self] in serve(client, until: deadline) }.start()
        }
    }

    private func serve(_ fd: Int32, until deadline: Date) {
        defer { close(fd) }
        var decoder = FrameDecoder()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while !stopped.load(ordering: .relaxed) && Date() < deadline {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 50) > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            chunk.withUnsafeBytes { decoder.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            var output: [UInt8] = []
            while let frame = try? decoder.next() {
                guard let request = try? ProtoCodec.decode(RequestEnvelope.self, from: frame) else { return }
                received.withLock { $0[request.method, default: 0] += 1 }
                Frame.append(ProtoCodec.encode(reply(request)), to: &output)
            }
            var offset = 0
            while offset < output.count {
                let sent = output.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
                guard sent > 0 else { return }
                offset += sent
            }
        }
    }
}
