import CLarderProto
import CProtobufC
public import LarderWire

/// A point in time (`google.protobuf.Timestamp`): seconds and nanoseconds since the Unix epoch, UTC.
public struct Timestamp: Hashable, Comparable, Sendable {
    public var seconds: Int64
    public var nanos: Int32

    public init(seconds: Int64, nanos: Int32 = 0) {
        self.seconds = seconds
        self.nanos = nanos
    }

    /// The timestamp `milliseconds` after the epoch.
    public init(unixMilliseconds milliseconds: Int64) {
        var seconds = milliseconds / 1000
        var millis = milliseconds % 1000
        if millis < 0 { seconds -= 1; millis += 1000 }
        self.init(seconds: seconds, nanos: Int32(millis) * 1_000_000)
    }

    /// Milliseconds since the epoch, truncated toward negative infinity.
    public var unixMilliseconds: Int64 { seconds * 1000 + Int64(nanos / 1_000_000) }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        (lhs.seconds, lhs.nanos) < (rhs.seconds, rhs.nanos)
    }
}

extension Timestamp: ProtoMessage {
    public static var descriptor: MessageDescriptor {
        MessageDescriptor(google__protobuf__timestamp__descriptor_ptr())
    }

    public init(unpacked message: UnpackedMessage) throws(RPCError) {
        self.init(c: message.cast(to: Google__Protobuf__Timestamp.self))
    }

    init(c: UnsafePointer<Google__Protobuf__Timestamp>) {
        self.init(seconds: c.pointee.seconds, nanos: c.pointee.nanos)
    }

    public func build(in arena: CArena) -> BuiltMessage {
        BuiltMessage(buildC(in: arena))
    }

    func buildC(in arena: CArena) -> UnsafeMutablePointer<Google__Protobuf__Timestamp> {
        let c = arena.message(Google__Protobuf__Timestamp.self) { google__protobuf__timestamp__init($0) }
        c.pointee.seconds = seconds
        c.pointee.nanos = nanos
        return c
    }
}

extension Optional where Wrapped == Timestamp {
    /// The C pointer for an optional Timestamp field (NULL when nil).
    func buildC(in arena: CArena) -> UnsafeMutablePointer<Google__Protobuf__Timestamp>? {
        map { $0.buildC(in: arena) }
    }

    /// Reads an optional Timestamp field.
    init(c: UnsafeMutablePointer<Google__Protobuf__Timestamp>?) {
        self = c.map { Timestamp(c: $0) }
    }
}
