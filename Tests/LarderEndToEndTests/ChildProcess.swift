import Foundation
import LarderTestSupport

/// A program run by a test with its output in files (no pipe to fill up), that
/// can be signalled and waited for with a generous bound.
final class ChildProcess: @unchecked Sendable {
    let process = SpawnedProcess()
    private let directory: URL
    private let outURL: URL
    private let errURL: URL

    init(_ executable: URL, _ arguments: [String], environment: [String: String] = [:],
         currentDirectory: URL? = nil) throws {
        directory = try makeTemporaryDirectory(prefix: "larder-child")
        outURL = directory.appendingPathComponent("stdout")
        errURL = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        // Spawned with no signal blocked (see `SpawnedProcess`): test threads block most signals,
        // and a shell inheriting that mask would never see the SIGTERM or SIGINT a test sends.
        try process.run()
    }

    deinit {
        if isRunning { process.killAndReap() }
        try? FileManager.default.removeItem(at: directory)
    }

    var stdout: String { (try? String(contentsOf: outURL, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }

    /// Waits until `condition` holds (polling without holding a thread of the cooperative
    /// pool), up to `seconds`.
    @discardableResult
    func waitFor(seconds: Double = 120, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return condition()
    }

    /// Whether the process still runs (asked of the kernel, and reaping it when it has ended).
    var isRunning: Bool { process.isRunning }

    /// Waits for the exit (killing it after `seconds`); its status, or nil when it had to be killed.
    func waitForExit(seconds: Double = 180) async -> Int32? {
        if await !waitFor(seconds: seconds, { !isRunning }) {
            process.killAndReap()
            return nil
        }
        return process.exitStatus(waitingUpTo: 0)
    }

    /// Sends `number`, unless the process was reaped already (its pid may be another's by now).
    func signal(_ number: Int32) { process.signal(number) }
}

/// Whether process `pid` still exists (and is not a zombie).
func processIsAlive(_ pid: Int32) -> Bool {
    guard kill(pid, 0) == 0 else { return false }
    let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
    guard let close = stat.lastIndex(of: ")") else { return false }
    return !stat[stat.index(after: close)...].hasPrefix(" Z")
}
