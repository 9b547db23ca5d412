#if canImport(Glibc)
import Glibc
#endif

/// The header fields of the one header block being received, as bytes in one buffer that a
/// session reuses for every request: HTTP/2 forbids interleaving header blocks (RFC 9113 §6.10),
/// so a connection has at most one in progress, and each field costs no allocation once the
/// buffer has grown to a request's size.
struct HTTP2HeaderBlock {
    /// Where one field's name and value lie in `bytes`.
    fileprivate struct Span {
        var nameStart: Int
        var nameCount: Int
        var valueCount: Int
    }

    /// The stream whose block this is; 0 for none.
    private(set) var streamID: Int32 = 0
    private var bytes: [UInt8] = []
    private var spans: [Span] = []

    /// Capacity kept between blocks; a bigger buffer (an unusually large request) is let go.
    private static let keptCapacity = 4096

    var isEmpty: Bool { spans.isEmpty }

    /// Starts the block of `streamID`, forgetting the previous one.
    mutating func begin(streamID: Int32) {
        self.streamID = streamID
        clear()
    }

    /// Drops the fields so far (the block is over, or over its size limit).
    mutating func clear() {
        guard !spans.isEmpty else { return }
        let keep = bytes.capacity <= Self.keptCapacity
        bytes.removeAll(keepingCapacity: keep)
        spans.removeAll(keepingCapacity: keep)
    }

    mutating func append(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        if spans.isEmpty && spans.capacity == 0 {
            bytes.reserveCapacity(256)
            spans.reserveCapacity(12)  // a gRPC request's pseudo-headers and usual fields
        }
        spans.append(Span(nameStart: bytes.count, nameCount: name.count, valueCount: value.count))
        bytes.append(contentsOf: name)
        bytes.append(contentsOf: value)
    }

    /// Calls `body` with the fields, which are valid only during the call.
    func withFields<R>(_ body: (Fields) -> R) -> R {
        bytes.withUnsafeBytes { raw in body(Fields(raw: raw, spans: spans)) }
    }

    /// The fields of a block, in the order received, as borrowed bytes.
    struct Fields: RandomAccessCollection {
        fileprivate let raw: UnsafeRawBufferPointer
        fileprivate let spans: [Span]

        var startIndex: Int { 0 }
        var endIndex: Int { spans.count }

        subscript(index: Int) -> (name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
            let span = spans[index]
            let name = UnsafeRawBufferPointer(rebasing: raw[span.nameStart..<(span.nameStart + span.nameCount)])
            let valueStart = span.nameStart + span.nameCount
            return (name, UnsafeRawBufferPointer(rebasing: raw[valueStart..<(valueStart + span.valueCount)]))
        }
    }
}

extension UnsafeRawBufferPointer {
    /// Whether these bytes are exactly `text`'s UTF-8.
    func equals(_ text: StaticString) -> Bool {
        guard count == text.utf8CodeUnitCount else { return false }
        guard count > 0, let baseAddress else { return true }
        return memcmp(baseAddress, text.utf8Start, count) == 0
    }

    /// Whether both hold the same bytes.
    func sameBytes(as other: UnsafeRawBufferPointer) -> Bool {
        guard count == other.count else { return false }
        guard count > 0, let baseAddress, let otherBase = other.baseAddress else { return true }
        return memcmp(baseAddress, otherBase, count) == 0
    }
}
