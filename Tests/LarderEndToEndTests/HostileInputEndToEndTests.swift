import Foundation
import LarderAPI
import LarderClient
import LarderTestSupport
import LarderWire
import Testing

/// Regressions for bad input and timing found by fuzzing and the sanitizer runs.
@Suite("Hostile input", .offThePool)
struct HostileInputEndToEndTests {
    /// A length-delimited field (lengths under 128).
    static func field(_ number: UInt8, _ bytes: [UInt8]) -> [UInt8] { [number << 3 | 2, UInt8(bytes.count)] + bytes }

    @Test func aStringWithANULByteIsRejectedNotTruncated() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        // CreateLocationRequest{location{name: "Attic\0'); DROP TABLE locations; --", color_hex: "#123456"}}
        let name = Array("Attic".utf8) + [0] + Array("'); DROP TABLE locations; --".utf8)
        let payload = Self.field(1, Self.field(2, name) + Self.field(3, Array("#123456".utf8)))
        raw.send(RequestEnvelope(callID: 1, method: LocationMethods.createLocation.path, payload: payload))
        let reply = try #require(raw.receive())
        #expect(reply.callID == 1)
        #expect(reply.statusCode == .invalidArgument)
        #expect(reply.statusMessage == "location.name must not contain NUL bytes")

