import LarderTestSupport
import Foundation
import Testing
import LarderSystem

/// A real `larder-server` process on an ephemeral loopback port with a
/// temporary database, for end-to-end tests.
final class ServerProcess: @unchecked Sendable {
    enum Failure: Error, CustomStringConvertible {
        case binaryNotFound(String)
        case didNotStart(String)
        var description: String {
            switch self {
            case .binaryNotFound(let path): return "larder-server not found at \(path); run swift build first"
            case .didNotStart(let log): return "larder-server did not start:\n\(log)"
            }
        }
    }

    let directory: URL
    let databasePath: String
    private(set) var port: UInt16 = 0
    private var process: SpawnedProcess?
    /// The exit status of `process` once it has been reaped; nil while it runs.
    private var exitStatus: Int32?
    private let log = Locked<String>("")
    /// Signalled when the stderr reader of the current process has read to its end.
    private var stderrEnded = DispatchSemaphore(value: 0)
    private let extraArguments: [String]
    /// The descriptor limit (`ulimit -n`) the server runs under; nil = inherited.
    private let descriptorLimit: Int?
    /// The file-size limit (`ulimit -f`) the server runs under, in bytes; nil = inherited.
    private let fileSizeLimitBytes: Int?

    var address: String { "127.0.0.1:\(port)" }

    /// Everything the server wrote to stderr so far.
    var stderr: String { log.withLock { $0 } }

    /// True once the server's stderr contains `text` (waits up to `seconds`: a bound for a
    /// line that never comes, long enough for a server on a busy machine or under TSan).
    func waitForLog(_ text: String, seconds: Double = 60) async -> Bool {
        await eventually(seconds: Int(seconds.rounded(.up)), every: .milliseconds(10)) { stderr.contains(text) }
    }

    /// The PostgreSQL database this server owns (dropped after the server is gone).
    private let postgres: PostgresTestDatabase?

    /// Starts a server on a fresh database of `backend` (a temp SQLite file, or a
    /// PostgreSQL database of its own), or on `databasePath` (a file or URL) to share one.
    init(backend: Backend = .sqlite, arguments: [String] = [], databasePath: String? = nil,
         descriptorLimit: Int? = nil, fileSizeLimitBytes: Int? = nil) async throws {
        self.descriptorLimit = descriptorLimit
        self.fileSizeLimitBytes = fileSizeLimitBytes
        directory = try makeTemporaryDirectory(prefix: "larder-e2e")
        if let databasePath {
            postgres = nil
            self.databasePath = databasePath
        } else if backend == .postgres {
            let database = try PostgresTestDatabase()
            postgres = database
            self.databasePath = database.url
        } else {
            postgres = nil
            self.databasePath = directory.appendingPathComponent("larder.sqlite").path
        }
        self.extraArguments = arguments
        try await start()
    }

