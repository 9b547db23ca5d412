import LarderAPI
import LarderClient
import LarderTestSupport
import LarderWire
import Testing
import LarderReactor
import LarderServer
import LarderTLS

/// Frames and envelopes the server refuses: a clear status, the connection closed when its
/// framing cannot be trusted, and every other connection served on.
@Suite("Server limits (in process)", .offThePool)
struct LimitsTests {
    /// The status a raw connection gets, then whether the server closed it.
    /// What the server answers `bytes` with, and whether it then closes. The waits are long (they
    /// end at once when the answer comes): under ThreadSanitizer, on a CI box busy with every
    /// suite at once, an answer once took over the usual 60 s.
    static func rejection(_ bytes: [UInt8], on server: InProcessServer) async throws -> (ResponseEnvelope?, Bool) {
        let raw = try server.raw()
        return await offThePool {
            raw.send(bytes)
            let reply = raw.receive(within: 300)
            return (reply, raw.isClosedByServer(within: 300))
        }
    }

    @Test func anOversizedFrameIsRefusedAndItsConnectionClosed() async throws {
        try await withInProcessServer({ $0.maxFrameBytes = 64 * 1024 }) { server in
            var header: [UInt8] = []
            Frame.appendHeader(length: try #require(FrameLength(exactly: 1024 * 1024)), to: &header)
            let (reply, closed) = try await Self.rejection(header + [UInt8](repeating: 0, count: 100), on: server)
            #expect(reply?.callID == 0)
            #expect(reply?.statusCode == .resourceExhausted)
            #expect(reply?.statusMessage.contains("frame length 1048576 exceeds the maximum of 65536 bytes") == true,
                    "\(reply?.statusMessage ?? "no reply")")
            #expect(closed)
            let client = try server.client()
            defer { client.close() }
            #expect(try await client.call(HealthMethods.check, HealthCheckRequest()).status == .serving)
        }
    }

    /// A lean frame must not begin with 0x16 (TLS) or `P` (the HTTP/2 preface): the frame limit
    /// stops at 256 MiB, where a length prefix begins with 0x10 at most.
    @Test func theFrameLimitStaysBelowTheFirstBytesOfTLSAndHTTP2() throws {
        #expect(ServerConfiguration.maxFrameBytesRange.upperBound == 256 * 1024 * 1024)
        let largest = try #require(FrameLength(exactly: ServerConfiguration.maxFrameBytesRange.upperBound))
        #expect(largest.value >> 24 < 0x16 && largest.value >> 24 < UInt32(UInt8(ascii: "P")))
        var configuration = ServerConfiguration()
        configuration.maxFrameBytes = ServerConfiguration.maxFrameBytesRange.upperBound
        #expect(throws: Never.self) { try configuration.validate() }
        for refused in [0x1600_0000, ServerConfiguration.maxFrameBytesRange.upperBound + 1, 1 << 30, 63] {
            configuration.maxFrameBytes = refused
            #expect(throws: RPCError.self, "\(refused)") { try configuration.validate() }
        }
    }