        raw.send(RequestEnvelope(callID: 2, method: LocationMethods.listLocations.path,
                                 payload: ProtoCodec.encode(ListLocationsRequest())))
        let list = try #require(raw.receive())
        let names = try ProtoCodec.decode(ListLocationsResponse.self, from: list.payload).locations.map(\.name)
        #expect(!names.contains { $0.hasPrefix("Attic") }, "nothing stored, truncated or not")
    }

    /// A 4 MiB name of U+3000 around one letter: trimming it took the one writer thread 0.12 s
    /// per frame, holding up everyone's writes. It is refused on its size before any trimming,
    /// and the server still trims ordinary names.
    @Test func aHugeWhitespacePaddedNameIsRefusedOnItsSize() async throws {
        try await withServer { _, client in
            let name = String(repeating: "\u{3000}", count: 1_390_000) + "x"
            do {
                _ = try await client.call(LocationMethods.createLocation,
                                          CreateLocationRequest(location: Location(name: name, colorHex: "#000000")))
                Issue.record("a 4 MiB name was accepted")
            } catch let error as RPCError {
                #expect(error == RPCError(.invalidArgument, "location.name is 4170001 bytes of UTF-8, more than the 1600 "
                                          + "a name may have before trimming (at most 400 after)"))
            }
            let padded = try await client.call(LocationMethods.createLocation, CreateLocationRequest(
                location: Location(name: "\u{3000}Pantry\u{3000}", colorHex: "#000000")))
            #expect(padded.name == "Pantry")
        }
    }

    /// The server finds handlers by the raw bytes of the method name: a name that is
    /// a known path with invalid UTF-8 in it, a known path's prefix, or invalid UTF-8 in
    /// metadata must still be told apart from every real method, and answered with a
    /// connection-level INVALID_ARGUMENT (or UNIMPLEMENTED) while other clients carry on.
    @Test func methodNamesAndMetadataAreCheckedByteForByte() async throws {
        try await withServer { server, client in
            let path = Array(LocationMethods.listLocations.path.utf8)
            // call_id = 1, method = path with its last byte replaced by 0xFF.
            let badMethod = Frame.encode([0x08, 0x01] + Self.field(2, Array(path.dropLast()) + [0xFF]))
            let raw = try RawConnection(port: server.port)
            raw.send(badMethod)
            let reply = try #require(raw.receive())
            #expect(reply.callID == 0 && reply.statusCode == .invalidArgument)
            #expect(reply.statusMessage.contains("method is not valid UTF-8"), "\(reply.statusMessage)")
            #expect(raw.isClosedByServer())

            // A strict prefix of a real path is an unknown method, not that method.
            let prefix = try RawConnection(port: server.port)
            prefix.send(RequestEnvelope(callID: 2, method: String(decoding: path.dropLast(), as: UTF8.self), payload: []))
            let unknown = try #require(prefix.receive())
            #expect(unknown.callID == 2 && unknown.statusCode == .unimplemented)

            // Metadata value 0xFF: metadata{key: "k", value: "\xFF"} inside call_id = 3, method = path.
            let entry = Self.field(1, Array("k".utf8)) + Self.field(2, [0xFF])
            let badMetadata = Frame.encode([0x08, 0x03] + Self.field(2, path) + Self.field(5, entry))
            let meta = try RawConnection(port: server.port)
            meta.send(badMetadata)
            let metaReply = try #require(meta.receive())
            #expect(metaReply.callID == 0 && metaReply.statusCode == .invalidArgument)
            #expect(metaReply.statusMessage.contains("metadata value is not valid UTF-8"), "\(metaReply.statusMessage)")

            // Everyone else is still served, by name.
            _ = try await client.call(LocationMethods.listLocations, ListLocationsRequest())
        }
    }

    /// An error message quotes what the client sent at most 64 characters long, with its
    /// full size, and with control characters escaped: a 4 MB id does not come back whole,
    /// and an escape sequence does not reach the terminal of whoever prints the message.
    @Test func clientValuesInErrorMessagesAreBoundedAndEscaped() async throws {
        try await withServer { server, client in
            let hugeID = String(repeating: "x", count: 4_000_000)
            do {
                _ = try await client.call(LocationMethods.getLocation, GetLocationRequest(id: hugeID))
                Issue.record("a 4 MB id was accepted")
            } catch let error as RPCError {
                #expect(error.code == .invalidArgument)
                #expect(error.message == "id must be a UUID, got \"\(String(repeating: "x", count: 64))…\" (4000000 bytes)")
            }

            let location = Location(name: "Attic", colorHex: "\u{1B}[31m\u{9B}2J")
            do {
                _ = try await client.call(LocationMethods.createLocation, CreateLocationRequest(location: location))
                Issue.record("an escape sequence was accepted as a color")
            } catch let error as RPCError {
                #expect(error.code == .invalidArgument)
                #expect(error.message == #"location.color_hex must be #RRGGBB, got "\u{1B}[31m\u{9B}2J""#)
            }

            // The method name of an unknown method, sent raw: long, and with an escape in it.
            let raw = try RawConnection(port: server.port)
            let method = "/\u{1B}]0;owned\u{7}/" + String(repeating: "m", count: 100_000)
            raw.send(RequestEnvelope(callID: 5, method: method, payload: []))
            let reply = try #require(raw.receive())
            #expect(reply.callID == 5 && reply.statusCode == .unimplemented)
            #expect(reply.statusMessage == #"unknown method "/\u{1B}]0;owned\u{7}/"#
                + String(repeating: "m", count: 52) + "…\" (100012 bytes)")
        }
    }

    /// A client that pipelines without pause, every write ending mid-frame, keeps a
    /// partial frame buffered at all times; that is not a slowloris.
    @Test func continuousPipeliningOutlivesTheFrameTimeout() async throws {
        // Gaps of 50 ms against a 5 s frame timeout: a 1 s timeout was cut by the gaps a busy
        // machine (a TSan run starting dozens of servers) put between the sender's writes.
        let server = try await ServerProcess(arguments: ["--frame-timeout", "5"])
        defer { server.stop() }
        // A sender the machine held up for the frame timeout between two writes (less the
        // server's 250 ms tick) was a slow peer, rightly cut off by the frame timeout: that run
        // proves nothing, and is made again (at most 3 runs). Any other end fails at once.
        var run = try await Self.pipelineEndingMidFrame(port: server.port)
        for _ in 1..<3 where run.connectionError?.statusCode == .deadlineExceeded && run.longestGap >= .milliseconds(4750) {
            run = try await Self.pipelineEndingMidFrame(port: server.port)
        }
        let answered = run.answered
        let error = run.connectionError.map { "\($0.statusCode.name): \($0.statusMessage)" } ?? "none"
        #expect(answered.count == 2 * Self.pipelineRounds,
                "every call answered; connection-level error: \(error), longest gap \(run.longestGap)")
        #expect(answered.allSatisfy { $0 == .ok })
    }

    static let pipelineRounds = 160  // one every 50 ms: 8 s, more than one frame timeout

    /// Two ListLocations calls every 50 ms on a new connection, each write leaving the last
    /// 3 bytes for the next: the codes answered (`.unknown` for a connection-level error, which
    /// ends the run), that error, and the longest gap between two of the sender's writes.
    static func pipelineEndingMidFrame(port: UInt16) async throws
        -> (answered: [StatusCode], connectionError: ResponseEnvelope?, longestGap: Duration) {
        let raw = try RawConnection(port: port)
        let rounds = pipelineRounds
        let codes = Locked<[StatusCode]>([])
        let connectionError = Locked<ResponseEnvelope?>(nil)
        let longestGap = Locked<Duration>(.zero)
        // Plain threads, not the test's task pool: a sender held up for a second
        // by other tests would be a slow peer, rightly cut off.
        let reader = Thread {
            while codes.withLock({ $0.count }) < 2 * rounds, let reply = raw.receive() {
                codes.withLock { $0.append(reply.callID == 0 ? .unknown : reply.statusCode) }
                if reply.callID == 0 {
                    connectionError.withLock { $0 = reply }
                    break
                }
            }
        }
        let sender = Thread {
            var pending: [UInt8] = []
            var lastSend = ContinuousClock.now
            for round in 0..<rounds {
                for call in 1...2 {
                    let envelope = RequestEnvelope(callID: UInt64(2 * round + call),
                                                   method: LocationMethods.listLocations.path,
                                                   payload: ProtoCodec.encode(ListLocationsRequest()))
                    pending += Frame.encode(envelope)
                }
                // Send all but the last 3 bytes, which go out with the next round.
                raw.send(Array(pending.dropLast(3)))
                let now = ContinuousClock.now
                longestGap.withLock { $0 = max($0, now - lastSend) }
                lastSend = now
                pending = Array(pending.suffix(3))
                usleep(50_000)
            }
            raw.send(pending)
        }
        reader.start()
        sender.start()
        var waited = 0
        while !(reader.isFinished && sender.isFinished) && waited < 1200 {  // at most 120 s
            try await Task.sleep(for: .milliseconds(100))
            waited += 1
        }
        return (codes.withLock { $0 }, connectionError.withLock { $0 }, longestGap.withLock { $0 })
    }
}
