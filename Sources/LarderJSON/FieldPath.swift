/// Where a value sits in a message, for error messages: `location.colorHex`,
/// `locations[2].name`, `metadata["k"]`; the empty path is the message itself.
struct FieldPath: Sendable {
    let text: String
    /// The root message's type name, shown for errors at the root.
    let rootType: String

    init(rootType: String) {
        self.text = ""
        self.rootType = rootType
    }

    private init(text: String, rootType: String) {
        self.text = text
        self.rootType = rootType
    }

    func field(_ name: String) -> FieldPath {
        FieldPath(text: text.isEmpty ? name : "\(text).\(name)", rootType: rootType)
    }

    func index(_ index: Int) -> FieldPath { FieldPath(text: "\(text)[\(index)]", rootType: rootType) }

    func key(_ key: String) -> FieldPath { FieldPath(text: "\(text)[\"\(key)\"]", rootType: rootType) }

    /// `location.colorHex`, or `(larder.v1.Location)` at the root.
    var description: String { text.isEmpty ? "(\(rootType))" : text }
}
