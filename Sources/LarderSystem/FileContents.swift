#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a file a user named on the command line, whatever it is: a regular file, a pipe,
/// `/dev/stdin`, a shell's process substitution (`<(…)`). Foundation's `contents(atPath:)`
/// and `String(contentsOfFile:)` fail on the last three ("Inappropriate ioctl for device").
public enum FileContents {
    /// Why a file could not be read.
    public enum Failure: Error, Equatable, Sendable {
        /// open or read failed (a missing file, a directory, no permission).
        case system(Errno)
        /// It holds more than the limit given (`byteCount`: what was read, past the limit).
        case tooLarge(byteCount: Int)

        /// For a message: "No such file or directory", "the file is 65537 bytes or more".
        public var reason: String {
            switch self {
            case .system(let error): return error.message
            case .tooLarge(let count): return "the file is \(count) bytes or more"
            }
        }
    }

    /// The bytes of `path`, at most `maxBytes` (a larger file is refused, not cut).
    public static func read(_ path: String, maxBytes: Int) throws(Failure) -> [UInt8] {
        let fd: Int32
        switch SystemCall.run({ open(path, O_RDONLY | O_CLOEXEC) }) {
        case .success(let opened): fd = opened
        case .failure(let error): throw .system(error)
        }
        defer { SystemCall.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let result = SystemCall.run { chunk.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) } }
            switch result {
            case .failure(let error): throw .system(error)
            case .success(0): return bytes
            case .success(let count):
                bytes += chunk[0..<count]
                if bytes.count > maxBytes { throw .tooLarge(byteCount: bytes.count) }
            }
        }
    }

    private static func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.read(fd, buffer, count)
        #else
        Darwin.read(fd, buffer, count)
        #endif
    }
}
