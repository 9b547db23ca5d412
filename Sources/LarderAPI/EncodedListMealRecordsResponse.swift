import CLarderProto
import CProtobufC
import LarderWire

/// `larder.storage.v1.EncodedListMealRecordsResponse`: a ListMealRecords reply
/// whose records are already encoded, as the store keeps them.
///
/// It encodes to the same bytes as a `ListMealRecordsResponse` holding the
/// records those encodings stand for (a bytes field and a message field look
/// the same on the wire), so the server sends it as the ListMealRecords reply
/// without building any record.
public struct EncodedListMealRecordsResponse: Hashable, Sendable {
    /// Each one the encoding of a `MealRecord`, newest first.
    public var mealRecords: EncodedMessages
    /// Pass as `pageToken` for the next page; empty on the last page.
    public var nextPageToken: String

    public init(mealRecords: EncodedMessages, nextPageToken: String = "") {
        self.mealRecords = mealRecords
        self.nextPageToken = nextPageToken
    }

    /// The same reply with its records decoded.
    public func decoded() throws(RPCError) -> ListMealRecordsResponse {
        try ProtoCodec.decode(ListMealRecordsResponse.self, from: ProtoCodec.encode(self))
    }
}

extension EncodedListMealRecordsResponse: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__storage__v1__encoded_list_meal_records_response__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Larder__Storage__V1__EncodedListMealRecordsResponse.self).pointee
        mealRecords = EncodedMessages(c.meal_records, count: c.n_meal_records)
        nextPageToken = try CFields.string(c.next_page_token, field: "next_page_token")
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__Storage__V1__EncodedListMealRecordsResponse.self) {
            larder__storage__v1__encoded_list_meal_records_response__init($0)
        }
        c.pointee.n_meal_records = mealRecords.count
        c.pointee.meal_records = mealRecords.binaryData(in: arena)
        c.pointee.next_page_token = arena.string(nextPageToken)
        return c.asMessage
    }
}

extension EncodedListMealRecordsResponse: WireEquivalent {
    public typealias Equivalent = ListMealRecordsResponse
}
