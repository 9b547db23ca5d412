import LarderWire
import COpenSSL
#if canImport(Glibc)
import Glibc
#endif

/// One TLS connection's state machine over memory: the caller moves bytes between the
/// socket and the session, and the session never touches a socket (like `GRPCServerSession`).
///
/// - `receive` takes ciphertext read from the peer, advances the handshake and appends
///   the plaintext it decrypts;
/// - `send` encrypts plaintext;
/// - `takeOutput` hands over the ciphertext to write (handshake messages, records, alerts).
///
/// After any call, write what `takeOutput` gives, also after an error: it may hold the
/// alert that tells the peer why. Not thread-safe: one owner at a time.
public final class TLSSession {
    enum Role {
        case server
        case client(serverName: String, verify: Bool, alpn: [UInt8], ticket: TLSSessionTicket?)
    }

    private let ssl: OpaquePointer
    /// Owned by `ssl` (freed with it): ciphertext in, ciphertext out.
    private let input: OpaquePointer
    private let output: OpaquePointer
    /// Keeps the context alive as long as the session (OpenSSL also holds a reference).
    private let context: SSLContextHandle
    /// The name the client asked for, for its error messages; nil on a server.
    private let serverName: String?
    public let isServer: Bool
    /// True once the handshake has finished on this side.
    public private(set) var isHandshakeComplete = false
    /// True once the peer sent close_notify: no more plaintext will come.
    public private(set) var peerClosed = false
    /// True once any plaintext arrived from the peer (a server that did so accepted this client).
    public private(set) var receivedPlaintext = false
    /// The first failure of a handshake or record: the session is dead after it, and every
    /// later `receive` or `send` throws it again, so all callers report the same cause.
    public private(set) var failure: TLSError?
    /// Client side, during the handshake: what `larder_tls_observe_handshake` saw
    /// (`LARDER_TLS_SAW_CERTIFICATE_REQUEST`, `LARDER_TLS_SENT_CERTIFICATE`); freed in `deinit`.
    private let handshakeFlags: UnsafeMutablePointer<Int32>?

