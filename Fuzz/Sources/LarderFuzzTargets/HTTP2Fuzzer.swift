import LarderHTTP2
import LarderSystem
import LarderWire

/// Feeds a client's byte stream to a `GRPCServerSession` in pieces whose sizes come from the
/// input, with an echo responder answering every call, and checks the session's bookkeeping:
/// no crash, no event for an unknown stream, held bytes never negative and zero once no call is
/// in flight, and a GOAWAY in the output whenever the session gives up. Requests for a
/// reflection path stream their messages as events; the others are delivered whole
/// (`deliversWholeRequest`), as the server has them.
///
/// Input: byte 0 seeds the piece sizes, the rest is what the client sent.
enum HTTP2Fuzzer {
    static func run(_ data: UnsafeRawBufferPointer) throws(FuzzFailure) {
        guard data.count >= 1 else { return }
        var random = SplitMix64(seed: UInt64(data[0]))
        var configuration = GRPCServerConfiguration()
        configuration.maxMessageSize = 64 * 1024
        configuration.maxConcurrentStreams = 16
        configuration.clock = { 1_000_000_000 }
        let session: GRPCServerSession
        do {
            session = try GRPCServerSession(configuration: configuration)
        } catch {
            throw FuzzFailure("cannot create a session: \(error)")
        }
        session.deliversWholeRequest = { !$0.path.contains("Reflection") }
        let stream = UnsafeRawBufferPointer(rebasing: data[1...])
        var responder = EchoResponder()
        var output: [UInt8] = []
        var offset = 0
        while offset < stream.count {
            let piece = min(stream.count - offset, 1 + Int(random.next() % 512))
            let events: [GRPCServerEvent]
            do {
                events = try session.receive(UnsafeRawBufferPointer(rebasing: stream[offset..<(offset + piece)]))
            } catch {
                output.removeAll(keepingCapacity: true)
                do { _ = try session.writeOutput(into: &output) } catch {
                    throw FuzzFailure("writing the GOAWAY after \(error) failed: \(error)")
                }
                guard output.count >= 17 else { throw FuzzFailure("session failed (\(error)) without output") }
                return
            }
            offset += piece
            try responder.handle(events, session)
            output.removeAll(keepingCapacity: true)
            do {
                try responder.handle(try session.writeOutput(into: &output), session)
            } catch let failure as FuzzFailure {
                throw failure
            } catch {
                throw FuzzFailure("writeOutput threw \(error)")
            }
            try check(session, responder)
        }
    }

    static func check(_ session: GRPCServerSession, _ responder: EchoResponder) throws(FuzzFailure) {
        if session.heldOutputBytes < 0 { throw FuzzFailure("heldOutputBytes \(session.heldOutputBytes) < 0") }
        if session.activeStreamCount == 0 && session.heldOutputBytes != 0 {
            throw FuzzFailure("\(session.heldOutputBytes) bytes held with no stream open")
        }
        if session.engineMemoryBytes <= 0 { throw FuzzFailure("engine memory \(session.engineMemoryBytes)") }
    }
}

/// Echoes every request message and ends each call with OK when the client half-closes.
///
/// A call is *open* from its `requestStarted` until the responder answers it or the session
/// cancels it, and *receiving* until its `endOfInput`: a client may still reset a stream it has
/// half-closed, so a cancel after the end of input is legitimate while the answer is unsent.
struct EchoResponder {
    private var open: Set<Int32> = []
    private var receiving: Set<Int32> = []

    mutating func handle(_ events: [GRPCServerEvent], _ session: GRPCServerSession) throws(FuzzFailure) {
        // Events report input already processed: a stream a later event of the batch cancels is
        // gone by now, so sends on it may be refused.
        let cancelledLater = Set(events.compactMap { if case .cancelled(let id, _) = $0 { id } else { nil } })
        for event in events {
            switch event {
            case .request(let head, let message):
                guard open.insert(head.streamID).inserted else { throw FuzzFailure("stream \(head.streamID) started twice") }
                guard !head.path.contains("Reflection") else { throw FuzzFailure("a streaming path came whole") }
                let echoed = session.sendMessage(streamID: head.streamID, message)
                    && session.sendTrailers(streamID: head.streamID, status: .ok)
                if echoed {
                    open.remove(head.streamID)
                } else if !cancelledLater.contains(head.streamID) {
                    throw FuzzFailure("the answer on \(head.streamID) was refused")
                }
            case .requestStarted(let head):
                guard open.insert(head.streamID).inserted else { throw FuzzFailure("stream \(head.streamID) started twice") }
                receiving.insert(head.streamID)
                guard head.path.hasPrefix("/") else { throw FuzzFailure("path \(head.path) without /") }
            case .message(let id, let bytes):
                guard receiving.contains(id) else { throw FuzzFailure("message on stream \(id), not receiving") }
                guard session.sendMessage(streamID: id, bytes) || cancelledLater.contains(id) else {
                    throw FuzzFailure("echo on open stream \(id) refused")
                }
            case .endOfInput(let id):
                guard receiving.remove(id) != nil else { throw FuzzFailure("end of input on stream \(id), not receiving") }
                if session.sendTrailers(streamID: id, status: .ok) {
                    open.remove(id)
                } else if !cancelledLater.contains(id) {
                    throw FuzzFailure("trailers on \(id) refused")
                }
            case .cancelled(let id, _):
                guard open.remove(id) != nil else { throw FuzzFailure("cancel of stream \(id), not open") }
                receiving.remove(id)
                if session.sendMessage(streamID: id, [1]) { throw FuzzFailure("send on cancelled stream \(id) accepted") }
            case .refused(let id, _, _):
                // Answered by the session before any event opened it.
                guard !open.contains(id) else { throw FuzzFailure("stream \(id) refused while open") }
                if session.sendMessage(streamID: id, [1]) { throw FuzzFailure("send on refused stream \(id) accepted") }
            }
        }
    }
}
