#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Where the CLI writes text: the process's stdout/stderr, or a buffer in tests.
public struct OutputSink: Sendable {
    private let writeText: @Sendable (String) -> Void
    /// The descriptor written to, so tables can ask the terminal for its width; nil for a buffer.
    public let fileDescriptor: Int32?

    public init(fileDescriptor: Int32? = nil, _ write: @escaping @Sendable (String) -> Void) {
        self.fileDescriptor = fileDescriptor
        self.writeText = write
    }

    public func write(_ text: String) { writeText(text) }

    /// File descriptor 1, unbuffered.
    public static let standardOutput = OutputSink(fileDescriptor: 1) { writeAll(1, $0) }
    /// File descriptor 2, unbuffered.
    public static let standardError = OutputSink(fileDescriptor: 2) { writeAll(2, $0) }

    private static func writeAll(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { raw in
                systemWrite(fd, raw.baseAddress! + offset, raw.count - offset)
            }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }
}

#if canImport(Glibc)
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { Glibc.write(fd, buffer, count) }
#else
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { Darwin.write(fd, buffer, count) }
#endif

/// Collects everything written to its `sink`, for tests.
public final class OutputBuffer: Sendable {
    private let storage = Mutex("")

    public init() {}

    public var sink: OutputSink { OutputSink { [self] text in storage.withLock { $0 += text } } }

    /// Everything written so far.
    public var text: String { storage.withLock { $0 } }
}
