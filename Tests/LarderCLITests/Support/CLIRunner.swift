import Foundation
import LarderCLI
import LarderClient
import LarderWire

/// What one `larder` run printed and returned.
struct CLIRun {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// Runs the `larder` command in process against a `FakeServer`.
enum CLIRunner {
    static let taipei = LocalTime(timeZone: TimeZone(identifier: "Asia/Taipei") ?? .gmt)
    /// The `--timeout` every run against a fake server gets, in seconds.
    static let testTimeout = "600"

    /// Starts `larder arguments…` against `server`, lets `serve` answer, and returns what it printed.
    static func run(_ arguments: [String], server: FakeServer?, environment: [String: String] = [:],
                    localTime: LocalTime = taipei,
                    serve: (inout AsyncStream<RequestEnvelope>.Iterator) async throws -> Void = { _ in })
        async throws -> CLIRun
    {
        let stdout = OutputBuffer()
        let stderr = OutputBuffer()
        // A deadline no busy machine reaches (the fake server answers when the test's task
        // gets to run, which took over 10 s, the CLI's default, under load); tests that
        // check deadlines pass their own --timeout, which comes later and wins.
        let deadline = server == nil ? [] : ["--timeout", Self.testTimeout]
        let serverArguments = server.map { ["--server", $0.address.description] } ?? []
        let task = Task {
            let status = await LarderCommand.run(arguments: deadline + arguments + serverArguments, environment: environment,
                                                 stdout: stdout.sink, stderr: stderr.sink, localTime: localTime)
            // larder is done: a test still waiting for a request (larder exited before calling,
            // e.g. on a usage error) gets nil and fails at once instead of waiting out the server.
            server?.endRequests()
            return status
        }
        if let server {
            var iterator = server.requests.makeAsyncIterator()
            try await serve(&iterator)
        }
        let status = await task.value
        return CLIRun(status: status, stdout: stdout.text, stderr: stderr.text)
    }

    /// Runs `larder arguments…` against `server`, answering every call it makes, however many,
    /// with `answer(n, request)` for its `n`th call (from 1), until it exits.
    static func run(_ arguments: [String], server: FakeServer,
                    answering answer: @escaping @Sendable (Int, RequestEnvelope) -> ResponseEnvelope)
        async throws -> CLIRun
    {
        let serving = Task {
            var count = 0
            // Ends when the task is cancelled below, once larder has exited.
            for await request in server.requests {
                count += 1
                server.reply(answer(count, request))
            }
        }
        defer { serving.cancel() }
        return try await run(arguments, server: server)
    }

    /// Runs `larder arguments…`, answering its one call with `reply`.
    static func run(_ arguments: [String], replying reply: some ProtoMessage) async throws -> CLIRun {
        let server = try FakeServer()
        return try await run(arguments, server: server) { requests in
            guard let request = await requests.next() else { return }
            server.reply(ResponseEnvelope(callID: request.callID, payload: ProtoCodec.encode(reply)))
        }
    }
}
