import Foundation
import LarderTestSupport
import LarderAPI
import LarderClient
import LarderWire
import Testing

@Suite("SIGHUP reloads the token file", .offThePool)
struct ReloadEndToEndTests {
    /// A new token is required from the SIGHUP on, while a call admitted with the old one
    /// (a write held up by a lock on the database) still finishes OK; a file that no longer
    /// holds a token keeps the token in force and logs an error.
    @Test func sighupSwapsTheTokenWithoutTouchingCallsInFlight() async throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-reload")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenFile = try writeTokenFile("old-token", in: directory)

        // The held-up write must outlast the test's steps on a busy machine: SQLite's default 5 s
        // busy timeout failed it UNAVAILABLE there.
        let server = try await ServerProcess(arguments: ["--auth-token-file", tokenFile, "--drain-timeout", "120",
                                                         "--busy-timeout", "300"])
        defer { server.stop() }
        let old = try LarderClient.loopback(port: server.port, token: "old-token")
        let new = try LarderClient.loopback(port: server.port, token: "new-token")
        defer {
            old.close()
            new.close()
        }
        _ = try await old.call(LocationMethods.listLocations, ListLocationsRequest())
        await expectStatus(.unauthenticated) { try await new.call(LocationMethods.listLocations, ListLocationsRequest()) }

        // A write admitted with the old token, waiting for the database lock.
        let lock = try SQLiteLock(path: server.databasePath)
        let write = Task(executorPreference: BlockingWorkExecutor.shared) {
            try await old.call(LocationMethods.createLocation,
                               CreateLocationRequest(location: Location(name: "In flight", colorHex: "#010203")),
                               timeout: .seconds(300))
        }
        var inFlight: Int64 = 0
        let waitUntil = ContinuousClock.now + .seconds(120)
        while inFlight < 2 && ContinuousClock.now < waitUntil {
            inFlight = try await old.call(AdminMethods.getMetrics, GetMetricsRequest()).callsInFlight
            if inFlight < 2 { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(inFlight == 2, "the write waits for the lock")

        try "new-token\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        kill(server.processIdentifier, SIGHUP)
        #expect(await server.waitForLog("event=token_reloaded", seconds: 120), "\(server.stderr)")
        #expect(server.stderr.contains("level=info event=signal signal=SIGHUP"))
        #expect(server.stderr.contains("level=info event=token_reloaded path=\(tokenFile) tokens=1"))
        await expectStatus(.unauthenticated) { try await old.call(LocationMethods.listLocations, ListLocationsRequest()) }
        _ = try await new.call(LocationMethods.listLocations, ListLocationsRequest())
        #expect(try await new.call(HealthMethods.check, HealthCheckRequest()).status == .serving)

        lock.release()
        #expect(try await write.value.name == "In flight", "admitted before the reload, it finishes")

        // A bad file: the token in force stays, and the failure is an error line.
        try "".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        kill(server.processIdentifier, SIGHUP)
        #expect(await server.waitForLog("event=token_reload_failed", seconds: 120), "\(server.stderr)")
        let failure = server.stderr.split(separator: "\n").first { $0.contains("event=token_reload_failed") }
        #expect(failure?.contains("level=error event=token_reload_failed path=\(tokenFile) error=") == true)
        #expect(failure?.contains("is empty") == true)
        _ = try await new.call(LocationMethods.listLocations, ListLocationsRequest())
        await expectStatus(.unauthenticated) { try await old.call(LocationMethods.listLocations, ListLocationsRequest()) }

        // Bytes that are not a token (before, 0xFF became U+FFFD, and `Bearer ` + U+FFFD… was
        // accepted): refused, and the token in force stays.
        try Data(repeating: 0xFF, count: 32).write(to: URL(fileURLWithPath: tokenFile))
        kill(server.processIdentifier, SIGHUP)
        #expect(await server.waitForLog("has byte 0xFF at offset 0", seconds: 120), "\(server.stderr)")
        let notToken = server.stderr.split(separator: "\n").last { $0.contains("event=token_reload_failed") }
        #expect(notToken?.contains("auth token file \(tokenFile) has byte 0xFF at offset 0: each line holds one "
                                   + "bearer token of A-Z a-z 0-9 - . _ ~ + / (then = padding)") == true, "\(notToken ?? "")")
        _ = try await new.call(LocationMethods.listLocations, ListLocationsRequest())
        let replacement = try LarderClient.loopback(port: server.port, token: String(repeating: "\u{FFFD}", count: 32))
        defer { replacement.close() }
        await expectStatus(.unauthenticated) {
            try await replacement.call(LocationMethods.listLocations, ListLocationsRequest())
        }

        // A rotation's overlap: both lines accepted until the old one goes.
        try "old-token\nnew-token\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        kill(server.processIdentifier, SIGHUP)
        #expect(await server.waitForLog("tokens=2", seconds: 120), "\(server.stderr)")
        _ = try await old.call(LocationMethods.listLocations, ListLocationsRequest())
        _ = try await new.call(LocationMethods.listLocations, ListLocationsRequest())

        try FileManager.default.removeItem(atPath: tokenFile)
        kill(server.processIdentifier, SIGHUP)
        #expect(await server.waitForLog("No such file", seconds: 120), "\(server.stderr)")
        _ = try await new.call(LocationMethods.listLocations, ListLocationsRequest())
        #expect(server.stop() == 0, "SIGHUP never stopped it; SIGTERM still drains and exits 0")
    }

    /// Without --auth-token-file there is nothing to reload: SIGHUP is logged and the server serves on
    /// (it used to kill the server, with no drain and no log line).
    @Test func sighupWithoutATokenFileKeepsServing() async throws {
        try await withServer { server, client in
            kill(server.processIdentifier, SIGHUP)
            #expect(await server.waitForLog("event=reload_skipped", seconds: 120), "\(server.stderr)")
            #expect(try await client.call(HealthMethods.check, HealthCheckRequest()).status == .serving)
            _ = try await client.call(LocationMethods.listLocations, ListLocationsRequest())
        }
    }
}

/// An open write transaction on a SQLite database (the sqlite3 shell's), so that the
/// server's writer waits; `release()` rolls it back.
final class SQLiteLock {
    private let process = SpawnedProcess()
    private var released = false
    private var releasing = false
    private let input = Pipe()

    init(path: String) throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [path]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.writeRetryingInterrupts(Data("BEGIN IMMEDIATE;\nSELECT 'locked';\n".utf8))
        let locked = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        guard locked.contains("locked") else { throw RPCError.internalError("sqlite3 did not take the lock: \(locked)") }
    }

    /// Ends the transaction and sqlite3; once (later calls do nothing).
    func release() {
        guard !releasing else { return }
        releasing = true
        input.fileHandleForWriting.writeRetryingInterrupts(Data("ROLLBACK;\n.quit\n".utf8))
        try? input.fileHandleForWriting.close()
        released = process.exitStatus(waitingUpTo: 60) != nil
    }

    deinit {
        if !released { process.killAndReap() }
    }
}
