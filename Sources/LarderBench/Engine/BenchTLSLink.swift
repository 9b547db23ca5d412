import LarderSystem
import LarderTLS
import LarderWire
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The TLS side of one bench connection: its session, the ciphertext waiting for the socket,
/// and the buffers a read decrypts through. Not thread-safe: owned by one loop (or one seed client).
final class BenchTLSLink {
    /// What writing the waiting ciphertext did.
    enum Flush {
        /// Everything was written.
        case done
        /// The socket took part of it; wait until it is writable.
        case blocked
        case failed(RPCError)
    }

    let session: TLSSession
    /// Ciphertext to write, from `written` on.
    private var ciphertext: [UInt8] = []
    private var written = 0
    /// What the last `open` decrypted.
    private(set) var plaintext: [UInt8] = []
    /// Where a socket read lands before it is decrypted.
    let readBuffer: UnsafeMutableRawPointer
    static let readCapacity = 64 * 1024

    init(session: TLSSession) {
        self.session = session
        guard let buffer = malloc(Self.readCapacity) else { fatalError("out of memory") }
        readBuffer = buffer
        plaintext.reserveCapacity(Self.readCapacity)
    }

    deinit { free(readBuffer) }

    /// Whether ciphertext waits to be written (records, or what a read made: an alert, a key update).
    var hasOutput: Bool { written < ciphertext.count || session.pendingOutputBytes > 0 }

    /// Encrypts `bytes` into records, written by `flush`.
    func seal(_ bytes: UnsafeRawBufferPointer) throws(TLSError) {
        guard !bytes.isEmpty else { return }
        try session.send(bytes)
    }

    /// `seal` for bytes in an array.
    func seal(_ bytes: [UInt8]) throws(TLSError) {
        var result: Result<Void, TLSError> = .success(())
        bytes.withUnsafeBytes { raw in result = Result { () throws(TLSError) in try seal(raw) } }
        try result.get()
    }

    /// True once the server sent close_notify: nothing it sends after is read.
    var peerClosed: Bool { session.peerClosed }

    /// Decrypts the first `count` bytes of `readBuffer` into `plaintext` (replacing what it held).
    func open(count: Int) throws(TLSError) {
        plaintext.removeAll(keepingCapacity: true)
        try session.receive(UnsafeRawBufferPointer(start: readBuffer, count: count), into: &plaintext)
    }

    /// Writes as much waiting ciphertext to `fd` as it takes.
    func flush(_ fd: Int32) -> Flush {
        session.takeOutput(into: &ciphertext)
        while written < ciphertext.count {
            let pending = ciphertext.count - written
            let result = ciphertext.withUnsafeBytes { raw in
                TCPSocket.write(fd, from: raw.baseAddress! + written, count: pending)
            }
            switch result {
            case .bytes(let count):
                written += count
                if count < pending { return .blocked }
            case .wouldBlock:
                return .blocked
            case .closed:
                return .failed(.unavailable("server closed the connection"))
            case .failed(let code):
                return .failed(.unavailable("write failed: \(TCPSocket.errnoText(code))"))
            }
        }
        ciphertext.removeAll(keepingCapacity: true)
        written = 0
        return .done
    }

    /// `flush` until everything is written or `deadline` (monotonic ns) passes, waiting in poll().
    func flushAll(_ fd: Int32, deadline: UInt64, address: BenchAddress) throws(RPCError) {
        while true {
            switch flush(fd) {
            case .done: return
            case .failed(let error): throw error
            case .blocked:
                guard BenchTLSLink.wait(fd, events: Int16(POLLOUT), deadline: deadline) else {
                    throw .unavailable("writing to \(address) timed out")
                }
            }
        }
    }

    /// Reads once from `fd` (waiting up to `deadline`) and decrypts into `plaintext`; a TLS
    /// failure is sent its alert, then thrown as `describe` words it.
    /// - Returns: false when the server closed the connection.
    func readOnce(_ fd: Int32, deadline: UInt64, address: BenchAddress, describe: (TLSError) -> RPCError)
        throws(RPCError) -> Bool {
        if session.peerClosed { return false }  // close_notify: the end, even with TCP left open
        while true {
            switch TCPSocket.read(fd, into: readBuffer, count: Self.readCapacity) {
            case .bytes(let count):
                do throws(TLSError) {
                    try open(count: count)
                } catch {
                    try? flushAll(fd, deadline: deadline, address: address)  // the alert that says why
                    throw describe(error)
                }
                return true
            case .closed:
                return false
            case .wouldBlock:
                guard BenchTLSLink.wait(fd, events: Int16(POLLIN), deadline: deadline) else {
                    throw .deadlineExceeded("\(address) did not answer in time")
                }
            case .failed(let code):
                throw .unavailable("read from \(address) failed: \(TCPSocket.errnoText(code))")
            }
        }
    }

    /// Whether the server has sent a session the next connection can resume.
    var hasTicket: Bool { session.hasResumptionTicket }

    /// Reads until the server has sent a resumable session (a TLS 1.3 ticket comes after the
    /// handshake) or `milliseconds` pass, whichever is first; returns the plaintext read meanwhile.
    /// A server that sends no ticket costs the wait once; the run does not depend on it.
    func awaitTicket(_ fd: Int32, address: BenchAddress, milliseconds: UInt64) throws(RPCError) -> [UInt8] {
        let deadline = MonotonicClock.nanoseconds() + milliseconds * 1_000_000
        var gathered: [UInt8] = []
        while !hasTicket {
            do throws(RPCError) {
                guard try readOnce(fd, deadline: deadline, address: address, describe: { error in
                    RPCError(error.code, "TLS error on the connection to \(address): \(error.message)")
                }) else { break }
            } catch where error.code == .deadlineExceeded {
                break
            }
            gathered += plaintext
        }
        return gathered
    }

    /// Waits in poll() until `fd` is ready for `events` or `deadline` passes; false on timeout.
    static func wait(_ fd: Int32, events: Int16, deadline: UInt64) -> Bool {
        while true {
            let now = MonotonicClock.nanoseconds()
            guard now < deadline else { return false }
            var probe = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&probe, 1, Int32(min((deadline - now) / 1_000_000 + 1, 60_000)))
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { return true }  // let the read or write report it
        }
    }
}
