import CProtobufC

/// Checks the wire bytes of a message against `DecodeLimits`, stopping at the
/// first bound exceeded, so the work is bounded by the limits, not by the input.
///
/// Malformed bytes are not its business: it stops quietly, and protobuf-c
/// rejects them.
public enum DecodeLimitScan {
    /// Nesting deeper than any message in proto/.
    static let maxDepth = 32

    /// Throws when `bytes`, as a `descriptor` message, exceed `limits`: RESOURCE_EXHAUSTED naming
    /// the bound, or INVALID_ARGUMENT naming a singular message field that occurs more than
    /// `maxMessageFieldOccurrences` times (no encoder writes one twice).
    /// - Returns: whether a singular message field occurs more than once anywhere in the message,
    ///   so that it must be merged (see `MessageFieldMerge`) before protobuf-c unpacks it.
    @discardableResult
    public static func check(_ bytes: UnsafeRawBufferPointer, as descriptor: MessageDescriptor,
                             limits: DecodeLimits) throws(RPCError) -> Bool {
        var counts = Counts()
        switch scan(bytes, descriptor.pointer, limits, &counts, depth: 0) {
        case nil:
            return counts.repeatedMessageField
        case .bound(let exceeded)?:
            throw RPCError(.resourceExhausted, "\(descriptor.name) \(exceeded) (a limit of this server)")
        case .repeatedMessageField(let path)?:
            let limit = limits.maxMessageFieldOccurrences
            throw RPCError(.invalidArgument, "\(descriptor.name) has \(path) more than \(limit) times: a message "
                + "field that is not repeated may occur at most \(limit) times (encoders write it once)")
        }
    }

    struct Counts {
        var fields = 0
        var unknown = 0
        /// A singular message field occurred more than once in some message.
        var repeatedMessageField = false
    }

    /// Why a scan stopped.
    private enum Exceeded {
        /// A bound of work, as the end of a sentence.
        case bound(String)
        /// A singular message field, by its dotted path, occurs too many times.
        case repeatedMessageField(String)
    }

    /// What was exceeded, or nil.
    private static func scan(_ bytes: UnsafeRawBufferPointer, _ descriptor: UnsafePointer<ProtobufCMessageDescriptor>,
                             _ limits: DecodeLimits, _ counts: inout Counts, depth: Int) -> Exceeded? {
        guard depth < maxDepth else { return nil }
        var reader = WireReader(bytes: bytes)
        // Elements seen of each repeated field, by field index; allocated only when one occurs.
        var repeated: [Int] = []
        // Singular message fields seen, by field index: the first 64 in a bit set, so a message
        // whose fields each occur once (what encoders write) allocates nothing; occurrences
        // beyond what the bit set records are counted here, allocated at the first of them.
        var messageFieldsSeen: UInt64 = 0
        var messageFieldRepeats: [Int] = []
        while !reader.isAtEnd {
            guard let tag = reader.varint(), tag >> 3 <= UInt64(UInt32.max) else { return nil }
            counts.fields += 1
            if counts.fields > limits.maxFields { return .bound("has more than \(limits.maxFields) fields") }
            guard let fieldValue = reader.value(wireType: tag & 7) else { return nil }
            var value: UnsafeRawBufferPointer?
            if case .lengthDelimited(let bytes) = fieldValue { value = bytes }
            guard let field = protobuf_c_message_descriptor_get_field(descriptor, UInt32(tag >> 3)) else {
                counts.unknown += 1
                if counts.unknown > limits.maxUnknownFields {
                    return .bound("has more than \(limits.maxUnknownFields) unknown fields")
                }
                continue
            }
            let name = { String(cString: field.pointee.name) }
            let index = field - descriptor.pointee.fields
            if field.pointee.label == PROTOBUF_C_LABEL_REPEATED {
                if repeated.isEmpty { repeated = Array(repeating: 0, count: Int(descriptor.pointee.n_fields)) }
                let isPacked = tag & 7 == 2 && field.pointee.type != PROTOBUF_C_TYPE_STRING
                    && field.pointee.type != PROTOBUF_C_TYPE_BYTES && field.pointee.type != PROTOBUF_C_TYPE_MESSAGE
                let elements = isPacked ? packedCount(value, type: field.pointee.type) : 1
                repeated[index] += elements
                if isPacked {
                    counts.fields += elements - 1
                    if counts.fields > limits.maxFields { return .bound("has more than \(limits.maxFields) fields") }
                }
                if repeated[index] > limits.maxRepeatedElements {
                    return .bound("has more than \(limits.maxRepeatedElements) elements in \(name())")
                }
            } else if field.pointee.type == PROTOBUF_C_TYPE_MESSAGE {
                let bit: UInt64 = index < 64 ? 1 << UInt64(index) : 0
                if messageFieldsSeen & bit == 0 && bit != 0 {
                    messageFieldsSeen |= bit
                } else {
                    if messageFieldRepeats.isEmpty {
                        messageFieldRepeats = Array(repeating: 0, count: Int(descriptor.pointee.n_fields))
                    }
                    messageFieldRepeats[index] += 1
                    let occurrences = messageFieldRepeats[index] + (bit == 0 ? 0 : 1)
                    if occurrences > 1 { counts.repeatedMessageField = true }
                    if occurrences > limits.maxMessageFieldOccurrences { return .repeatedMessageField(name()) }
                }
            }
            if field.pointee.type == PROTOBUF_C_TYPE_MESSAGE, let value, let nested = field.pointee.descriptor {
                let nestedDescriptor = nested.assumingMemoryBound(to: ProtobufCMessageDescriptor.self)
                switch scan(value, nestedDescriptor, limits, &counts, depth: depth + 1) {
                case nil: break
                case .repeatedMessageField(let path)?: return .repeatedMessageField(name() + "." + path)
                case let exceeded?: return exceeded
                }
            }
        }
        return nil
    }

