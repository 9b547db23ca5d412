import CLarderProto
import CProtobufC
import LarderWire

/// `larder.reflection.v1.FieldInfo`: one field of a described message.
public struct FieldInfo: Hashable, Sendable {
    /// `larder.reflection.v1.FieldInfo.Type`, with descriptor.proto's numbers.
    public enum ValueType: Int32, Sendable, CaseIterable {
        case unspecified = 0, double = 1, float = 2, int64 = 3, uint64 = 4, int32 = 5, fixed64 = 6, fixed32 = 7
        case bool = 8, string = 9, message = 11, bytes = 12, uint32 = 13, `enum` = 14, sfixed32 = 15
        case sfixed64 = 16, sint32 = 17, sint64 = 18

        /// The type as written in a .proto file: `int32`, `string`, … (`message`/`enum` for those).
        public var protoName: String { self == .unspecified ? "unspecified" : "\(self)" }
    }

    /// `larder.reflection.v1.FieldInfo.Label`.
    public enum Label: Int32, Sendable {
        case unspecified = 0, singular = 1, optional = 2, repeated = 3, required = 4
    }

    /// As in the .proto file, e.g. `color_hex`.
    public var name: String
    /// The proto3 JSON name, e.g. `colorHex`.
    public var jsonName: String
    public var number: Int32
    public var type: ValueType
    public var label: Label
    /// Full name of the message or enum type, for those fields.
    public var typeName: String
    public var inOneof: Bool
    // The key and value of a map field; an array so the struct can hold its own type.
    private var mapFields: [FieldInfo]

    public init(name: String, jsonName: String, number: Int32, type: ValueType, label: Label, typeName: String = "",
                inOneof: Bool = false, map: (key: FieldInfo, value: FieldInfo)? = nil) {
        self.name = name
        self.jsonName = jsonName
        self.number = number
        self.type = type
        self.label = label
        self.typeName = typeName
        self.inOneof = inOneof
        self.mapFields = map.map { [$0.key, $0.value] } ?? []
    }

    /// The key and value fields of a map field; nil for other fields.
    public var map: (key: FieldInfo, value: FieldInfo)? {
        mapFields.count == 2 ? (mapFields[0], mapFields[1]) : nil
    }

    init(c: UnsafePointer<Larder__Reflection__V1__FieldInfo>) throws(RPCError) {
        let c = c.pointee
        let map: (FieldInfo, FieldInfo)?
        if let key = c.map_key, let value = c.map_value {
            map = (try FieldInfo(c: key), try FieldInfo(c: value))
        } else {
            map = nil
        }
        self.init(
            name: try CFields.string(c.name, field: "field.name"),
            jsonName: try CFields.string(c.json_name, field: "field.json_name"),
            number: c.number,
            type: ValueType(rawValue: Int32(truncatingIfNeeded: c.type.rawValue)) ?? .unspecified,
            label: Label(rawValue: Int32(truncatingIfNeeded: c.label.rawValue)) ?? .unspecified,
            typeName: try CFields.string(c.type_name, field: "field.type_name"),
            inOneof: c.in_oneof != 0, map: map)
    }

    func buildC(in arena: CArena) -> UnsafeMutablePointer<Larder__Reflection__V1__FieldInfo> {
        let c = arena.message(Larder__Reflection__V1__FieldInfo.self) { larder__reflection__v1__field_info__init($0) }
        c.pointee.name = arena.string(name)
        c.pointee.json_name = arena.string(jsonName)
        c.pointee.number = number
        c.pointee.type = Larder__Reflection__V1__FieldInfo__Type(rawValue: .init(truncatingIfNeeded: type.rawValue))
        c.pointee.label = Larder__Reflection__V1__FieldInfo__Label(rawValue: .init(truncatingIfNeeded: label.rawValue))
        c.pointee.type_name = arena.string(typeName)
        c.pointee.in_oneof = inOneof ? 1 : 0
        if let (key, value) = map {
            c.pointee.map_key = key.buildC(in: arena)
            c.pointee.map_value = value.buildC(in: arena)
        }
        return c
    }
}
