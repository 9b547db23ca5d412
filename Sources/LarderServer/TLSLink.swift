import LarderSystem
import LarderTLS

/// The TLS side of one connection: its session and the ciphertext not yet written.
/// Loop thread only (owned by its `Connection`).
///
/// Bytes read from the socket go through `session.receive` before the protocol sniffing
/// and the transports see them; the connection's plaintext output is sealed into
/// `ciphertext` by `Connection.flush`, which writes that instead.
final class TLSLink {
    let session: TLSSession
    /// Monotonic time the ClientHello's first byte arrived: the handshake timeout counts from it.
    let startedAt: UInt64
    /// Encrypted bytes waiting for the socket.
    var ciphertext = OutputBuffer()
    /// True once close_notify was queued (the connection is closing).
    var closeNotified = false
    /// True while this handshake counts against `--tls-max-handshakes`.
    var holdsHandshakeSlot = false
    /// Where the peer's ciphertext stands between records.
    var records = TLSRecordBoundary()
    /// Monotonic time since which the peer has held a TLS record open (after the handshake):
    /// it counts as a partial frame for `--frame-timeout`, since OpenSSL passes nothing of a
    /// record on until it is whole. Restarted by a read that decrypted plaintext; nil between records.
    var partialRecordSince: UInt64?
    /// The verified client certificate's subject, set when the handshake completes.
    private(set) var clientSubject: String?

    init(session: TLSSession, startedAt: UInt64) {
        self.session = session
        self.startedAt = startedAt
    }

    /// Follows the record boundaries of `ciphertext` just read (`now`: its read time);
    /// `decrypted` says whether the read gave plaintext (a record completed with some).
    func track(_ ciphertext: UnsafeRawBufferPointer, decrypted: Bool, now: UInt64) {
        records.consume(ciphertext)
        if !records.isInsideRecord || !session.isHandshakeComplete {
            partialRecordSince = nil
        } else if decrypted || partialRecordSince == nil {
            partialRecordSince = now
        }
    }

    /// Records what the finished handshake established.
    func established() {
        clientSubject = session.peerCertificateSubject
    }
}
