extension FieldInfo {
    /// `larder.reflection.v1.FieldInfo.Type` under the name the callers know.
    public typealias ValueType = TypeEnum

    /// The key and value fields of a map field; nil for other fields.
    public var map: (key: FieldInfo, value: FieldInfo)? {
        guard let mapKey, let mapValue else { return nil }
        return (mapKey, mapValue)
    }
}

extension FieldInfo.TypeEnum {
    /// The type as written in a .proto file: `int32`, `string`, … (`message`/`enum` for those).
    public var keyword: String {
        let prefix = "TYPE_"
        return protoName.hasPrefix(prefix) ? String(protoName.dropFirst(prefix.count)).lowercased() : protoName.lowercased()
    }
}
