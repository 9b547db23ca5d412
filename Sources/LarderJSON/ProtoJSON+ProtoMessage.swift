import CProtobufC
public import LarderWire

extension ProtoJSON {
    /// The JSON form of a Swift message value (built in C memory, not packed and parsed again).
    /// - Throws: INVALID_ARGUMENT when a value has no JSON form, e.g. a Timestamp outside years 1-9999.
    public static func json<M: ProtoMessage>(of message: M, options: Options = Options()) throws(RPCError) -> JSON {
        let result = CArena.with { arena in
            Result { () throws(RPCError) -> JSON in
                try json(of: UnsafePointer(message.build(in: arena).pointer), options: options)
            }
        }
        return try result.get()
    }
}
