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
