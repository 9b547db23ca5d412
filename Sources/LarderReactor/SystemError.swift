#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: which call and the errno it left.
public struct SystemError: Error, Hashable, Sendable, CustomStringConvertible {
    public let function: String
    public let errno: Int32

    public init(_ function: String, errno: Int32) {
        self.function = function
        self.errno = errno
    }

    /// The C library's text for the errno, e.g. "Address already in use".
    public var reason: String { String(cString: strerror(errno)) }

    public var description: String { "\(function): \(reason)" }
}

/// Runs a system call, retrying on EINTR; a -1 result throws `SystemError`
/// with errno read at once.
@discardableResult
@inline(__always)
func syscall<T: FixedWidthInteger>(_ function: String, _ body: () -> T) throws(SystemError) -> T {
    while true {
        let result = body()
        if result != -1 { return result }
        let error = Glibc.errno
        if error == EINTR { continue }
        throw SystemError(function, errno: error)
    }
}
