import CProtobufC
import LarderWire

/// How protobuf-c lays out each field type in a generated C struct.
enum CLayout {
    /// Bytes one value takes in a struct member or repeated array.
    static func stride(of type: FieldType) -> Int {
        switch type {
        case .int32, .sint32, .sfixed32, .uint32, .fixed32, .enum: MemoryLayout<Int32>.stride
        // protobuf_c_boolean is a C int.
        case .bool: MemoryLayout<Int32>.stride
        case .int64, .sint64, .sfixed64, .uint64, .fixed64: MemoryLayout<Int64>.stride
        case .float: MemoryLayout<Float>.stride
        case .double: MemoryLayout<Double>.stride
        case .string, .message: MemoryLayout<UnsafeRawPointer?>.stride
        case .bytes: MemoryLayout<ProtobufCBinaryData>.stride
        }
    }

    /// True when the value at `slot` is its type's default (proto3 leaves it off the wire).
    static func isZero(_ slot: UnsafeRawPointer, _ type: FieldType) -> Bool {
        switch type {
        case .int32, .sint32, .sfixed32, .uint32, .fixed32, .enum, .bool: slot.load(as: Int32.self) == 0
        case .int64, .sint64, .sfixed64, .uint64, .fixed64: slot.load(as: Int64.self) == 0
        case .float: slot.load(as: Float.self) == 0
        case .double: slot.load(as: Double.self) == 0
        case .string:
            slot.load(as: UnsafePointer<CChar>?.self).map { $0.pointee == 0 } ?? true
        case .bytes: slot.load(as: ProtobufCBinaryData.self).len == 0
        case .message: slot.load(as: UnsafeRawPointer?.self) == nil
        }
    }
}