    /// Elements in a packed repeated scalar field's bytes.
    private static func packedCount(_ value: UnsafeRawBufferPointer?, type: ProtobufCType) -> Int {
        guard let value else { return 0 }
        switch type {
        case PROTOBUF_C_TYPE_FIXED64, PROTOBUF_C_TYPE_SFIXED64, PROTOBUF_C_TYPE_DOUBLE: return value.count / 8
        case PROTOBUF_C_TYPE_FIXED32, PROTOBUF_C_TYPE_SFIXED32, PROTOBUF_C_TYPE_FLOAT: return value.count / 4
        default: return value.reduce(0) { $0 + ($1 & 0x80 == 0 ? 1 : 0) }  // varints end on a byte below 0x80
        }
    }

    /// Top-level fields of an envelope `envelopeSummary` reads, at most: twice `maxFields`,
    /// so an envelope refused for any bound gets the refusal under its call id when the
    /// call id follows up to `maxFields` fields (it is field 1: encoders write it first),
    /// and the work stays bounded by the limits, not by the frame.
    public static func envelopeScanFields(_ limits: DecodeLimits) -> Int { 2 * limits.maxFields }

    /// The call id and the metadata size of a request envelope, read from its top-level
    /// fields only (nested ones are skipped by their length). The call id is the last
    /// `call_id` seen, as protobuf decodes it, and 0 when there is none before the end, the
    /// first malformed byte or, with `limits`, `envelopeScanFields(limits)` fields. The
    /// metadata size is `DecodeLimits.maxMetadataBytes`'s measure, counted until it passes
    /// `limits.maxMetadataBytes` (the scan goes on for the call id).
    public static func envelopeSummary(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits? = nil)
        -> (callID: UInt64, metadataBytes: Int)
    {
        var reader = WireReader(bytes: bytes)
        var callID: UInt64 = 0
        var metadataBytes = 0
        var fields = 0
        let metadataLimit = limits?.maxMetadataBytes ?? .max
        let fieldLimit = limits.map(envelopeScanFields) ?? .max
        while !reader.isAtEnd && fields < fieldLimit {
            fields += 1
            guard let tag = reader.varint() else { break }
            switch reader.value(wireType: tag & 7) {
            case .varint(let value)? where tag >> 3 == 1:
                callID = value
            case .lengthDelimited(let entry)? where tag >> 3 == 5 && metadataBytes <= metadataLimit:
                metadataBytes += metadataEntrySize(entry)
            case nil:
                return (callID, metadataBytes)
            default:
                break
            }
        }
        return (callID, metadataBytes)
    }

    /// Key bytes + value bytes + 32 of one encoded map entry.
    private static func metadataEntrySize(_ entry: UnsafeRawBufferPointer) -> Int {
        var reader = WireReader(bytes: entry)
        var size = DecodeLimits.metadataEntryOverhead
        while !reader.isAtEnd {
            guard let tag = reader.varint(), let value = reader.value(wireType: tag & 7) else { break }
            if case .lengthDelimited(let bytes) = value { size += bytes.count }
        }
        return size
    }
}
