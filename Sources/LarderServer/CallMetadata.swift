import LarderHTTP2

/// The metadata a call came with, looked up by lower-case name: text values only, the last one
/// of a repeated name. Kept as its transport parsed it, so an HTTP/2 request's metadata is not
/// copied into a dictionary for every call.
public struct CallMetadata: Sendable, ExpressibleByDictionaryLiteral {
    private enum Storage: Sendable {
        case dictionary([String: String])
        case http2(GRPCMetadata)
    }

    private let storage: Storage

    /// Metadata from name-value pairs (the lean protocol's envelope map).
    public init(_ values: [String: String]) {
        storage = .dictionary(values)
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// An HTTP/2 request's metadata; its binary (`-bin`) entries are not visible here.
    init(http2 metadata: GRPCMetadata) {
        storage = .http2(metadata)
    }

    /// The text value under `name`.
    public subscript(name: String) -> String? {
        switch storage {
        case .dictionary(let values):
            return values[name]
        case .http2(let metadata):
            for entry in metadata.entries.reversed() where entry.name == name {
                if case .text(let value) = entry.value { return value }
            }
            return nil
        }
    }
}
