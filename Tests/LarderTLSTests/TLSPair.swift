import LarderTLS

/// A client and a server session joined in memory: `pump` moves each side's output to the
/// other until neither has anything left to say.
struct TLSPair {
    let client: TLSSession
    let server: TLSSession
    var clientReceived: [UInt8] = []
    var serverReceived: [UInt8] = []

    init(client: TLSSession, server: TLSSession) {
        self.client = client
        self.server = server
    }

    /// Runs the handshake (and whatever is queued) to quiet; throws the first side's error.
    mutating func pump() throws(TLSError) {
        try client.startHandshake()
        for _ in 0..<32 {
            var toServer: [UInt8] = []
            client.takeOutput(into: &toServer)
            if !toServer.isEmpty { try server.receive(toServer, into: &serverReceived) }
            var toClient: [UInt8] = []
            server.takeOutput(into: &toClient)
            if !toClient.isEmpty { try client.receive(toClient, into: &clientReceived) }
            if toServer.isEmpty && toClient.isEmpty && client.pendingOutputBytes == 0 { return }
        }
    }

    /// Which side failed, with its error: the other side usually fails later on the alert.
    enum Failure: Error {
        case client(TLSError)
        case server(TLSError)
    }

    /// Like `pump`, but says which side failed; the failing side's alert still reaches the other.
    mutating func pumpReportingSide() -> Failure? {
        do { try client.startHandshake() } catch { return .client(error) }
        for _ in 0..<32 {
            var toServer: [UInt8] = []
            client.takeOutput(into: &toServer)
            if !toServer.isEmpty {
                do { try server.receive(toServer, into: &serverReceived) }
                catch { return .server(error) }
            }
            var toClient: [UInt8] = []
            server.takeOutput(into: &toClient)
            if !toClient.isEmpty {
                do { try client.receive(toClient, into: &clientReceived) }
                catch { return .client(error) }
            }
            if toServer.isEmpty && toClient.isEmpty { return nil }
        }
        return nil
    }
}
