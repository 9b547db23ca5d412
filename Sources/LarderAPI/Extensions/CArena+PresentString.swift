import LarderWire

extension CArena {
    /// A NUL-terminated copy of `string` that is never NULL, even when empty: the
    /// C form of a set proto3 `optional string` field (NULL means absent).
    func presentString(_ string: String) -> UnsafeMutablePointer<CChar> {
        if let pointer = self.string(string) { return pointer }
        return zeroedBytes(1).assumingMemoryBound(to: CChar.self)
    }
}
