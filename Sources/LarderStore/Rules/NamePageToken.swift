import LarderWire

/// The opaque `page_token` of ListLocations, ListCategoryGroups and ListItemCategories:
/// base64url (no padding) of version (1 byte), the list it belongs to (1 byte), a hash of
/// the request's filter (8 bytes, big endian), the last row's id (16 bytes) and its name
/// (UTF-8, the rest).
///
/// The list byte and the hash make a token unusable with another method or filter; the
/// keyset position keeps pages correct while rows are inserted, renamed or deleted.
/// Not a secret: only opaque.
struct NamePageToken: Hashable {
    /// Which method issued the token.
    enum List: UInt8 {
        case locations = 1, categoryGroups = 2, itemCategories = 3
    }

    static let version: UInt8 = 1
    private static let headerCount = 26
    /// The longest name a token carries: far above the 400 bytes names are held to, so that
    /// rows stored before that cap page too. Pages leave out rows with longer names
    /// (`NameListPage`), so every token the server issues decodes.
    static let maxNameBytes = 65_536
    /// Characters of the longest token (unpadded base64url).
    static let maxEncodedLength = maxEncodedLength(nameBytes: maxNameBytes)

    /// Characters of the token of a row whose name has `nameBytes` bytes.
    static func maxEncodedLength(nameBytes: Int) -> Int { ((headerCount + nameBytes) * 4 + 2) / 3 }

    var list: List
    var filterHash: UInt64
    var cursor: NameCursor

    func encoded() -> String {
        var bytes: [UInt8] = [Self.version, list.rawValue]
        bytes.reserveCapacity(Self.headerCount + cursor.name.utf8.count)
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: filterHash >> UInt64(shift)))
        }
        bytes.append(contentsOf: StoreID.parse(cursor.id) ?? [UInt8](repeating: 0, count: 16))
        bytes.append(contentsOf: cursor.name.utf8)
        return Base64.encode(bytes, alphabet: .urlSafe, padded: false)
    }

    /// Decodes `text` for `list` with `filterHash`; INVALID_ARGUMENT when it is not a token,
    /// was issued by another method, or for another filter. A text longer than any token is
    /// refused on its length alone, before it is decoded.
    static func decode(_ text: String, list: List, filterHash: UInt64,
                       filterName: String?) throws(RPCError) -> NamePageToken {
        let length = text.utf8.count
        guard length <= maxEncodedLength else {
            throw RPCError.invalidArgument("page_token is not valid: it is \(length) bytes, longer than any page token; "
                + "pass the next_page_token of a previous page")
        }
        guard let bytes = Base64.decode(text.utf8, rules: .pageToken), bytes.count > headerCount, bytes[0] == version,
              let tokenList = List(rawValue: bytes[1]),
              let name = String(validating: bytes[headerCount...], as: UTF8.self),
              // No name holds a NUL (names are validated), and PostgreSQL's text cannot.
              !bytes[headerCount...].contains(0) else {
            throw RPCError.invalidArgument("page_token is not valid; pass the next_page_token of a previous page")
        }
        guard tokenList == list else {
            throw RPCError.invalidArgument("page_token was issued by another method; "
                + "pass the next_page_token of a previous page of this one")
        }
        let hash = bytes[2..<10].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard hash == filterHash else {
            guard let filterName else {
                throw RPCError.invalidArgument("page_token is not valid; pass the next_page_token of a previous page")
            }
            throw RPCError.invalidArgument("page_token was issued for another \(filterName); repeat it unchanged")
        }
        let id = StoreID.format(Array(bytes[10..<26]))
        return NamePageToken(list: list, filterHash: hash, cursor: NameCursor(name: name, id: id))
    }

    /// FNV-1a over a filter's text (the group id of ListItemCategories; empty for none).
    static func filterHash(_ filter: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in filter.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}
