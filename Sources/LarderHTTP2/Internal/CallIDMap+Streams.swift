import LarderWire

extension CallIDMap {
    /// The value under HTTP/2 stream `id` (a stream id is positive: never 0 as a key).
    subscript(stream id: Int32) -> Value? {
        get { self[UInt64(truncatingIfNeeded: id)] }
        set { self[UInt64(truncatingIfNeeded: id)] = newValue }
    }

    @discardableResult
    mutating func removeValue(forStream id: Int32) -> Value? {
        removeValue(forKey: UInt64(truncatingIfNeeded: id))
    }
}
