import CProtobufC
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reusable memory for messages that protobuf-c unpacks, for one thread.
///
/// `protobuf_c_message_unpack` mallocs every struct, string and array of a
/// message and `protobuf_c_message_free_unpacked` frees them one by one. An
/// `UnpackArena` hands protobuf-c a bump allocator instead: a block kept from
/// one message to the next, plus malloc for what does not fit, all released at
/// once when the outermost `withUnpacked` returns. The server's event loop owns
/// one and decodes every request envelope and request in it.
///
/// Not thread-safe: one arena per thread.
public final class UnpackArena {
    /// The allocator's state, reached from C callbacks without reference counting.
    private struct State {
        let block: UnsafeMutableRawPointer
        let blockSize: Int
        var used = 0
        /// Allocations that did not fit in `block`, linked through their first
        /// `headerSize` bytes; freed on reset.
        var overflow: UnsafeMutableRawPointer?
    }

    private static let alignment = 16
    private static let headerSize = 16

    private let state: UnsafeMutablePointer<State>
    /// Handed to protobuf-c; its `allocator_data` is `state`.
    private let allocator: UnsafeMutablePointer<ProtobufCAllocator>
    /// Nesting of `withUnpacked`: memory is reclaimed when it drops to zero.
    private var depth = 0
    /// Checked on the wire bytes of every message before it is unpacked; nil = none. With limits,
    /// a singular message field that occurs more than once is merged as protobuf does.
    public let limits: DecodeLimits?

    /// An arena whose reusable block holds `blockSize` bytes, refusing messages over `limits`.
    public init(blockSize: Int = 64 * 1024, limits: DecodeLimits? = nil) {
        self.limits = limits
        let size = max(blockSize, 1024)
        guard let block = malloc(size) else { fatalError("out of memory") }
        state = .allocate(capacity: 1)
        state.initialize(to: State(block: block, blockSize: size))
        allocator = .allocate(capacity: 1)
        allocator.initialize(to: ProtobufCAllocator(
            alloc: { data, size in
                guard let data else { return nil }
                return UnpackArena.allocate(size, in: data.assumingMemoryBound(to: State.self))
            },
            free: { _, _ in },  // everything goes at once, in reset()
            allocator_data: UnsafeMutableRawPointer(state)))
    }

    deinit {
        reset()
        free(state.pointee.block)
        state.deinitialize(count: 1)
        state.deallocate()
        allocator.deallocate()
    }

    /// Unpacks `bytes` as a message of `descriptor` in this arena and runs `body` on it.
    /// The message and everything it points to live until the outermost call returns.
    /// - Throws: RESOURCE_EXHAUSTED when the bytes exceed `limits`; what `ProtoCodec.withUnpacked` throws.
    public func withUnpacked<R>(
        _ descriptor: MessageDescriptor, from bytes: UnsafeRawBufferPointer,
        _ body: (UnpackedMessage) throws(RPCError) -> R
    ) throws(RPCError) -> R {
        var needsMerge = false
        if let limits { needsMerge = try DecodeLimitScan.check(bytes, as: descriptor, limits: limits) }
        depth += 1
        defer {
            depth -= 1
            if depth == 0 { reset() }
        }
        let message: UnsafeMutablePointer<ProtobufCMessage>
        if needsMerge {
            // Bytes that cannot be merged are refused: unpacked as they came, the last of the
            // repeats would silently win.
            guard let merged = MessageFieldMerge.merged(bytes, as: descriptor.pointer) else {
                throw RPCError.invalidArgument("payload is not a valid \(descriptor.name) message")
            }
            // protobuf-c copies what it keeps, so the merged bytes may go once unpacked.
            let unpacked = merged.withUnsafeBytes { raw in
                Result { () throws(RPCError) in
                    try ProtoCodec.unpack(descriptor.pointer, from: raw, allocator: allocator)
                }
            }
            message = try unpacked.get()
        } else {
            message = try ProtoCodec.unpack(descriptor.pointer, from: bytes, allocator: allocator)
        }
        defer { protobuf_c_message_free_unpacked(message, allocator) }
        return try body(UnpackedMessage(message))
    }

    /// Decodes a `M` from `bytes`, unpacking in this arena.
    @inlinable
    public func decode<M: ProtoMessage>(_ type: M.Type, from bytes: UnsafeRawBufferPointer) throws(RPCError) -> M {
        try withUnpacked(M.descriptor, from: bytes) { message throws(RPCError) in try M(unpacked: message) }
    }

    private static func allocate(_ size: Int, in state: UnsafeMutablePointer<State>) -> UnsafeMutableRawPointer? {
        let rounded = (max(size, 1) + alignment - 1) & ~(alignment - 1)
        if rounded <= state.pointee.blockSize - state.pointee.used {
            let pointer = state.pointee.block + state.pointee.used
            state.pointee.used += rounded
            return pointer
        }
        guard let chunk = malloc(headerSize + size) else { return nil }
        chunk.storeBytes(of: state.pointee.overflow, as: UnsafeMutableRawPointer?.self)
        state.pointee.overflow = chunk
        return chunk + headerSize
    }

    private func reset() {
        state.pointee.used = 0
        var next = state.pointee.overflow
        while let chunk = next {
            next = chunk.load(as: UnsafeMutableRawPointer?.self)
            free(chunk)
        }
        state.pointee.overflow = nil
    }
}
