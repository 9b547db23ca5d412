import Foundation
import LarderSystem
import LarderTestSupport
import LarderWire

/// What a run of the real `larder` binary printed, and its exit status.
struct CLIRun {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// The `larder` CLI's connect timeout and per-call deadline in these tests (`LARDER_TIMEOUT`):
/// a bound for a hung server, not the 10 s default, which a server under TSan on a busy machine
/// (a connect, a TLS handshake, a create committed with fsync) can run past.
let cliTestTimeout = "120s"

/// Runs the `larder` binary against `server` with `arguments`, feeding `stdin` when given.
func runLarder(_ arguments: [String], server: ServerProcess, stdin: String? = nil) async throws -> CLIRun {
    var environment = ProcessInfo.processInfo.environment
    environment["TZ"] = "UTC"
    environment.removeValue(forKey: "LARDER_SERVER")
    environment.removeValue(forKey: "LARDER_TOKEN")
    environment["LARDER_TIMEOUT"] = cliTestTimeout
    return try await runBinary("larder", ["--server", server.address] + arguments, environment: environment, stdin: stdin)
}

/// Runs one of the package's binaries to its exit, off the cooperative pool, and returns what it printed.
func runBinary(_ name: String, _ arguments: [String], environment: [String: String],
               stdin: String? = nil) async throws -> CLIRun {
    try await runProcess(try ServerProcess.binary(name), arguments, environment: environment, stdin: stdin.map { Data($0.utf8) })
}

/// Runs `executable` to its exit, off the cooperative pool, feeding `stdin` when given.
func runProcess(_ executable: URL, _ arguments: [String], environment: [String: String],
                stdin: Data? = nil) async throws -> CLIRun {
    try await offThePool {
        let process = SpawnedProcess()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = stdin == nil ? FileHandle.nullDevice : input
        try process.run()
        // stderr is read beside stdout: one after the other, a child that filled the stderr
        // pipe (64 KiB) before closing stdout would wait for us forever, and we for it.
        let stderrData = LockedValue(Data())
        let stderrEnded = DispatchSemaphore(value: 0)
        err.fileHandleForReading.readOnThread(onData: { data in stderrData.withLock { $0.append(data) } },
                                              onEnd: { stderrEnded.signal() })
        if let stdin {
            input.fileHandleForWriting.writeRetryingInterrupts(stdin)
            try input.fileHandleForWriting.close()
        }
        // A bound for a child that hangs, not a timing margin: it is killed, and the test sees -1.
        let (stdoutData, timedOut) = out.fileHandleForReading.readToEnd(before: .now + .seconds(600))
        if timedOut { process.killAndReap() }
        _ = stderrEnded.wait(timeout: .now() + 60)
        let status = timedOut ? -1 : process.exitStatus() ?? { process.killAndReap(); return -1 }()
        return CLIRun(status: status, stdout: String(decoding: stdoutData, as: UTF8.self),
                      stderr: String(decoding: stderrData.withLock { $0 }, as: UTF8.self))
    }
}

/// One HTTP/1.1 request over a plain socket; returns the status code and body.
func httpRequest(port: UInt16, method: String = "GET", path: String) throws -> (status: Int, body: String) {
    let connection = try RawConnection(port: port)
    connection.send(Array("\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/plain\r\n\r\n".utf8))
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    for _ in 0..<10_000 {
        let count = chunk.withUnsafeMutableBytes { connection.receiveSome(into: $0, within: 120) }  // to the server's close
        if count <= 0 { break }
        bytes += chunk[0..<count]
    }
    let text = String(decoding: bytes, as: UTF8.self)
    guard let headEnd = text.range(of: "\r\n\r\n") else { throw RPCError.internalError("no HTTP head in \(text)") }
    let statusLine = text[..<headEnd.lowerBound].split(separator: "\r\n").first ?? ""
    let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "") ?? 0
    return (status, String(text[headEnd.upperBound...]))
}

/// The samples of a Prometheus text exposition: series (name with labels) → value.
func prometheusSamples(_ text: String) -> [String: Double] {
    var samples: [String: Double] = [:]
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
        guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
        samples[String(line[..<space])] = value
    }
    return samples
}

/// The port in the server's `event=metrics_listening address=127.0.0.1:PORT` line.
func metricsPort(of server: ServerProcess) async -> UInt16? {
    guard await server.waitForLog("event=metrics_listening") else { return nil }
    for line in server.stderr.split(separator: "\n") where line.contains("event=metrics_listening") {
        guard let range = line.range(of: "address=127.0.0.1:") else { continue }
        return UInt16(line[range.upperBound...].prefix { $0.isNumber })
    }
    return nil
}
