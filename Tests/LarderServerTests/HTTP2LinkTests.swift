@testable import LarderHTTP2
@testable import LarderServer
import LarderWire
import Testing
import LarderTestSupport

/// How the link turns a session's events into the core's actions.
@Suite(.offThePool) struct HTTP2LinkTests {
    static func head(_ streamID: Int32, path: String = "/larder.v1.LocationService/GetLocation") -> GRPCRequestHead {
        GRPCRequestHead(streamID: streamID, path: path, authority: nil, contentType: "application/grpc",
                        timeoutNanoseconds: nil, messageEncoding: nil, acceptEncoding: nil, te: nil, metadata: [])
    }

    @Test func aWholeRequestStartsItsCallAndAResetCancelsIt() throws {
        let link = try HTTP2Link(configuration: GRPCServerConfiguration(), resolve: { .unknown($0) })
        // An unknown method starts at its headers, so the core answers it at once, whatever the
        // client goes on to send (not held until a half-close that a streaming client never sends).
        #expect(link.session.deliversWholeRequest?(Self.head(1, path: "/no.Such/Method")) == false)
        guard case .start(let head, let method, let message)? = link.handle(.request(Self.head(1), message: [4])) else {
            Issue.record("a whole request did not start a call")
            return
        }
        #expect(head.streamID == 1 && method.path == "/larder.v1.LocationService/GetLocation" && message == [4])
        #expect(link.started.contains(1) && !link.receiving.contains(1))
        // Messages and ends of streams not taking messages are nothing for the core.
        #expect(link.handle(.message(streamID: 1, [5])) == nil)
        #expect(link.handle(.endOfInput(streamID: 1)) == nil)
        guard case .cancel(1)? = link.handle(.cancelled(streamID: 1, reason: RPCError(.cancelled, "reset"))) else {
            Issue.record("a reset of a started call did not cancel it")
            return
        }
        #expect(link.cancelledSinceDelivery && !link.started.contains(1))
        #expect(link.handle(.cancelled(streamID: 3, reason: RPCError(.cancelled, "reset"))) == nil)
    }

    @Test func aBidirectionalCallStartsAtItsHeadersAndTakesItsMessages() throws {
        let link = try HTTP2Link(configuration: GRPCServerConfiguration(), resolve: { .unknown($0) })
        guard case .start(_, _, let message)? = link.handle(.requestStarted(Self.head(5))) else {
            Issue.record("a streamed request did not start a call")
            return
        }
        #expect(message.isEmpty && link.receiving.contains(5))
        guard case .receive(5, let bytes)? = link.handle(.message(streamID: 5, [6])) else {
            Issue.record("a message of a receiving call was not passed on")
            return
        }
        #expect(bytes == [6])
        guard case .halfClose(5)? = link.handle(.endOfInput(streamID: 5)) else {
            Issue.record("the end of a receiving call was not passed on")
            return
        }
        #expect(!link.receiving.contains(5) && link.started.contains(5))
    }

    @Test func aRequestTheSessionAnsweredIsOnlyCounted() throws {
        let link = try HTTP2Link(configuration: GRPCServerConfiguration(), resolve: { .unknown($0) })
        let reason = RPCError(.invalidArgument, "content-type \"text/plain\" is not application/grpc")
        guard case .refused(7, let path, let error)? = link.handle(.refused(streamID: 7, path: "/a/b", reason: reason)) else {
            Issue.record("a refused request was not passed on to be counted")
            return
        }
        #expect(path == "/a/b" && error == reason)
        #expect(!link.started.contains(7) && !link.receiving.contains(7))
    }
}
