/// A property a fuzz input broke: libFuzzer reports it as a crash, the
/// corpus tests as a failed expectation.
public struct FuzzFailure: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}
