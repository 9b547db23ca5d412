package import CProtobufC
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Owns the C memory of a protobuf-c message built from Swift values.
///
/// A bump allocator: structs, strings and arrays are carved out of a few
/// zeroed chunks (the first one small, later ones larger), and everything is
/// freed at once when the arena goes away.
/// Use it only through `CArena.with`, so no C pointer escapes the scope that
/// packs the message. Building a 50-record list costs three mallocs instead
/// of several hundred. Outside this package it is an opaque handle that
/// `ProtoMessage.build(in:)` receives; the building API is `package`.
public final class CArena {
    /// The chunk being carved. Each chunk starts with a header: the previous
    /// chunk, then the chunk's size.
    @usableFromInline var chunk: UnsafeMutableRawPointer?
    @usableFromInline var cursor: UnsafeMutableRawPointer?
    @usableFromInline var remaining = 0
    @usableFromInline var nextChunkSize = firstChunkSize

    /// Small enough that a one-message reply zeroes little, large enough for most.
    @usableFromInline static let firstChunkSize = 1024
    @usableFromInline static let maxChunkSize = 16 * 1024
    @usableFromInline static let alignment = 16
    @usableFromInline static let headerSize = 16

    /// An empty arena. Most code uses `CArena.with`; a thread that packs many
    /// messages may keep one and `reset()` it after each.
    public init() {}

    deinit {
        var next = chunk
        while let current = next {
            next = current.load(as: UnsafeMutableRawPointer?.self)
            free(current)
        }
    }

    /// Makes all the arena's memory available again, zeroed, keeping its
    /// largest chunk. Every pointer it handed out becomes invalid.
    public func reset() {
        guard let current = chunk else { return }
        var next = current.load(as: UnsafeMutableRawPointer?.self)
        while let older = next {
            next = older.load(as: UnsafeMutableRawPointer?.self)
            free(older)
        }
        current.storeBytes(of: nil, as: UnsafeMutableRawPointer?.self)
        let size = current.load(fromByteOffset: 8, as: Int.self)
        let used = size - Self.headerSize - remaining
        (current + Self.headerSize).initializeMemory(as: UInt8.self, repeating: 0, count: used)
        cursor = current + Self.headerSize
        remaining = size - Self.headerSize
    }

    /// Runs `body` with a fresh arena and frees all its memory afterwards.
    @inlinable
    public static func with<R>(_ body: (CArena) throws -> R) rethrows -> R {
        let arena = CArena()
        return try withExtendedLifetime(arena) { try body(arena) }
    }

    /// A NUL-terminated copy of `string`; nil (which protobuf-c packs as
    /// the empty string) when it is empty.
    @inlinable
    package func string(_ string: String) -> UnsafeMutablePointer<CChar>? {
        if string.isEmpty { return nil }
        var string = string
        return string.withUTF8 { utf8 in
            let pointer = allocate(utf8.count + 1)
            pointer.copyMemory(from: utf8.baseAddress!, byteCount: utf8.count)
            pointer.storeBytes(of: 0, toByteOffset: utf8.count, as: UInt8.self)
            return pointer.assumingMemoryBound(to: CChar.self)
        }
    }

    /// A zeroed C struct of type `T`, initialised by `initializer` (a generated `*__init`).
    @inlinable
    package func message<T>(_ type: T.Type, _ initializer: (UnsafeMutablePointer<T>) -> Void)
        -> UnsafeMutablePointer<T>
    {
        let pointer = allocate(MemoryLayout<T>.stride).bindMemory(to: T.self, capacity: 1)
        initializer(pointer)
        return pointer
    }

    /// A typed C array of pointers to the structs built from `items`, for a
    /// repeated message field.
    @inlinable
    package func pointers<T, C>(_ items: [T], _ build: (T) -> UnsafeMutablePointer<C>)
        -> UnsafeMutablePointer<UnsafeMutablePointer<C>?>?
    {
        if items.isEmpty { return nil }
        let array = allocate(MemoryLayout<UnsafeMutablePointer<C>?>.stride * items.count)
            .bindMemory(to: UnsafeMutablePointer<C>?.self, capacity: items.count)
        var index = 0
        for item in items {
            array[index] = build(item)
            index += 1
        }
        return array
    }

    /// A C array of NUL-terminated copies of `strings`.
    @inlinable
    package func stringArray(_ strings: [String]) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? {
        if strings.isEmpty { return nil }
        let array = allocate(MemoryLayout<UnsafeMutablePointer<CChar>?>.stride * strings.count)
            .bindMemory(to: UnsafeMutablePointer<CChar>?.self, capacity: strings.count)
        var index = 0
        for string in strings {
            array[index] = self.string(string) ?? allocate(1).assumingMemoryBound(to: CChar.self)
            index += 1
        }
        return array
    }

    /// A C array holding `values` (a repeated numeric field); nil when empty.
    package func values<T: BitwiseCopyable>(_ values: [T]) -> UnsafeMutablePointer<T>? {
        if values.isEmpty { return nil }
        let array = allocate(MemoryLayout<T>.stride * values.count).bindMemory(to: T.self, capacity: values.count)
        for (index, value) in values.enumerated() { array[index] = value }
        return array
    }

    /// A copy of `bytes` as protobuf-c binary data.
    package func bytes(_ bytes: [UInt8]) -> ProtobufCBinaryData {
        if bytes.isEmpty { return ProtobufCBinaryData(len: 0, data: nil) }
        let pointer = allocate(bytes.count)
        bytes.withUnsafeBytes { pointer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        return ProtobufCBinaryData(len: bytes.count, data: pointer.assumingMemoryBound(to: UInt8.self))
    }

    /// `byteCount` zeroed bytes owned by the arena, for code that lays out C
    /// structs from their descriptors (the generic JSON converter).
    package func zeroedBytes(_ byteCount: Int) -> UnsafeMutableRawPointer { allocate(byteCount) }

    /// `byteCount` zeroed bytes, 16-byte aligned, alive as long as the arena.
    @inlinable
    func allocate(_ byteCount: Int) -> UnsafeMutableRawPointer {
        let size = (max(byteCount, 1) + Self.alignment - 1) & ~(Self.alignment - 1)
        if size > remaining { addChunk(atLeast: size) }
        guard let pointer = cursor else { fatalError("out of memory") }
        cursor = pointer + size
        remaining -= size
        return pointer
    }

    @usableFromInline
    func addChunk(atLeast size: Int) {
        let chunkSize = max(size + Self.headerSize, nextChunkSize)
        nextChunkSize = min(nextChunkSize * 4, Self.maxChunkSize)
        guard let newChunk = calloc(1, chunkSize) else { fatalError("out of memory") }
        newChunk.storeBytes(of: chunk, as: UnsafeMutableRawPointer?.self)
        newChunk.storeBytes(of: chunkSize, toByteOffset: 8, as: Int.self)
        chunk = newChunk
        cursor = newChunk + Self.headerSize
        remaining = chunkSize - Self.headerSize
    }
}
