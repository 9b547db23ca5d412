import CProtobufC
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Owns the C memory of a protobuf-c message built from Swift values.
///
/// Strings, structs and arrays allocated here live until the arena is
/// released; use it only through `CArena.with`, which frees everything on
/// return, so no C pointer escapes the scope that packs the message.
public final class CArena {
    private var allocations: [UnsafeMutableRawPointer] = []

    private init() {}

    deinit {
        for pointer in allocations { free(pointer) }
    }

    /// Runs `body` with a fresh arena and frees all its memory afterwards.
    public static func with<R>(_ body: (CArena) throws -> R) rethrows -> R {
        let arena = CArena()
        return try withExtendedLifetime(arena) { try body(arena) }
    }

    /// A NUL-terminated copy of `string`; nil (which protobuf-c packs as
    /// the empty string) when it is empty.
    public func string(_ string: String) -> UnsafeMutablePointer<CChar>? {
        if string.isEmpty { return nil }
        let copy = string.withCString { strdup($0) }
        guard let copy else { fatalError("out of memory") }
        allocations.append(UnsafeMutableRawPointer(copy))
        return copy
    }

    /// A zeroed C struct of type `T`, initialised by `initializer` (a generated `*__init`).
    public func message<T>(_ type: T.Type, _ initializer: (UnsafeMutablePointer<T>) -> Void)
        -> UnsafeMutablePointer<T>
    {
        let pointer = allocate(MemoryLayout<T>.stride).bindMemory(to: T.self, capacity: 1)
        initializer(pointer)
        return pointer
    }

    /// A typed C array of pointers to the structs built from `items`, for a
    /// repeated message field.
    public func pointers<T, C>(_ items: [T], _ build: (T) -> UnsafeMutablePointer<C>)
        -> UnsafeMutablePointer<UnsafeMutablePointer<C>?>?
    {
        if items.isEmpty { return nil }
        let array = allocate(MemoryLayout<UnsafeMutablePointer<C>?>.stride * items.count)
            .bindMemory(to: UnsafeMutablePointer<C>?.self, capacity: items.count)
        for (index, item) in items.enumerated() { array[index] = build(item) }
        return array
    }

    /// A C array of NUL-terminated copies of `strings`.
    public func stringArray(_ strings: [String]) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? {
        if strings.isEmpty { return nil }
        let array = allocate(MemoryLayout<UnsafeMutablePointer<CChar>?>.stride * strings.count)
            .bindMemory(to: UnsafeMutablePointer<CChar>?.self, capacity: strings.count)
        for (index, string) in strings.enumerated() { array[index] = self.string(string) }
        return array
    }

    /// A C array holding `values` (a repeated numeric field); nil when empty.
    public func values<T: BitwiseCopyable>(_ values: [T]) -> UnsafeMutablePointer<T>? {
        if values.isEmpty { return nil }
        let array = allocate(MemoryLayout<T>.stride * values.count).bindMemory(to: T.self, capacity: values.count)
        for (index, value) in values.enumerated() { array[index] = value }
        return array
    }

    /// A copy of `bytes` as protobuf-c binary data.
    public func bytes(_ bytes: [UInt8]) -> ProtobufCBinaryData {
        if bytes.isEmpty { return ProtobufCBinaryData(len: 0, data: nil) }
        let pointer = allocate(bytes.count)
        bytes.withUnsafeBytes { pointer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        return ProtobufCBinaryData(len: bytes.count, data: pointer.assumingMemoryBound(to: UInt8.self))
    }

    /// `byteCount` zeroed bytes owned by the arena, for code that lays out C
    /// structs from their descriptors (the generic JSON converter).
    public func zeroedBytes(_ byteCount: Int) -> UnsafeMutableRawPointer { allocate(byteCount) }

    private func allocate(_ byteCount: Int) -> UnsafeMutableRawPointer {
        guard let pointer = calloc(1, max(byteCount, 1)) else { fatalError("out of memory") }
        allocations.append(pointer)
        return pointer
    }
}
