#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LarderSystem

/// Where the CLI writes text: the process's stdout/stderr, or a buffer in tests.
public struct OutputSink: Sendable {
    private let writeText: @Sendable (String) -> Void
    private let failure: @Sendable () -> String?
    /// The descriptor written to, so tables can ask the terminal for its width; nil for a buffer.
    public let fileDescriptor: Int32?

    /// A sink writing through `write`; `failure` says why an earlier write failed (nil: none did).
    public init(fileDescriptor: Int32? = nil, failure: @escaping @Sendable () -> String? = { nil },
                _ write: @escaping @Sendable (String) -> Void) {
        self.fileDescriptor = fileDescriptor
        self.failure = failure
        self.writeText = write
    }

    public func write(_ text: String) { writeText(text) }

    /// Why a write failed (a full disk, a closed descriptor), nil while every write succeeded.
    /// After a failure nothing more is written, so what was written is a prefix of the output.
    public var writeFailure: String? { failure() }

    /// File descriptor 1, unbuffered.
    public static let standardOutput = descriptor(1)
    /// File descriptor 2, unbuffered.
    public static let standardError = descriptor(2)

    private static func descriptor(_ fd: Int32) -> OutputSink {
        let firstFailure = DescriptorFailure()
        // Closed at start: reopened on /dev/null, so a write would seem to succeed; it fails
        // here instead, when there is something to write.
        let closedAtStart = StandardDescriptors.closedAtStart.contains(fd)
        return OutputSink(fileDescriptor: fd, failure: { firstFailure.error.withLock { $0?.message } }) { text in
            firstFailure.error.withLock { error in
                guard error == nil, !text.isEmpty else { return }
                error = closedAtStart ? Errno(code: EBADF) : DescriptorWriter.writeAll(fd, text)
            }
        }
    }
}

/// The first write error of a descriptor sink; writes stop after it.
private final class DescriptorFailure: Sendable {
    let error = LockedValue<Errno?>(nil)
}

/// Collects everything written to its `sink`, for tests.
public final class OutputBuffer: Sendable {
    private let storage = LockedValue("")

    public init() {}

    public var sink: OutputSink { OutputSink { [self] text in storage.withLock { $0 += text } } }

    /// Everything written so far.
    public var text: String { storage.withLock { $0 } }
}
