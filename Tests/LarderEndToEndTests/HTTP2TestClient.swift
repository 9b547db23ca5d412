import Foundation
import LarderHTTP2
import LarderTestSupport
import LarderWire

/// A blocking gRPC-over-HTTP/2 client for end-to-end tests: LarderHTTP2's client session over
/// a `RawConnection`. Blocking, so use it inside `offThePool`.
final class HTTP2TestClient {
    let connection: RawConnection
    let session: GRPCClientSession

    init(port: UInt16) throws {
        connection = try RawConnection(port: port)
        session = try GRPCClientSession()
    }

    /// The bytes the session has ready to send (preface and SETTINGS first).
    func pendingOutput() throws -> [UInt8] {
        var bytes: [UInt8] = []
        try session.writeOutput(into: &bytes)
        return bytes
    }

    /// Sends what the session has ready, then reads until `streamID` ended (or the server
    /// closed the connection, or 10 s passed without a byte: RawConnection's receive timeout).
    func finish(_ streamID: Int32) throws -> GRPCClientSession.Response? {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while session.responses[streamID]?.ended != true {
            connection.send(try pendingOutput())
            let count = buffer.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            try session.receive(Array(buffer[0..<count]))
        }
        connection.send(try pendingOutput())
        return session.responses[streamID]
    }

    /// One unary call: request headers (plus `extra`), one message, end of input.
    func unary(_ path: String, _ message: [UInt8], extra: [(String, String)] = []) throws -> GRPCClientSession.Response? {
        guard let stream = session.startCall(headers: GRPCClientSession.requestHeaders(path: path, extra: extra)) else {
            return nil
        }
        session.sendMessage(streamID: stream, message)
        session.endInput(streamID: stream)
        return try finish(stream)
    }
}
