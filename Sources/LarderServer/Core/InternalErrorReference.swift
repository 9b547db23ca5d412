/// The reference an INTERNAL reply gives the client in place of the error's own text,
/// which goes to the server's log under the same reference.
enum InternalErrorReference {
    /// 12 random hex digits: unique enough to find one line in a day's log.
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() & 0xFFFF_FFFF_FFFF
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 12 - hex.count) + hex
    }
}