    init(context: SSLContextHandle, role: Role) throws(TLSError) {
        OpenSSLErrorQueue.clear()
        guard let ssl = SSL_new(context.pointer) else {
            throw TLSError(.configuration, .internal, "cannot create a TLS session", detail: OpenSSLErrorQueue.takeText())
        }
        guard let input = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw TLSError(.configuration, .resourceExhausted, "cannot allocate a TLS buffer")
        }
        guard let output = BIO_new(BIO_s_mem()) else {
            BIO_free(input)
            SSL_free(ssl)
            throw TLSError(.configuration, .resourceExhausted, "cannot allocate a TLS buffer")
        }
        SSL_set_bio(ssl, input, output)  // ssl owns both from here
        self.ssl = ssl
        self.input = input
        self.output = output
        self.context = context
        switch role {
        case .server:
            isServer = true
            serverName = nil
            handshakeFlags = nil
            SSL_set_accept_state(ssl)
        case .client(let name, let verify, let alpn, let ticket):
            isServer = false
            serverName = name
            let flags = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
            flags.initialize(to: 0)
            handshakeFlags = flags
            larder_tls_set_handshake_observer(ssl, flags)
            SSL_set_connect_state(ssl)
            try configureClient(serverName: name, verify: verify, alpn: alpn, ticket: ticket)
        }
    }

    deinit {
        if let lastTicketSource { SSL_SESSION_free(lastTicketSource) }
        SSL_free(ssl)
        handshakeFlags?.deallocate()
    }

    private func configureClient(serverName name: String, verify: Bool, alpn: [UInt8], ticket: TLSSessionTicket?)
        throws(TLSError) {
        let isAddress = Self.isIPAddress(name)
        if !isAddress && !name.isEmpty { _ = larder_tls_set_server_name(ssl, name) }  // SNI: names only
        if verify {
            let accepted = isAddress ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name) : SSL_set1_host(ssl, name)
            guard accepted == 1 else {
                throw TLSError(.configuration, .invalidArgument, "\"\(name)\" is not a valid server name or address")
            }
            SSL_set_hostflags(ssl, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
        }
        if !alpn.isEmpty && SSL_set_alpn_protos(ssl, alpn, UInt32(alpn.count)) != 0 {  // 0 is success here
            throw TLSError(.configuration, .internal, "cannot offer ALPN", detail: OpenSSLErrorQueue.takeText())
        }
        // A copy: a connection that resumes shares the session it was given, and its unclean
        // end would mark the caller's ticket not resumable (see `resumptionTicket`).
        if let ticket, let copy = SSL_SESSION_dup(ticket.pointer) {
            _ = SSL_set_session(ssl, copy)  // takes its own reference
            SSL_SESSION_free(copy)
        }
    }

    private static func isIPAddress(_ name: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, name, &v4) == 1 || inet_pton(AF_INET6, name, &v6) == 1
    }

    // MARK: - Moving bytes

    /// Client side: produces the ClientHello (then `takeOutput`). A server waits for the client.
    public func startHandshake() throws(TLSError) {
        _ = try advanceHandshake()
    }

    /// Feeds ciphertext read from the peer; appends what it decrypts to `plaintext`.
    /// Returns true when this call completed the handshake.
    @discardableResult
    public func receive(_ ciphertext: UnsafeRawBufferPointer, into plaintext: inout [UInt8]) throws(TLSError) -> Bool {
        if let failure { throw failure }
        // After the peer's close_notify nothing it sends is read (RFC 8446 §6.1), so nothing is
        // kept either: buffering it would grow without bound.
        if peerClosed { return false }
        var offset = 0
        while offset < ciphertext.count {
            let chunk = Int32(clamping: ciphertext.count - offset)
            let written = BIO_write(input, ciphertext.baseAddress.map { $0 + offset }, chunk)
            guard written > 0 else { throw TLSError(.protocolError, .resourceExhausted, "cannot buffer TLS input") }
            offset += Int(written)
        }
        let completed = isHandshakeComplete ? false : try advanceHandshake()
        if isHandshakeComplete { try readPlaintext(into: &plaintext) }
        return completed
    }

    /// Encrypts `plaintext` into records, taken by `takeOutput`. Only after the handshake.
    public func send(_ plaintext: UnsafeRawBufferPointer) throws(TLSError) {
        guard isHandshakeComplete else {
            throw TLSError(.protocolError, .failedPrecondition, "TLS data sent before the handshake completed")
        }
        if let failure { throw failure }
        var offset = 0
        while offset < plaintext.count {
            OpenSSLErrorQueue.clear()
            let count = Int32(clamping: plaintext.count - offset)
            let written = SSL_write(ssl, plaintext.baseAddress.map { $0 + offset }, count)
            guard written > 0 else { throw recordFailure(SSL_get_error(ssl, written)) }
            offset += Int(written)
        }
    }

    /// `receive` for bytes in an array.
    @discardableResult
    public func receive(_ ciphertext: [UInt8], into plaintext: inout [UInt8]) throws(TLSError) -> Bool {
        var result: Result<Bool, TLSError> = .success(false)
        ciphertext.withUnsafeBytes { raw in
            result = Result { () throws(TLSError) in try receive(raw, into: &plaintext) }
        }
        return try result.get()
    }

    /// `send` for bytes in an array.
    public func send(_ plaintext: [UInt8]) throws(TLSError) {
        var result: Result<Void, TLSError> = .success(())
        plaintext.withUnsafeBytes { raw in result = Result { () throws(TLSError) in try send(raw) } }
        try result.get()
    }

    /// Moves the ciphertext waiting to be written to the peer onto the end of `bytes`.
    public func takeOutput(into bytes: inout [UInt8]) {
        let pending = larder_tls_bio_pending(output)
        guard pending > 0 else { return }
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: pending))
        let read = bytes.withUnsafeMutableBytes { raw in
            BIO_read(output, raw.baseAddress.map { $0 + start }, Int32(clamping: pending))
        }
        bytes.removeLast(pending - max(Int(read), 0))
    }

    /// Ciphertext bytes waiting in `takeOutput`.
    public var pendingOutputBytes: Int { larder_tls_bio_pending(output) }

    /// Ciphertext received but not yet a whole record.
    public var bufferedInputBytes: Int { larder_tls_bio_pending(input) }

    /// Queues close_notify (then `takeOutput`): the polite end of a TLS connection.
    public func close() {
        guard isHandshakeComplete else { return }
        OpenSSLErrorQueue.clear()
        _ = SSL_shutdown(ssl)
        OpenSSLErrorQueue.clear()
    }

    private func advanceHandshake() throws(TLSError) -> Bool {
        OpenSSLErrorQueue.clear()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            isHandshakeComplete = true
            // Whether the server asked for a certificate is known now: stop looking at every record.
            if handshakeFlags != nil { larder_tls_set_handshake_observer(ssl, nil) }
            return true
        }
        let error = SSL_get_error(ssl, result)
        if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE { return false }
        throw recordFailure(error)
    }

    /// Decrypts every whole record buffered into `plaintext`. Each `SSL_read` lands in a
    /// stack buffer of one record's maximum size and only the bytes it gave are appended, so
    /// a peer that sends one byte per record costs a copy of one byte, not a record-sized fill.
    private func readPlaintext(into plaintext: inout [UInt8]) throws(TLSError) {
        let failed: TLSError? = withUnsafeTemporaryAllocation(byteCount: Self.maxRecordPlaintext, alignment: 1) { scratch in
            while true {
                OpenSSLErrorQueue.clear()
                let read = SSL_read(ssl, scratch.baseAddress, Int32(scratch.count))
                if read > 0 {
                    receivedPlaintext = true
                    plaintext.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[0..<Int(read)]))
                    continue
                }
                let error = SSL_get_error(ssl, read)
                switch error {
                case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                    return nil
                case SSL_ERROR_ZERO_RETURN:
                    peerClosed = true
                    return nil
                default:
                    return self.recordFailure(error)
                }
            }
        }
        if let failed { throw failed }
    }

    /// The most plaintext one TLS record carries (RFC 8446 §5.1).
    private static let maxRecordPlaintext = 16 * 1024

    // MARK: - What was negotiated

    /// The ALPN protocol the server selected; nil when none was.
    public var negotiatedProtocol: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// "TLSv1.3", "TLSv1.2".
    public var protocolVersion: String { String(cString: SSL_get_version(ssl)) }

    /// True when the handshake resumed an earlier session.
    public var isResumed: Bool { SSL_session_reused(ssl) == 1 }

    /// True once the handshake settled on TLS 1.2 (a server: once it answered the ClientHello).
    /// From then on the client sends no ClientHello again (renegotiation is off), and its
    /// handshake records include its Finished, encrypted.
    public var isTLS12: Bool { SSL_version(ssl) == TLS1_2_VERSION }

    /// The peer certificate's subject (RFC 2253, "CN=alice,O=Example"); nil when it sent none.
    /// On a server, only a certificate that passed verification is ever accepted.
    public var peerCertificateSubject: String? {
        guard let certificate = SSL_get1_peer_certificate(ssl) else { return nil }
        defer { X509_free(certificate) }
        return X509NameText.subject(of: certificate)
    }

    /// This connection's session, for resuming on the next connection (client side); nil
    /// until the server has sent a resumable one (TLS 1.3 sends tickets after the handshake,
    /// read by a `receive`).
    ///
    /// The ticket is a copy: OpenSSL marks the live session not resumable when the
    /// connection ends without close_notify (`SSL_free` then treats it as bad, as RFC 2246
    /// asked), and a ticket sharing that object would silently cost the next connection a
    /// full handshake.
    public var resumptionTicket: TLSSessionTicket? {
        guard let session = SSL_get_session(ssl), SSL_SESSION_is_resumable(session) == 1,
              let copy = SSL_SESSION_dup(session) else { return nil }
        return TLSSessionTicket(owning: copy)
    }

    /// True when `resumptionTicket` would give one: the same check, without the copy.
    public var hasResumptionTicket: Bool {
        guard let session = SSL_get_session(ssl) else { return false }
        return SSL_SESSION_is_resumable(session) == 1
    }

    /// `resumptionTicket`, only when the session changed since the last one this returned
    /// (TLS 1.3 makes a new session for each ticket the server sends): cheap to ask after
    /// every `receive`.
    public func takeNewResumptionTicket() -> TLSSessionTicket? {
        guard let current = SSL_get_session(ssl), current != lastTicketSource,
              let ticket = resumptionTicket else { return nil }
        _ = SSL_SESSION_up_ref(current)  // held, so its address cannot be reused by a later session
        if let previous = lastTicketSource { SSL_SESSION_free(previous) }
        lastTicketSource = current
        return ticket
    }

    /// The session `takeNewResumptionTicket` last copied (one reference held, freed in
    /// `deinit`); compared by identity only.
    private var lastTicketSource: OpaquePointer?

    // MARK: - Errors

    private func recordFailure(_ sslError: Int32) -> TLSError {
        let entries = OpenSSLErrorQueue.take()
        let detail = entries.map(\.text).joined(separator: "; ")
        let verifyResult = SSL_get_verify_result(ssl)
        let error = TLSFailure.classify(sslError: sslError, reasons: entries.map(\.reason), verifyResult: Int32(truncatingIfNeeded: verifyResult),
                                   isServer: isServer, serverName: serverName, handshakeDone: isHandshakeComplete,
                                   helloReceived: isServer && SSL_get_state(ssl) != TLS_ST_BEFORE, detail: detail)
        failure = error
        return error
    }

    /// Client side: why the connection probably ended when it ended without a TLS error to
    /// say so (the socket was reset or closed): the recorded `failure` if there is one; else,
    /// when the server asked for a certificate and then closed before sending any plaintext,
    /// that it refused this client's certificate or the lack of one. TLS 1.3 finishes the
    /// client's handshake before the server checks the certificate, and the server's alert
    /// is lost when its close resets the connection first. Nil when nothing points at TLS.
    public var likelyCauseOfAbruptEnd: TLSError? {
        if let failure { return failure }
        guard let handshakeFlags, isHandshakeComplete, !receivedPlaintext else { return nil }
        let flags = handshakeFlags.pointee
        guard flags & Int32(LARDER_TLS_SAW_CERTIFICATE_REQUEST) != 0 else { return nil }
        return TLSFailure.abruptEndAfterCertificateRequest(sentCertificate: flags & Int32(LARDER_TLS_SENT_CERTIFICATE) != 0)
    }
}
