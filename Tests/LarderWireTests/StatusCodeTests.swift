import LarderWire
import Testing

@Suite("StatusCode and RPCError")
struct StatusCodeTests {
    static let canonical: [(Int32, String)] = [
        (0, "OK"), (1, "CANCELLED"), (2, "UNKNOWN"), (3, "INVALID_ARGUMENT"), (4, "DEADLINE_EXCEEDED"),
        (5, "NOT_FOUND"), (6, "ALREADY_EXISTS"), (7, "PERMISSION_DENIED"), (8, "RESOURCE_EXHAUSTED"),
        (9, "FAILED_PRECONDITION"), (10, "ABORTED"), (11, "OUT_OF_RANGE"), (12, "UNIMPLEMENTED"),
        (13, "INTERNAL"), (14, "UNAVAILABLE"), (15, "DATA_LOSS"), (16, "UNAUTHENTICATED"),
    ]

    @Test("gRPC canonical numbers and names", arguments: canonical)
    func names(number: Int32, name: String) {
        let code = StatusCode(rawValue: number)
        #expect(code.name == name)
        #expect(code.description == name)
        #expect(StatusCode(name: name) == code)
        #expect(StatusCode(name: name.lowercased()) == code)
        #expect(StatusCode.allCanonical[Int(number)] == code)
    }

    @Test("named constants match their numbers")
    func constants() {
        #expect(StatusCode.invalidArgument.rawValue == 3)
        #expect(StatusCode.notFound.rawValue == 5)
        #expect(StatusCode.failedPrecondition.rawValue == 9)
        #expect(StatusCode.internal.rawValue == 13)
        #expect(StatusCode.unauthenticated.rawValue == 16)
        #expect(StatusCode.allCanonical.count == 17)
    }

    @Test("unknown numbers and names", arguments: ["", "NOTFOUND", "CODE_42", "OK ", "42"])
    func unknownNames(name: String) {
        #expect(StatusCode(name: name) == nil)
    }

    @Test("a number this build does not know keeps its value")
    func unknownNumber() {
        #expect(StatusCode(rawValue: 42).name == "CODE_42")
        #expect(StatusCode(rawValue: -1).name == "CODE_-1")
    }

    @Test("RPCError describes itself as CODE: message")
    func errorDescription() {
        #expect(RPCError.notFound("location \"x\" not found").description == "NOT_FOUND: location \"x\" not found")
        #expect(RPCError(.aborted, "").description == "ABORTED")
        #expect(RPCError.invalidArgument("m").code == .invalidArgument)
        #expect(RPCError.alreadyExists("m").code == .alreadyExists)
        #expect(RPCError.failedPrecondition("m").code == .failedPrecondition)
        #expect(RPCError.internalError("m").code == .internal)
        #expect(RPCError.unavailable("m").code == .unavailable)
    }
}
