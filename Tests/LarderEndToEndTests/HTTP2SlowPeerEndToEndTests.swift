import Foundation
import LarderAPI
import LarderClient
import LarderHTTP2
import LarderTestSupport
import LarderWire
import Testing

/// HTTP/2 peers that begin a frame, or the preface, and do not finish it; and a preface that
/// goes wrong after its first bytes. Raw bytes over a plain socket: no HTTP/2 client sends these.
@Suite("HTTP/2 slow and broken peers against larder-server", .offThePool)
struct HTTP2SlowPeerEndToEndTests {
    /// An HTTP/2 frame header and payload (RFC 9113 §4.1).
    static func frame(_ type: UInt8, flags: UInt8 = 0, stream: UInt32 = 0, length: Int? = nil, _ payload: [UInt8] = []) -> [UInt8] {
        let count = UInt32(length ?? payload.count)
        return [UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF), type, flags,
                UInt8(stream >> 24 & 0x7F), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF)] + payload
    }

    /// Every byte the server sends until it closes the connection (up to about a minute).
    static func readToClose(_ connection: RawConnection) async -> [UInt8] {
        await offThePool { () -> [UInt8] in
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            var timeouts = 0
            while timeouts < 6 {
                let count = buffer.withUnsafeMutableBytes { connection.receiveSome(into: $0) }
                if count > 0 {
                    bytes += buffer[0..<count]
                } else if count == 0 {
                    break
                } else if errno == EAGAIN || errno == EWOULDBLOCK {
                    timeouts += 1
                } else {
                    break
                }
            }
            return bytes
        }
    }

    /// The GOAWAY frames in `bytes` (after the server's SETTINGS): error code and debug text.
    static func goaways(_ bytes: [UInt8]) -> [(code: UInt32, debug: String)] {
        var found: [(UInt32, String)] = []
        var index = 0
        while index + 9 <= bytes.count {
            let length = Int(bytes[index]) << 16 | Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
            guard index + 9 + length <= bytes.count else { break }
            if bytes[index + 3] == 7, length >= 8 {
                let payload = Array(bytes[(index + 9)..<(index + 9 + length)])
                let code = UInt32(payload[4]) << 24 | UInt32(payload[5]) << 16 | UInt32(payload[6]) << 8 | UInt32(payload[7])
                found.append((code, String(decoding: payload[8...], as: UTF8.self)))
            }
            index += 9 + length
        }
        return found
    }

    @Test("a frame begun and trickled byte by byte is ended by the frame timeout, as a lean frame is")
    func trickledFrame() async throws {
        let server = try await ServerProcess(arguments: ["--frame-timeout", "1", "--no-seed"])
        defer { server.stop() }
        let peer = try RawConnection(port: server.port)
        // The preface, SETTINGS, then the header of a 16 KB HEADERS frame and a first byte of it.
        peer.send(HTTP2Preface.bytes + Self.frame(4) + Self.frame(1, flags: 4, stream: 1, length: 16_384) + [0])
        // A byte now and then (well inside the timeout each): it never completes.
        let trickle = Task(executorPreference: BlockingWorkExecutor.shared) {
            for _ in 0..<120 {
                try await Task.sleep(for: .milliseconds(500))
                peer.send([0])
            }
        }
        defer { trickle.cancel() }
        let bytes = await Self.readToClose(peer)
        let goaway = Self.goaways(bytes).last
        #expect(goaway?.code == HTTP2ErrorCode.enhanceYourCalm.rawValue, "\(Self.goaways(bytes))")
        #expect(goaway?.debug.contains("not completed within 1 s") == true, "\(Self.goaways(bytes))")
        #expect(await server.waitForLog("event=frame_timeout"))
    }

    @Test("a preface begun and not finished is ended by the frame timeout, not left to the idle timeout")
    func partialPreface() async throws {
        let server = try await ServerProcess(arguments: ["--frame-timeout", "1", "--idle-timeout", "3600", "--no-seed"])
        defer { server.stop() }
        let peer = try RawConnection(port: server.port)
        peer.send(Array(HTTP2Preface.bytes.prefix(10)))
        _ = await Self.readToClose(peer)
        #expect(await server.waitForLog("event=frame_timeout"))
    }

    @Test("a preface that goes wrong after PRI gets GOAWAY PROTOCOL_ERROR, and the server goes on serving")
    func brokenPreface() async throws {
        let server = try await ServerProcess(arguments: ["--no-seed"])
        defer { server.stop() }
        let peer = try RawConnection(port: server.port)
        peer.send(Array("PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n".utf8))
        let bytes = await Self.readToClose(peer)
        let goaway = Self.goaways(bytes).last
        #expect(goaway?.code == HTTP2ErrorCode.protocolError.rawValue, "\(bytes.prefix(64))")
        #expect(goaway?.debug == "the connection did not start with the HTTP/2 client preface")
        let lean = try LarderClient.loopback(port: server.port)
        defer { lean.close() }
        #expect(try await lean.call(LocationMethods.listLocations, ListLocationsRequest()).locations.isEmpty)
    }
}
