public import Foundation

extension Process {
    /// Waits up to `seconds` for the child to end and returns what `terminationStatus` would
    /// (its exit code, or the signal that killed it); nil while it still runs.
    ///
    /// Asks the kernel (`waitpid`) instead of Foundation: Foundation learns of a child's end
    /// through SIGCHLD, and under ThreadSanitizer, with dozens of children ending at once, it
    /// missed some — `waitUntilExit` then never returned and the whole test run hung.
    public func exitStatus(waitingUpTo seconds: Double = 300) -> Int32? {
        let pid = processIdentifier
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while true {
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid {
                let signal = status & 0x7f
                return signal == 0 ? (status >> 8) & 0xff : signal
            }
            // Foundation reaped it first: then it knows the status.
            if reaped == -1 && errno == ECHILD && !isRunning { return terminationStatus }
            if ContinuousClock.now >= deadline { return nil }
            usleep(5_000)
        }
    }

    /// Kills the child (SIGKILL) and reaps it.
    public func killAndReap() {
        kill(processIdentifier, SIGKILL)
        _ = exitStatus(waitingUpTo: 60)
    }
}

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
