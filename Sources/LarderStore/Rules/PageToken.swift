import LarderWire

/// The opaque `page_token` of ListMealRecords: base64url (no padding) of
/// version (1 byte), the last row's eaten_at as Unix milliseconds (8 bytes, big
/// endian) and nanoseconds past them (4 bytes), its id (16 bytes) and a hash of
/// the request's filters (8 bytes).
///
/// The hash makes a token unusable with other filters; the keyset position
/// keeps pages correct while rows are inserted. Not a secret: only opaque.
/// Version 1 (before nanosecond precision: no nanoseconds, a hash of
/// millisecond filters) is refused as not valid; a client starts over.
struct PageToken: Hashable {
    static let version: UInt8 = 2
    private static let byteCount = 37
    /// Characters of an encoded token (unpadded base64url of `byteCount` bytes).
    static let encodedLength = (byteCount * 4 + 2) / 3

    var cursor: MealRecordCursor
    var filterHash: UInt64

    func encoded() -> String {
        var bytes: [UInt8] = [Self.version]
        bytes.reserveCapacity(Self.byteCount)
        Self.append(UInt64(bitPattern: cursor.eatenAt.milliseconds), bytes: 8, to: &bytes)
        Self.append(UInt64(UInt32(bitPattern: cursor.eatenAt.nanos)), bytes: 4, to: &bytes)
        bytes.append(contentsOf: StoreID.parse(cursor.id) ?? [UInt8](repeating: 0, count: 16))
        Self.append(filterHash, bytes: 8, to: &bytes)
        return Base64.encode(bytes, alphabet: .urlSafe, padded: false)
    }

    /// Decodes `text`; INVALID_ARGUMENT when it is not a token or belongs to other filters. A
    /// text of another length is refused on its length alone, before it is decoded (a 4 MB one
    /// took a reader ~30 ms to decode).
    static func decode(_ text: String, filterHash: UInt64) throws(RPCError) -> PageToken {
        let length = text.utf8.count
        guard length == encodedLength else {
            throw RPCError.invalidArgument("page_token is not valid: it is \(length) bytes, a page token is \(encodedLength); "
                + "pass the next_page_token of a previous page")
        }
        guard let bytes = Base64.decode(text.utf8, rules: .pageToken), bytes.count == byteCount, bytes[0] == version,
              let nanos = Int32(exactly: read(bytes, at: 9, count: 4)), (0..<1_000_000).contains(nanos) else {
            throw RPCError.invalidArgument("page_token is not valid; pass the next_page_token of a previous page")
        }
        let token = PageToken(
            cursor: MealRecordCursor(
                eatenAt: StoreInstant(milliseconds: Int64(bitPattern: read(bytes, at: 1, count: 8)), nanos: nanos),
                id: StoreID.format(Array(bytes[13..<29]))),
            filterHash: read(bytes, at: 29, count: 8))
        guard token.filterHash == filterHash else {
            throw RPCError.invalidArgument(
                "page_token was issued for other filters; repeat start_time, end_time and category unchanged")
        }
        return token
    }

    /// FNV-1a over the filters that define a listing (not the page size), to the nanosecond.
    static func filterHash(start: StoreInstant?, end: StoreInstant?, category: Int32) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ value: UInt64) {
            for shift in stride(from: 56, through: 0, by: -8) {
                hash ^= (value >> UInt64(shift)) & 0xFF
                hash = hash &* 0x0000_0100_0000_01B3
            }
        }
        for bound in [start, end] {
            mix(bound == nil ? 0 : 1)
            mix(UInt64(bitPattern: bound?.milliseconds ?? 0))
            mix(UInt64(UInt32(bitPattern: bound?.nanos ?? 0)))
        }
        mix(UInt64(UInt32(bitPattern: category)))
        return hash
    }

    private static func append(_ value: UInt64, bytes count: Int, to bytes: inout [UInt8]) {
        for shift in stride(from: (count - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    private static func read(_ bytes: [UInt8], at offset: Int, count: Int) -> UInt64 {
        bytes[offset..<offset + count].reduce(0) { $0 << 8 | UInt64($1) }
    }
}

extension Base64.Rules {
    /// Page tokens (`PageToken`, `NamePageToken`): URL-safe, unpadded and canonical, so each token has one text.
    static let pageToken = Base64.Rules(standard: false, urlSafe: true, padding: false, canonical: true)
}
