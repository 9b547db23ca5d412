#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call: the `errno` it left.
public struct Errno: Error, Equatable, Sendable {
    public let code: Int32

    public init(code: Int32) { self.code = code }

    /// The current thread's `errno`.
    public static var current: Errno { Errno(code: errno) }

    /// `strerror`, e.g. "Connection refused".
    public var message: String { String(cString: strerror(code)) }
}

/// System calls through one helper that retries on EINTR and reads errno at once.
public enum SystemCall {
    /// Runs `body` until it returns something other than -1 with EINTR.
    /// - Returns: the non-negative result, or the errno of the failure.
    @inline(__always)
    public static func run<T: BinaryInteger>(_ body: () -> T) -> Result<T, Errno> {
        while true {
            let result = body()
            if result >= 0 { return .success(result) }
            let error = Errno.current
            if error.code == EINTR { continue }
            return .failure(error)
        }
    }

    /// Closes a descriptor, ignoring errors (nothing useful can be done about them).
    public static func close(_ fd: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(fd)
        #else
        _ = Darwin.close(fd)
        #endif
    }
}
