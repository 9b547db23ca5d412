public import Foundation

/// Reading a child's pipe with blocking reads, never through libdispatch.
///
/// `FileHandle.readabilityHandler` arms a libdispatch read source, and tearing such sources
/// down while others are armed corrupts libdispatch's epoll bookkeeping on Linux: the test
/// process crashed with SIGSEGV in `_dispatch_event_loop_drain` (a CI run of the Swift suite;
/// swift-corelibs-libdispatch#949, swift-corelibs-foundation#3276). A blocking read registers
/// nothing with libdispatch, so there is nothing to tear down.
extension FileHandle {
    /// Reads until end of file on a thread of its own, handing every chunk to `onData` and then
    /// calling `onEnd` once. The handle (and so its descriptor) stays open until then.
    public func readOnThread(onData: @escaping @Sendable (Data) -> Void, onEnd: @escaping @Sendable () -> Void) {
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(fileDescriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                onData(Data(buffer[0..<count]))
            }
            onEnd()
        }
        thread.start()
    }

    /// Reads until end of file or until `deadline`, whichever comes first, on the calling thread.
    /// Returns what was read and whether the deadline cut it short.
    public func readToEnd(before deadline: ContinuousClock.Instant) -> (data: Data, timedOut: Bool) {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return (data, true) }
            let (seconds, attoseconds) = left.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var descriptor = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 { continue }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fileDescriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return (data, false) }
            data.append(contentsOf: buffer[0..<count])
        }
    }
}
