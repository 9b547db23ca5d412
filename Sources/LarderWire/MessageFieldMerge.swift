import CProtobufC

/// Rewrites a message's wire bytes so that each singular message field occurs once, carrying its
/// occurrences' payloads concatenated, at every depth.
///
/// Protobuf merges a repeated singular message field: a later occurrence sets only the fields it
/// carries, which is what parsing the concatenation of the payloads does. protobuf-c 1.4 does not
/// (of proto3 scalar fields it keeps the last occurrence's values, zeros included), so a Timestamp
/// sent as `{seconds}` then `{nanos}` would lose its seconds. `DecodeLimitScan` finds the rare input
/// that needs this; everything else is unpacked as it came.
///
/// A oneof member is merged only with its occurrences since another member of its oneof last
/// occurred (that one cleared it), and written where the first of those was, so the last member
/// on the wire still wins.
enum MessageFieldMerge {
    /// `bytes`, a `descriptor` message, with repeats merged; nil when they are malformed (protobuf-c
    /// then refuses the original bytes).
    static func merged(_ bytes: UnsafeRawBufferPointer, as descriptor: UnsafePointer<ProtobufCMessageDescriptor>)
        -> [UInt8]?
    {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        return append(bytes, descriptor, depth: 0, to: &out) ? out : nil
    }

    /// What the output is made of, in order.
    private enum Piece {
        /// Bytes of the input copied as they are (a field that is not a message, or an unknown one).
        case raw(Range<Int>)
        /// An element of a repeated message field, its payload rewritten in turn.
        case element(tag: UInt64, payload: Range<Int>, UnsafePointer<ProtobufCMessageDescriptor>)
        /// The merged occurrences of one singular message field, by index into `groups`.
        case group(Int)
    }

    /// The occurrences of one singular message field that are merged into one.
    private struct Group {
        let tag: UInt64
        let descriptor: UnsafePointer<ProtobufCMessageDescriptor>
        var payloads: [Range<Int>]
        /// False once another member of its oneof occurred after it: it is written nowhere.
        var isLive = true
    }

    private static func append(_ bytes: UnsafeRawBufferPointer, _ descriptor: UnsafePointer<ProtobufCMessageDescriptor>,
                               depth: Int, to out: inout [UInt8]) -> Bool {
        guard depth < DecodeLimitScan.maxDepth else {
            out.append(contentsOf: bytes)
            return true
        }
        var reader = WireReader(bytes: bytes)
        var pieces: [Piece] = []
        var groups: [Group] = []
        // The group a singular message field's next occurrence joins, by field index.
        var openGroups: [Int: Int] = [:]
        while !reader.isAtEnd {
            let start = reader.offset
            guard let tag = reader.varint(), let value = reader.value(wireType: tag & 7) else { return false }
            let fieldNumber = tag >> 3
            guard fieldNumber <= UInt64(UInt32.max),
                  let field = protobuf_c_message_descriptor_get_field(descriptor, UInt32(fieldNumber))
            else {
                pieces.append(.raw(start..<reader.offset))
                continue
            }
            let index = field - descriptor.pointee.fields
            if field.pointee.flags & PROTOBUF_C_FIELD_FLAG_ONEOF.rawValue != 0 {
                // Another member of this oneof clears what came before.
                for (other, group) in openGroups where other != index
                    && descriptor.pointee.fields[other].quantifier_offset == field.pointee.quantifier_offset {
                    groups[group].isLive = false
                    openGroups[other] = nil
                }
            }
            guard field.pointee.type == PROTOBUF_C_TYPE_MESSAGE, let nested = field.pointee.descriptor else {
                pieces.append(.raw(start..<reader.offset))
                continue
            }
            // A message field on another wire type is malformed: protobuf-c refuses it.
            guard case .lengthDelimited(let payload) = value else { return false }
            let nestedDescriptor = nested.assumingMemoryBound(to: ProtobufCMessageDescriptor.self)
            let payloadRange = (reader.offset - payload.count)..<reader.offset
            if field.pointee.label == PROTOBUF_C_LABEL_REPEATED {
                pieces.append(.element(tag: tag, payload: payloadRange, nestedDescriptor))
            } else if let group = openGroups[index] {
                groups[group].payloads.append(payloadRange)
            } else {
                openGroups[index] = groups.count
                pieces.append(.group(groups.count))
                groups.append(Group(tag: tag, descriptor: nestedDescriptor, payloads: [payloadRange]))
            }
        }
        for piece in pieces {
            switch piece {
            case .raw(let range):
                out.append(contentsOf: bytes[range])
            case .element(let tag, let payload, let nested):
                guard appendField(tag: tag, UnsafeRawBufferPointer(rebasing: bytes[payload]), nested, depth: depth,
                                  to: &out) else { return false }
            case .group(let index) where groups[index].isLive:
                let group = groups[index]
                var concatenated: [UInt8] = []
                for payload in group.payloads { concatenated.append(contentsOf: bytes[payload]) }
                let appended = concatenated.withUnsafeBytes { raw in
                    appendField(tag: group.tag, raw, group.descriptor, depth: depth, to: &out)
                }
                guard appended else { return false }
            case .group:
                break
            }
        }
        return true
    }

    /// Appends a length-delimited field `tag` whose payload is `payload` rewritten as a `descriptor` message.
    private static func appendField(tag: UInt64, _ payload: UnsafeRawBufferPointer,
                                    _ descriptor: UnsafePointer<ProtobufCMessageDescriptor>, depth: Int,
                                    to out: inout [UInt8]) -> Bool {
        var rewritten: [UInt8] = []
        rewritten.reserveCapacity(payload.count)
        guard append(payload, descriptor, depth: depth + 1, to: &rewritten) else { return false }
        appendVarint(tag, to: &out)
        appendVarint(UInt64(rewritten.count), to: &out)
        out.append(contentsOf: rewritten)
        return true
    }

    private static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        out.append(UInt8(value))
    }
}
