import LarderSystem
import LarderTLS
import LarderWire

/// The request frames of one connection not yet written, in order; with TLS, also the records
/// sealed from the frame being written. Plain value state: `Connection` keeps it in a mutex and
/// only ever writes without blocking, so no caller waits on a socket while holding it.
///
/// A frame none of which was written can be dropped (its call expired or was cancelled first);
/// one partly written is finished, or the server would misread the frames after it.
struct OutboundQueue {
    private var frames: [(callID: UInt64, bytes: [UInt8])] = []
    /// Frames before `head` are written (and emptied).
    private var head = 0
    /// Cleartext: bytes of `frames[head]` written.
    private var headWritten = 0
    /// TLS: the records of the frame last taken from `frames`, and how many of their bytes are written.
    private var sealed: [UInt8] = []
    private var sealedWritten = 0

    /// True when nothing waits to be written.
    var isEmpty: Bool { head == frames.count && sealedWritten == sealed.count }

    mutating func append(_ frame: [UInt8], callID: UInt64) {
        frames.append((callID, frame))
    }

    /// Drops the frames of `callIDs` none of which was written, in one pass (calls expiring
    /// together, each behind the others; a cancelled call alone).
    mutating func drop(callIDs: Set<UInt64>) {
        guard firstUnwritten < frames.count else { return }
        frames[firstUnwritten...].removeAll { callIDs.contains($0.callID) }
    }

    /// The calls whose frames wait with none of their bytes written.
    var unwrittenCallIDs: Set<UInt64> {
        Set(frames[min(firstUnwritten, frames.count)...].map(\.callID))
    }

    /// The first frame none of which was written (with TLS, taken frames are sealed already).
    private var firstUnwritten: Int { headWritten > 0 ? head + 1 : head }

    /// Writes what the socket takes now, without blocking.
    /// - Returns: true when everything was written, false when the socket is full (poll for
    ///   POLLOUT and call again); the socket's or TLS's error, after which the connection is over.
    mutating func write(to fd: Int32, tls: TLSChannel?) -> Result<Bool, RPCError> {
        while true {
            if sealedWritten < sealed.count {
                let outcome = sealed.withUnsafeBytes { Socket.sendSome(fd, UnsafeRawBufferPointer(rebasing: $0[sealedWritten...])) }
                switch outcome {
                case .sent(let count): sealedWritten += count
                case .wouldBlock: return .success(false)
                case .failed(let error): return .failure(.unavailable(error.message))
                }
                continue
            }
            if !sealed.isEmpty {
                sealed = []
                sealedWritten = 0
            }
            guard head < frames.count else {
                frames.removeAll(keepingCapacity: frames.capacity <= 64)
                head = 0
                return .success(true)
            }
            if let tls {
                switch tls.seal(frames[head].bytes) {
                case .success(let records): sealed = records
                case .failure(let error): return .failure(RPCError(error.code, "TLS: \(error.message)"))
                }
                finishHead()
                continue
            }
            let outcome = frames[head].bytes.withUnsafeBytes {
                Socket.sendSome(fd, UnsafeRawBufferPointer(rebasing: $0[headWritten...]))
            }
            switch outcome {
            case .sent(let count):
                headWritten += count
                if headWritten == frames[head].bytes.count { finishHead() }
            case .wouldBlock: return .success(false)
            case .failed(let error): return .failure(.unavailable(error.message))
            }
        }
    }

    /// Frees the frame at `head` and moves on; drops the written frames once they are most of the array.
    private mutating func finishHead() {
        frames[head].bytes = []
        head += 1
        headWritten = 0
        if head >= 64 && head * 2 >= frames.count {
            frames.removeFirst(head)
            head = 0
        }
    }
}
