public import LarderWire

// `larder.storage.v1.EncodedListMealRecordsResponse` is a ListMealRecords reply
// whose records are already encoded, as the store keeps them. It encodes to the
// same bytes as a `ListMealRecordsResponse` holding the records those encodings
// stand for (a bytes field and a message field look the same on the wire), so
// the server sends it as the ListMealRecords reply without building any record.
extension EncodedListMealRecordsResponse {
    /// The same reply with its records decoded.
    public func decoded() throws(RPCError) -> ListMealRecordsResponse {
        try ProtoCodec.decode(ListMealRecordsResponse.self, from: ProtoCodec.encode(self))
    }
}

extension EncodedListMealRecordsResponse: WireEquivalent {
    public typealias Equivalent = ListMealRecordsResponse
}
