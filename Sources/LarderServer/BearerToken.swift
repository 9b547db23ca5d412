#if canImport(Glibc)
import Glibc
#endif
import LarderWire

/// The bearer token calls must present, compared in constant time.
struct BearerToken: Sendable {
    private let expected: [UInt8]

    init(_ token: String) {
        expected = Array("Bearer \(token)".utf8)
    }

    /// Reads the token from a file (surrounding whitespace trimmed).
    /// - Throws: INVALID_ARGUMENT when the file cannot be read or is empty.
    static func load(path: String) throws(RPCError) -> BearerToken {
        guard let file = fopen(path, "r") else {
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
        let token = String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
        guard !token.isEmpty else { throw RPCError.invalidArgument("auth token file \(path) is empty") }
        guard !token.contains(where: { $0.isNewline }) else {
            throw RPCError.invalidArgument("auth token file \(path) must hold one line")
        }
        return BearerToken(token)
    }

    /// True when `authorization` is exactly `Bearer <token>`. Every byte of the
    /// longer of the two is compared, whatever matches, so the time taken
    /// depends only on the lengths; a different length never matches.
    func accepts(_ authorization: String?) -> Bool {
        let presented = Array((authorization ?? "").utf8)
        var difference: UInt8 = presented.count == expected.count ? 0 : 1
        for index in 0..<max(presented.count, expected.count) {
            let byte = index < presented.count ? presented[index] : 0
            let wanted = index < expected.count ? expected[index] : 0
            difference |= byte ^ wanted
        }
        return difference == 0
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
