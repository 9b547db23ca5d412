import Foundation
import LarderTLS
import LarderTestSupport

/// A TLS server of the test's own on 127.0.0.1 (a free port), for what larder-server does not
/// do on purpose: reset a connection, or look at the bytes a client sends. It accepts
/// `connections` connections one after another on a thread of its own and runs `serve` on each
/// with its socket (closed afterwards) and a new session of `context`.
final class TLSTestListener: Sendable {
    let port: UInt16
    private let fd: Int32

    init(context: TLSServerContext, connections: Int,
         serve: @escaping @Sendable (_ fd: Int32, _ session: TLSSession) -> Void) throws {
        let (listener, port) = try boundLoopbackSocket(listening: 16)
        fd = listener
        self.port = port
        let thread = Thread {
            for _ in 0..<connections {
                var connection: Int32
                repeat { connection = accept(listener, nil, nil) } while connection < 0 && errno == EINTR  // SIGCHLD
                guard connection >= 0 else { return }
                var timeout = timeval(tv_sec: 60, tv_usec: 0)
                setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                if let session = try? context.makeSession() { serve(connection, session) }
                Glibc.close(connection)
            }
        }
        thread.start()
    }

    /// Stops accepting (a thread blocked in accept returns).
    func close() {
        shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
    }

    /// Reads from `fd` into `session` and writes what it makes, until `done` says so (given the
    /// plaintext so far), the peer closes, or the session fails (then returns the error, its
    /// alert not sent: the caller decides).
    static func run(_ fd: Int32, _ session: TLSSession, until done: ([UInt8]) -> Bool) -> TLSError? {
        var plaintext: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while !done(plaintext) {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            do {
                try session.receive(Array(buffer[0..<count]), into: &plaintext)
            } catch {
                return error
            }
            var output: [UInt8] = []
            session.takeOutput(into: &output)
            if !output.isEmpty { _ = output.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
        }
        return nil
    }

    /// Makes the next close of `fd` reset the connection (RST) instead of ending it (FIN).
    static func resetOnClose(_ fd: Int32) {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
    }
}
