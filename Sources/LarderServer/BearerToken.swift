#if canImport(Glibc)
import Glibc
#endif
import LarderWire

/// The bearer tokens calls may present (one, or a few while a rotation moves clients from
/// an old token to a new one), compared in constant time.
struct BearerToken: Sendable {
    /// `Bearer <token>` for each token.
    private let expected: [[UInt8]]

    init(_ tokens: [String]) {
        expected = tokens.map { Array("Bearer \($0)".utf8) }
    }

    /// How many tokens are accepted.
    var count: Int { expected.count }

    /// The length of the shortest token, in bytes.
    var shortestBytes: Int { expected.map { $0.count - "Bearer ".utf8.count }.min() ?? 0 }

    /// Tokens shorter than this are accepted but logged (`token_short`): 16 random characters
    /// are 64 bits (hex) to 96 bits (base64), out of reach of guessing over the network.
    static let recommendedMinimumBytes = 16

    /// The longest token a file may hold: `authorization: Bearer <token>` must fit, with the
    /// call's other metadata and (over HTTP/2) its pseudo-headers, in the 8 KiB metadata limit.
    static let maxTokenBytes = 4096
    /// The most tokens a file may hold: one in force, and the next while clients move to it.
    static let maxTokens = 8

    /// Reads the tokens from a file: one RFC 6750 `b64token` per line (`A-Z a-z 0-9 - . _ ~ +
    /// /`, then any `=` padding), lines ending in `\n` or `\r\n`, the last one's optional, no
    /// empty line, at most `maxTokens`. Its bytes are checked as they are, never decoded: a byte
    /// that is not UTF-8 would otherwise become U+FFFD, and a token of them would accept
    /// `Bearer ` + U+FFFD….
    /// - Throws: INVALID_ARGUMENT naming the file when it cannot be read, is empty, or holds
    ///   anything else.
    static func load(path: String) throws(RPCError) -> BearerToken {
        // Opened without blocking and checked to be a regular file first: a FIFO (or a device)
        // at the path would otherwise hold the start, or a reload, until a writer came.
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw RPCError.invalidArgument("cannot read auth token file \(path): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw RPCError.invalidArgument("auth token file \(path) is not a regular file")
        }
        guard let file = fdopen(descriptor, "r") else {
            close(descriptor)
            throw RPCError.invalidArgument("cannot read auth token file \(path): \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes += chunk[0..<count]
            if bytes.count > 64 * 1024 { throw RPCError.invalidArgument("auth token file \(path) is larger than 64 KiB") }
        }
        if bytes.last == UInt8(ascii: "\n") {
            bytes.removeLast()
            if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        }
        guard !bytes.isEmpty else { throw RPCError.invalidArgument("auth token file \(path) is empty") }
        var tokens: [String] = []
        var lineStart = 0
        while lineStart <= bytes.count {
            let newline = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            // A line break inside the file ends a line; its `\r` (CRLF) is not part of the token.
            var lineEnd = newline
            if newline < bytes.count && lineEnd > lineStart && bytes[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
            let line = Array(bytes[lineStart..<lineEnd])
            if line.isEmpty {
                throw refusal(path, "a line break at offset \(max(0, lineStart - 1))")
            }
            if let offset = invalidTokenByte(line) {
                throw refusal(path, "\(describe(line, at: offset)) at offset \(lineStart + offset)")
            }
            guard line.count <= maxTokenBytes else {
                throw RPCError.invalidArgument(
                    "auth token file \(path) holds a token of \(line.count) bytes; at most \(maxTokenBytes) fit in a "
                    + "call's metadata (8 KiB, headers included) beside the rest: use a shorter one, e.g. openssl rand -hex 32")
            }
            tokens.append(String(decoding: line, as: UTF8.self))
            guard tokens.count <= maxTokens else {
                throw RPCError.invalidArgument("auth token file \(path) holds more than \(maxTokens) tokens (one per "
                                               + "line): keep the one in force and the next")
            }
            lineStart = newline + 1
        }
        return BearerToken(tokens)
    }

    private static func refusal(_ path: String, _ what: String) -> RPCError {
        RPCError.invalidArgument("auth token file \(path) has \(what): \(allowed)")
    }

    /// What a token file may hold, for its refusals.
    static let allowed = "each line holds one bearer token of A-Z a-z 0-9 - . _ ~ + / (then = padding), as RFC 6750 "
        + "allows, with no empty line"

    /// The offset of the first byte that breaks RFC 6750's `b64token`
    /// (`1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`), or nil.
    static func invalidTokenByte(_ bytes: [UInt8]) -> Int? {
        var padding = false
        for (offset, byte) in bytes.enumerated() {
            if byte == UInt8(ascii: "=") {
                if offset == 0 { return offset }
                padding = true
            } else if padding || !isTokenCharacter(byte) {
                return offset
            }
        }
        return nil
    }

    /// The byte at `offset`, for a message (a valid character out of place says why).
    private static func describe(_ bytes: [UInt8], at offset: Int) -> String {
        let byte = bytes[offset]
        switch byte {
        case 0x20: return "a space"
        case 0x0A, 0x0D: return "a line break"
        case UInt8(ascii: "=") where offset == 0: return "\"=\" first"
        case _ where isTokenCharacter(byte): return "\"\(UnicodeScalar(byte))\" after \"=\" padding"
        case 0x21...0x7E: return "\"\(UnicodeScalar(byte))\""
        default: return "byte 0x\(String(byte, radix: 16, uppercase: true))"
        }
    }

    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
             UInt8(ascii: "~"), UInt8(ascii: "+"), UInt8(ascii: "/"): true
        default: false
        }
    }

