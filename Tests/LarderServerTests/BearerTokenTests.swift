import Foundation
@testable import LarderServer
import LarderStore
import LarderTestSupport
import LarderWire
import Testing

/// `--auth-token-file` holds RFC 6750 b64tokens, one per line; its bytes are
/// checked as they are (before, bytes that are not UTF-8 became U+FFFD, and a file of 32 × 0xFF
/// accepted `Bearer ` + 32 × U+FFFD).
@Suite(.offThePool) struct BearerTokenTests {
    static let allowed = "each line holds one bearer token of A-Z a-z 0-9 - . _ ~ + / (then = padding), as RFC 6750 "
        + "allows, with no empty line"

    /// Writes `bytes` to a fresh file and loads it as the token file.
    static func load(_ bytes: [UInt8]) throws -> (path: String, result: Result<BearerToken, RPCError>) {
        let directory = try makeTemporaryDirectory(prefix: "larder-token")
        let path = directory.appendingPathComponent("token").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(at: directory) }
        do throws(RPCError) {
            return (path, .success(try BearerToken.load(path: path)))
        } catch {
            return (path, .failure(error))
        }
    }

    @Test(arguments: [
        ("s3cret-token\n", "s3cret-token"), ("s3cret-token", "s3cret-token"), ("crlf\r\n", "crlf"),
        ("AZaz09-._~+/==\n", "AZaz09-._~+/=="), ("x", "x"),
    ])
    func aTokenOfTokenCharactersIsAccepted(file: String, token: String) throws {
        let loaded = try Self.load(Array(file.utf8)).result.get()
        #expect(loaded.accepts("Bearer \(token)"))
        #expect(loaded.accepts("bearer \(token)") && loaded.accepts("BEARER \(token)"), "the scheme in any case")
        #expect(loaded.accepts(" Bearer \(token) \t") && loaded.accepts("Bearer   \(token)"),
                "spaces and tabs around the value, and several spaces after the scheme (RFC 9110 §5.5, §11.4)")
        #expect(!loaded.accepts("Bearer\t\(token)") && !loaded.accepts("Bearer\(token)") && !loaded.accepts("Bearer \(token) x"))
        #expect(!loaded.accepts("Bearer\u{02}\(token)") && !loaded.accepts("Bearxr \(token)") && !loaded.accepts("Basic  \(token)"))
        if token.first?.isLetter == true {
            #expect(!loaded.accepts("Bearer \(token.prefix(1).uppercased() == token.prefix(1) ? token.lowercased() : token.uppercased())"),
                    "the token's case matters")
        }
        #expect(file == token || !loaded.accepts("Bearer \(file)"), "one newline is not part of the token")
    }

    @Test(arguments: [
        (Array(repeating: UInt8(0xFF), count: 32), "byte 0xFF at offset 0"),
        (Array("tok\u{E9}n".utf8), "byte 0xC3 at offset 3"),
        (Array(" s3cret\n".utf8), "a space at offset 0"),
        (Array("s3cret \n".utf8), "a space at offset 6"),
        (Array("s3cret\n\n".utf8), "a line break at offset 6"),
        (Array("one\n\ntwo\n".utf8), "a line break at offset 3"),
        (Array("one\ntw o\n".utf8), "a space at offset 6"),
        (Array("one\r\ntwo\r".utf8), "a line break at offset 8"),
        (Array("s3cret\r".utf8), "a line break at offset 6"),
        (Array("s3:cret".utf8), "\":\" at offset 2"),
        (Array("=abc".utf8), "\"=\" first at offset 0"),
        (Array("ab=c".utf8), "\"c\" after \"=\" padding at offset 3"),
        (Array("s3cret\0".utf8), "byte 0x0 at offset 6"),
    ] as [([UInt8], String)])
    func anythingElseIsRefusedNamingTheFileAndWhatIsAllowed(bytes: [UInt8], what: String) throws {
        let (path, result) = try Self.load(bytes)
        #expect(throws: RPCError(.invalidArgument, "auth token file \(path) has \(what): \(Self.allowed)")) {
            try result.get()
        }
    }

    /// Several lines hold several tokens, any of them accepted (a rotation's overlap: the old
    /// token and the next, audit 20 F11); at most `maxTokens`.
    @Test func severalTokensOneAtALineAreEachAccepted() throws {
        let loaded = try Self.load(Array("old-token\r\nnew-token\n".utf8)).result.get()
        #expect(loaded.count == 2)
        #expect(loaded.accepts("Bearer old-token") && loaded.accepts("Bearer new-token"))
        #expect(!loaded.accepts("Bearer old-token\r\nnew-token") && !loaded.accepts("Bearer other"))
        let (path, many) = try Self.load(Array((1...9).map { "token-\($0)\n" }.joined().utf8))
        #expect(throws: RPCError(.invalidArgument, "auth token file \(path) holds more than 8 tokens (one per line): "
                                 + "keep the one in force and the next")) { try many.get() }
    }

    /// A token no call could carry (its metadata limit is 8 KiB) is refused at start: the server
    /// started and every call with the right token failed RESOURCE_EXHAUSTED (audit 20 F6).
    @Test func aTokenTooLongForACallsMetadataIsRefused() throws {
        #expect(throws: Never.self) { try Self.load(Array(repeating: UInt8(ascii: "a"), count: 4096)).result.get() }
        let (path, result) = try Self.load(Array(repeating: UInt8(ascii: "a"), count: 9000) + [0x0A])
        #expect(throws: RPCError(.invalidArgument, "auth token file \(path) holds a token of 9000 bytes; at most 4096 "
                                 + "fit in a call's metadata (8 KiB, headers included) beside the rest: use a shorter "
                                 + "one, e.g. openssl rand -hex 32")) { try result.get() }
    }

    /// A FIFO at the path is refused at once: reading it waited for a writer, and on SIGHUP the
    /// event loop with it (audit 20 F8).
    @Test func aFIFOIsRefusedWithoutWaitingForAWriter() throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-token")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("token").path
        #expect(mkfifo(path, 0o600) == 0)
        #expect(throws: RPCError(.invalidArgument, "auth token file \(path) is not a regular file")) {
            try BearerToken.load(path: path)
        }
    }

    @Test(arguments: ["", "\n", "\r\n"])
    func anEmptyFileIsRefused(file: String) throws {
        let (path, result) = try Self.load(Array(file.utf8))
        #expect(throws: RPCError(.invalidArgument, "auth token file \(path) is empty")) { try result.get() }
    }

    /// The server does not start with such a file.
    @Test func aServerWithABadTokenFileDoesNotStart() async throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-token")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("token").path
        try Data(repeating: 0xFF, count: 32).write(to: URL(fileURLWithPath: path))
        let started = await Self.startError { $0.authTokenFile = path }
        #expect(started == RPCError(.invalidArgument, "auth token file \(path) has byte 0xFF at offset 0: \(Self.allowed)"))
    }

    static func startError(_ configure: (inout ServerConfiguration) -> Void) async -> RPCError? {
        do {
            try await withInProcessServer(configure) { _ in }
            return nil
        } catch let error as RPCError {
            return error
        } catch {
            return RPCError(.unknown, "\(error)")
        }
    }
}
