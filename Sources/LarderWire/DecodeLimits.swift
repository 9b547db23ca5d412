import CProtobufC

/// Bounds on the work one decoded message may cost, checked on its wire bytes
/// before protobuf-c unpacks it (which allocates per field).
///
/// The server decodes every request envelope and request payload on its event
/// loop; without these bounds, a 4 MiB frame of two million empty fields would
/// stall every other client for as long as unpacking takes.
public struct DecodeLimits: Hashable, Sendable {
    /// Fields on the wire in one message, nested messages included: every
    /// element of a repeated field, every field-mask path and map entry counts.
    public var maxFields: Int
    /// Fields whose number the message does not declare (protobuf-c keeps a copy of each).
    public var maxUnknownFields: Int
    /// Elements of one repeated field in one message (field-mask paths, map entries,
    /// packed scalars).
    public var maxRepeatedElements: Int
    /// Request metadata, counted like gRPC's header list size: each entry's key and value
    /// bytes plus 32.
    public var maxMetadataBytes: Int
    /// Occurrences of one singular (not repeated) message field in one message. Protobuf merges
    /// each repeat into what came before (a later one sets only the fields it carries); the
    /// server does that by concatenating the occurrences' payloads before protobuf-c unpacks
    /// (`MessageFieldMerge`: protobuf-c itself keeps only the last occurrence's scalar fields).
    /// Each merge level rereads the payloads, so this bounds the work. Encoders write it once.
    public var maxMessageFieldOccurrences: Int

    public init(maxFields: Int = 10_000, maxUnknownFields: Int = 100, maxRepeatedElements: Int = 1_000,
                maxMetadataBytes: Int = 8 * 1024, maxMessageFieldOccurrences: Int = 8) {
        self.maxFields = maxFields
        self.maxUnknownFields = maxUnknownFields
        self.maxRepeatedElements = maxRepeatedElements
        self.maxMetadataBytes = maxMetadataBytes
        self.maxMessageFieldOccurrences = maxMessageFieldOccurrences
    }

    /// What `larder-server` enforces (see docs/LIMITS.md).
    public static let server = DecodeLimits()

    /// Bytes one metadata entry counts against `maxMetadataBytes`.
    public static let metadataEntryOverhead = 32
}