    /// A non-loopback address is refused naming what is missing and the risk it leaves (audit 31
    /// L8: with TLS but no token, the message said the token would go in clear text).
    @Test func aNonLoopbackAddressIsRefusedNamingWhatIsMissingAndItsRisk() {
        func refusal(token: Bool, tls: Bool) -> String? {
            var configuration = ServerConfiguration()
            configuration.listen = SocketAddress(host: "0.0.0.0", port: 7411)
            if token { configuration.authTokenFile = "token" }
            if tls {
                configuration.tlsCertificateFile = "cert.pem"
                configuration.tlsKeyFile = "key.pem"
            }
            do {
                try configuration.validate()
                return nil
            } catch {
                #expect(error.code == .failedPrecondition)
                return error.message
            }
        }
        let prefix = "refusing to listen on non-loopback address 0.0.0.0:7411 without "
        let suffix = "; pass --insecure to do it anyway"
        #expect(refusal(token: false, tls: false) == prefix + "--auth-token-file and TLS (--tls-cert, --tls-key): "
                + "anyone who reaches the port could call every method, and the data would cross the network in "
                + "clear text" + suffix)
        #expect(refusal(token: false, tls: true) == prefix + "--auth-token-file: anyone who reaches the port could "
                + "call every method" + suffix)
        #expect(refusal(token: true, tls: false) == prefix + "TLS (--tls-cert, --tls-key): remote clients would send "
                + "the token and data in clear text" + suffix)
        #expect(refusal(token: true, tls: true) == nil)
    }

    /// Cleartext connections get health only (no --tls-only) where serving them all would skip
    /// a check: a required client certificate, or TLS on a non-loopback address (audit 20 F1,
    /// F2); --insecure keeps the old behaviour on such an address and is named in a warning.
    @Test func cleartextGetsHealthOnlyWhereItWouldSkipTLSsChecks() {
        var configuration = ServerConfiguration()
        #expect(configuration.cleartextLimit == nil)  // no TLS at all
        configuration.tlsCertificateFile = "cert.pem"
        configuration.tlsKeyFile = "key.pem"
        #expect(configuration.cleartextLimit == nil)  // TLS beside cleartext, on loopback
        configuration.tlsClientCAFile = "ca.pem"
        #expect(configuration.cleartextLimit == nil)  // optional client certificates
        configuration.tlsClientAuthentication = .require
        #expect(configuration.cleartextLimit?.reason == "--tls-client-auth require")
        #expect(configuration.cleartextLimit?.remoteOnly == false)
        configuration.tlsClientAuthentication = .optional
        configuration.listen = SocketAddress(host: "0.0.0.0", port: 7411)
        configuration.authTokenFile = "token"
        #expect(configuration.cleartextLimit?.reason == "TLS on a non-loopback address")
        #expect(configuration.cleartextLimit?.remoteOnly == true, "a loopback client of 0.0.0.0 is served")
        #expect(configuration.insecureExposure == nil)
        configuration.insecure = true
        #expect(configuration.cleartextLimit == nil)
        #expect(configuration.insecureExposure == "calls over cleartext on 0.0.0.0:7411")
        configuration.tlsOnly = true  // refused outright instead
        configuration.authTokenFile = nil
        configuration.metricsListen = SocketAddress(host: "0.0.0.0", port: 9000)
        #expect(configuration.cleartextLimit == nil)
        #expect(configuration.insecureExposure == "calls without a token on 0.0.0.0:7411, metrics without auth on 0.0.0.0:9000")
    }

    @Test func aMalformedEnvelopeIsRefusedAndItsConnectionClosed() async throws {
        try await withInProcessServer { server in
            let (reply, closed) = try await Self.rejection(Frame.encode([0xff, 0xff, 0xff, 0xff]), on: server)
            #expect(reply?.callID == 0)
            #expect(reply?.statusCode == .invalidArgument)
            #expect(reply?.statusMessage.contains("malformed request envelope") == true, "\(reply?.statusMessage ?? "no reply")")
            #expect(closed)
            let client = try server.client()
            defer { client.close() }
            #expect(try await client.call(LocationMethods.listLocations, ListLocationsRequest()).locations.count == 1)
        }
    }

    /// N = 0 is a valid frame: an envelope with every field at its default, so call id 0.
    @Test func aZeroLengthFrameIsAConnectionError() async throws {
        try await withInProcessServer { server in
            let (reply, closed) = try await Self.rejection(Frame.encode([]), on: server)
            #expect(reply?.callID == 0)
            #expect(reply?.statusCode == .invalidArgument)
            #expect(reply?.statusMessage == "call_id must be non-zero")
            #expect(closed)
        }
    }

    @Test func aZeroCallIDIsRefused() async throws {
        try await withInProcessServer { server in
            let envelope = RequestEnvelope(callID: 0, method: HealthMethods.check.path,
                                           payload: ProtoCodec.encode(HealthCheckRequest()))
            let (reply, closed) = try await Self.rejection(Frame.encode(envelope), on: server)
            #expect(reply?.statusCode == .invalidArgument)
            #expect(reply?.statusMessage.contains("call_id must be non-zero") == true, "\(reply?.statusMessage ?? "no reply")")
            #expect(closed)
        }
    }

    /// An envelope over a decode bound is refused to its call wherever its call id is among the
    /// top-level fields, before or after what broke the bound; the connection serves on.
    @Test(arguments: [
        ("10,001 fields", Array(repeating: [UInt8]([0x20, 0x00]), count: 10_001).flatMap { $0 },
         "larder.rpc.v1.RequestEnvelope has more than 10000 fields (a limit of this server)"),
        ("101 unknown fields", Array(repeating: [UInt8]([0xA0, 0x06, 0x00]), count: 101).flatMap { $0 },
         "larder.rpc.v1.RequestEnvelope has more than 100 unknown fields (a limit of this server)"),
        ("8 KiB of metadata", Array(repeating: [UInt8]([0x2A, 0x82, 0x01, 0x0A, 0x01, 0x6B, 0x12, 0x7D])
            + [UInt8](repeating: 0x76, count: 125), count: 60).flatMap { $0 },
         "request metadata of at least 8216 bytes exceeds the limit of 8192 (each entry counts its key and value bytes plus 32)"),
    ] as [(String, [UInt8], String)])
    func anEnvelopeOverABoundFailsOnlyItsCallWhereverItsCallIDIs(what: String, fields: [UInt8], message: String)
        async throws
    {
        try await withInProcessServer { server in
            let method = Array(HealthMethods.check.path.utf8)
            let methodField: [UInt8] = [0x12, UInt8(method.count)] + method
            let raw = try server.raw()
            let replies = await offThePool { () -> [ResponseEnvelope?] in
                raw.send(Frame.encode([0x08, 5] + methodField + fields))  // call id first
                raw.send(Frame.encode(fields + [0x08, 6] + methodField))  // call id after the bound was broken
                raw.send(RequestEnvelope(callID: 7, method: HealthMethods.check.path,
                                         payload: ProtoCodec.encode(HealthCheckRequest())))
                // Long waits, as in `rejection`.
                return [raw.receive(within: 300), raw.receive(within: 300), raw.receive(within: 300)]
            }
            for (reply, id) in zip(replies.prefix(2), [UInt64(5), 6]) {
                #expect(reply?.callID == id, "\(what)")
                #expect(reply?.statusCode == .resourceExhausted)
                #expect(reply?.statusMessage == message)
            }
            #expect(replies[2]?.callID == 7 && replies[2]?.statusCode == .ok, "the connection serves on")
        }
    }

    /// With no call id to refuse it to, an envelope over a bound is a connection error.
    @Test func anEnvelopeOverABoundWithoutACallIDIsAConnectionError() async throws {
        try await withInProcessServer { server in
            let fields = Array(repeating: [UInt8]([0x20, 0x00]), count: 10_001).flatMap { $0 }
            let (reply, closed) = try await Self.rejection(Frame.encode(fields), on: server)
            #expect(reply?.callID == 0)
            #expect(reply?.statusCode == .resourceExhausted)
            #expect(reply?.statusMessage == "larder.rpc.v1.RequestEnvelope has more than 10000 fields (a limit of this server)")
            #expect(closed)
        }
    }

    @Test func metadataOverTheLimitFailsOnlyItsCall() async throws {
        try await withInProcessServer { server in
            let big = String(repeating: "m", count: DecodeLimits.server.maxMetadataBytes + 1)
            let raw = try server.raw()
            let replies = await offThePool { () -> [ResponseEnvelope?] in
                raw.send(RequestEnvelope(callID: 7, method: HealthMethods.check.path,
                                         payload: ProtoCodec.encode(HealthCheckRequest()), metadata: ["x-big": big]))
                raw.send(RequestEnvelope(callID: 8, method: HealthMethods.check.path,
                                         payload: ProtoCodec.encode(HealthCheckRequest())))
                return [raw.receive(), raw.receive()]
            }
            #expect(replies[0]?.callID == 7)
            #expect(replies[0]?.statusCode == .resourceExhausted)
            #expect(replies[0]?.statusMessage.contains("request metadata") == true, "\(replies[0]?.statusMessage ?? "")")
            #expect(replies[1]?.callID == 8, "the connection serves on")
            #expect(replies[1]?.statusCode == .ok)
        }
    }
}
