package import CProtobufC

/// The protobuf encodings of several messages of one type, back to back in
/// one buffer: what a store hands over when it keeps messages encoded, and
/// what a `repeated bytes` field wire-compatible with a repeated message
/// field is built from.
public struct EncodedMessages: Hashable, Sendable {
    /// Every encoding, concatenated.
    public private(set) var bytes: [UInt8] = []
    /// Where each encoding ends in `bytes`.
    private var ends: [Int] = []

    public init() {}

    /// The number of messages.
    public var count: Int { ends.count }

    /// True when it holds no message.
    public var isEmpty: Bool { ends.isEmpty }

    /// The encoding of message `index`.
    public subscript(index: Int) -> ArraySlice<UInt8> {
        bytes[(index == 0 ? 0 : ends[index - 1])..<ends[index]]
    }

    /// Makes room for `messages` messages of about `bytesEach` bytes.
    public mutating func reserveCapacity(messages: Int, bytesEach: Int) {
        ends.reserveCapacity(messages)
        bytes.reserveCapacity(messages * bytesEach)
    }

    /// Adds one message's encoding.
    public mutating func append(_ encoding: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: encoding)
        ends.append(bytes.count)
    }

    /// Adds one message's encoding.
    public mutating func append(_ encoding: [UInt8]) {
        encoding.withUnsafeBytes { append($0) }
    }

    /// Drops the last `k` messages.
    public mutating func removeLast(_ k: Int) {
        guard k > 0 else { return }
        ends.removeLast(k)
        bytes.removeSubrange((ends.last ?? 0)...)
    }

    /// Decodes message `index` as a `M`.
    public func decode<M: ProtoMessage>(_ type: M.Type, at index: Int) throws(RPCError) -> M {
        let slice = self[index]
        let result = slice.withUnsafeBytes { raw in
            Result { () throws(RPCError) -> M in try ProtoCodec.decode(M.self, from: raw) }
        }
        return try result.get()
    }

    /// A C array of `ProtobufCBinaryData`, one per message, pointing into one
    /// copy of `bytes` in `arena`; nil when empty.
    package func binaryData(in arena: CArena) -> UnsafeMutablePointer<ProtobufCBinaryData>? {
        guard count > 0 else { return nil }
        let storage = arena.zeroedBytes(bytes.count).assumingMemoryBound(to: UInt8.self)
        bytes.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { storage.update(from: base, count: source.count) }
        }
        let items = arena.zeroedBytes(MemoryLayout<ProtobufCBinaryData>.stride * count)
            .bindMemory(to: ProtobufCBinaryData.self, capacity: count)
        var start = 0
        for (index, end) in ends.enumerated() {
            items[index] = ProtobufCBinaryData(len: end - start, data: storage + start)
            start = end
        }
        return items
    }

    /// The messages of a `repeated bytes` field of an unpacked message.
    package init(_ items: UnsafeMutablePointer<ProtobufCBinaryData>?, count: Int) {
        guard let items, count > 0 else { return }
        for index in 0..<count {
            let item = items[index]
            append(UnsafeRawBufferPointer(start: item.data, count: item.len))
        }
    }
}
