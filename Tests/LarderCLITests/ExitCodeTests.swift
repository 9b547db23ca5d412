import LarderCLI
import LarderWire
import Testing

@Suite("Exit codes")
struct ExitCodeTests {
    @Test("10 + status code for RPC errors, 12 for a code outside 0-16", arguments: [
        (StatusCode.cancelled, Int32(11)), (.invalidArgument, Int32(13)), (.deadlineExceeded, 14), (.notFound, 15),
        (.alreadyExists, 16), (.failedPrecondition, 19), (.unavailable, 24), (.unauthenticated, 26),
        // Outside 0-16: UNKNOWN, never 1 (larder health's "not serving") nor 10 + an unlisted code.
        (StatusCode(rawValue: 17), 12), (StatusCode(rawValue: 99), 12), (StatusCode(rawValue: 200), 12),
        (StatusCode(rawValue: -3), 12), (StatusCode(rawValue: .max), 12), (StatusCode(rawValue: .min), 12),
    ] as [(StatusCode, Int32)])
    func statusCodes(code: StatusCode, expected: Int32) {
        #expect(ExitCode.forError(.rpc(RPCError(code, "x"))) == expected)
    }

    @Test("usage errors exit 2, and every canonical error code gets its own exit code")
    func distinct() {
        #expect(ExitCode.forError(.usage("bad", command: "larder")) == 2)
        let codes = StatusCode.allCanonical.filter { $0 != .ok }.map(ExitCode.forStatus)
        #expect(Set(codes).count == codes.count)
        #expect(!codes.contains(ExitCode.usage) && !codes.contains(ExitCode.notServing))
    }

    @Test("the help says which values exit 2 and which exit with the server's status")
    func helpOnValues() {
        let help = Usage.top(.larder)
        #expect(help.contains("2   usage error: unknown command or option, or a value larder checks itself"))
        #expect(help.contains("(e.g. --color red) exits with the server's status, 13 INVALID_ARGUMENT"))
        #expect(!help.contains("bad value"))
        #expect(help.contains("refuses new connections, so larder health then exits 24 UNAVAILABLE"))
    }
}