    /// The directory holding the test binaries, where SwiftPM also puts larder-server and larder.
    static var binDirectory: URL {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        while directory.path != "/" {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("larder-server").path) {
                return directory
            }
            directory = directory.deletingLastPathComponent()
        }
        return executable.deletingLastPathComponent()
    }

    static func binary(_ name: String) throws -> URL {
        let url = binDirectory.appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: url.path) else { throw Failure.binaryNotFound(url.path) }
        return url
    }

    /// Runs larder-server with `arguments` until it exits (for servers that must refuse
    /// to start); returns its exit status and what it wrote to stderr. A server still running
    /// after `seconds` (a bound, not a timing margin) is killed, and its status is SIGKILL's 9.
    static func runToExit(_ arguments: [String], environment: [String: String] = [:],
                          seconds: Double = 120) async throws
        -> (status: Int32, log: String)
    {
        let executable = try binary("larder-server")
        return try await offThePool {
            let process = SpawnedProcess()
            process.executableURL = executable
            process.arguments = arguments
            if !environment.isEmpty {
                process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
            }
            let pipe = Pipe()
            process.standardError = pipe
            try process.run()
            // A server that starts serving instead of refusing would hold stderr open forever:
            // it is killed after `seconds`, and the test sees status -1 with its log.
            let (log, timedOut) = pipe.fileHandleForReading.readToEnd(before: .now + .milliseconds(Int(seconds * 1000)))
            if timedOut { _ = Glibc.kill(process.processIdentifier, SIGKILL) }
            guard let status = process.exitStatus() else {
                process.killAndReap()
                return (-1, String(decoding: log, as: UTF8.self))
            }
            return (status, String(decoding: log, as: UTF8.self))
        }
    }

    /// (Re)starts the server on the same database, on a new ephemeral port.
    func start() async throws {
        let process = SpawnedProcess()
        let arguments = ["--listen", "127.0.0.1:0", "--db", databasePath, "--log-level", "debug"] + extraArguments
        let limits = (descriptorLimit.map { ["ulimit -n \($0)"] } ?? []) + (fileSizeLimitBytes.map { ["ulimit -f \($0 / 512)"] } ?? [])  // sh: 512-byte blocks
        if !limits.isEmpty {
            // exec: the shell becomes the server, so signals and the pid are the server's.
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", (limits + ["exec \"$0\" \"$@\""]).joined(separator: " && "),
                                 try Self.binary("larder-server").path] + arguments
        } else {
            process.executableURL = try Self.binary("larder-server")
            process.arguments = arguments
        }
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        log.withLock { $0 = "" }
        let started = DispatchSemaphore(value: 0)
        let ended = DispatchSemaphore(value: 0)
        stderrEnded = ended
        let portFound = Locked<UInt16?>(nil)
        // Read by a thread of its own, started once the child runs (see `readOnThread`).
        let reader = pipe.fileHandleForReading
        try process.run()
        reader.readOnThread(onData: { [log, portFound] data in
            let text = log.withLock { text -> String in
                text += String(decoding: data, as: UTF8.self)
                return text
            }
            if portFound.withLock({ $0 }) == nil, let port = Self.listeningPort(in: text) {
                portFound.withLock { $0 = port }
                started.signal()
            }
        }, onEnd: {
            started.signal()
            ended.signal()
        })
        self.process = process
        exitStatus = nil
        // Waits off the cooperative pool: a server under TSan on a busy machine takes seconds.
        _ = await offThePool { started.wait(timeout: .now() + 120) }
        guard let port = portFound.withLock({ $0 }) else {
            process.terminate()
            throw Failure.didNotStart(stderr)
        }
        self.port = port
    }

    static func listeningPort(in log: String) -> UInt16? {
        for line in log.split(separator: "\n") where line.contains("event=listening") {
            guard let range = line.range(of: "address=127.0.0.1:") else { continue }
            let digits = line[range.upperBound...].prefix { $0.isNumber }
            return UInt16(digits)
        }
        return nil
    }

    /// Sends SIGTERM and waits for exit; returns the exit status.
    @discardableResult
    func stop() -> Int32 {
        guard let process else { return 0 }
        if let exitStatus { return exitStatus }
        Foundation.kill(process.processIdentifier, SIGTERM)
        return waitForExit(process)
    }

    /// Sends SIGKILL and waits.
    func kill() {
        guard let process, exitStatus == nil else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        _ = waitForExit(process)
    }

    var processIdentifier: Int32 { process?.processIdentifier ?? 0 }

    /// Reaps the process (SIGKILL after 30 s); its status is kept, so the pid, which the
    /// system may then reuse, is never signalled again.
    private func waitForExit(_ process: SpawnedProcess) -> Int32 {
        let status: Int32
        if let exited = process.exitStatus(waitingUpTo: 30) {
            status = exited
        } else {
            process.killAndReap()
            status = SIGKILL
        }
        exitStatus = status
        // The last lines (a sanitizer's report at exit, say) may still be in the pipe: the reader
        // sees end of file once they are read. A bound, for a pipe something else still holds.
        _ = stderrEnded.wait(timeout: .now() + 30)
        recordSanitizerReports()
        return status
    }

    /// Fails the running test when the server (built with `--sanitize=...`) reported a race,
    /// a memory error or a leak: those go to its stderr, which no test would read otherwise.
    private func recordSanitizerReports() {
        let log = stderr
        for marker in ["WARNING: ThreadSanitizer", "ERROR: AddressSanitizer", "ERROR: LeakSanitizer"]
        where log.contains(marker) {
            let start = log.range(of: marker)?.lowerBound ?? log.startIndex
            Issue.record("larder-server reported \(marker):\n\(log[start...].prefix(6000))")
        }
    }

    deinit {
        if let process, exitStatus == nil { process.killAndReap() }
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A value behind a mutex, shareable between threads by reference.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: LockedValue<Value>
    init(_ value: Value) { mutex = LockedValue(value) }
    func withLock<R>(_ body: (inout sending Value) -> sending R) -> sending R { mutex.withLock(body) }
}