    /// True when `authorization` is `Bearer <token>` as RFC 9110 writes credentials: the scheme
    /// in any case (§11.1: `bearer` and `BEARER` too), one or more spaces (§11.4), the token byte
    /// for byte; spaces and tabs around the value are not part of it (§5.5, as over HTTP/2).
    /// Every byte of the longer of the normalized value and the expected one is compared,
    /// whatever matches, so the time taken depends only on the lengths; a different length
    /// never matches.
    func accepts(_ authorization: String?) -> Bool {
        let presented = Self.normalized(Array((authorization ?? "").utf8))
        var matches = false
        // Every token is compared, whichever matches: the time depends on the lengths only.
        for expected in expected { matches = Self.equal(presented, expected) || matches }
        return matches
    }

    /// `presented` against one `expected`, every byte compared (see `accepts`).
    private static func equal(_ presented: [UInt8], _ expected: [UInt8]) -> Bool {
        var difference: UInt8 = presented.count == expected.count ? 0 : 1
        for index in 0..<max(presented.count, expected.count) {
            var byte = index < presented.count ? presented[index] : 0
            var wanted = index < expected.count ? expected[index] : 0
            if index < schemeLetters {
                // The scheme's letters: setting 0x20 folds each to lower case, and only its two
                // cases to it.
                byte |= 0x20
                wanted |= 0x20
            }
            difference |= byte ^ wanted
        }
        return difference == 0
    }

    /// The letters of `Bearer`, first in `expected`.
    private static let schemeLetters = 6

    /// `value` without the spaces and tabs around it, and with one space where the scheme is
    /// followed by several.
    private static func normalized(_ value: [UInt8]) -> [UInt8] {
        func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
        guard let first = value.firstIndex(where: { !isWhitespace($0) }),
              let last = value.lastIndex(where: { !isWhitespace($0) }) else { return [] }
        var trimmed = Array(value[first...last])
        let afterScheme = schemeLetters + 1
        if trimmed.count > afterScheme, trimmed[schemeLetters] == 0x20, trimmed[afterScheme] == 0x20 {
            let tokenStart = trimmed[afterScheme...].firstIndex { $0 != 0x20 } ?? trimmed.count
            trimmed.removeSubrange(afterScheme..<tokenStart)
        }
        return trimmed
    }
}
