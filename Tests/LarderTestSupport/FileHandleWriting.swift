public import Foundation

extension FileHandle {
    /// Writes all of `data` (to a child's stdin pipe), retrying a write a signal interrupts.
    /// Foundation's `write(_:)` traps on EINTR (a `try!` inside), and this test process takes
    /// SIGCHLD whenever a server another test started exits. A pipe whose reader is gone
    /// ends the write (EPIPE): SIGPIPE is ignored in this test process from the first call.
    public func writeRetryingInterrupts(_ data: Data) {
        _ = signal(SIGPIPE, SIG_IGN)
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(fileDescriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}
