import COpenSSL

/// A resumable session from an earlier connection (TLS 1.3 ticket or 1.2 session), offered
/// on the next connection to the same server to skip the full handshake.
///
/// Owns one reference to an `SSL_SESSION`, which is immutable once resumable and
/// reference-counted by OpenSSL, hence `@unchecked Sendable`.
public final class TLSSessionTicket: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Takes over one reference (from `SSL_get1_session`).
    init(owning pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { SSL_SESSION_free(pointer) }
}
