import LarderWire

/// Paging of the lists sorted by (name, id): what one request asks for, and how the rows
/// read for it become a page and its `next_page_token`.
///
/// `page_size` 0 keeps the behaviour these methods had before they were paged: every row
/// (after the token, if one is given) in one reply, with no next token. Pages leave out the
/// rows whose name is over `NamePageToken.maxNameBytes` (64 KiB; only rows stored before
/// names were capped at 400 bytes can be), as ListMealRecords leaves out records too large
/// for a reply: a page of them could not hold its next token, or not fit a reply at all.
struct NameListPage {
    private let list: NamePageToken.List
    private let filterHash: UInt64
    /// Rows a page holds; nil = all.
    private let pageSize: Int?
    /// What to read: one row more than the page holds, to learn whether more follow.
    let query: NamePageQuery

    /// INVALID_ARGUMENT for a negative page size, or a page token that is not one or was
    /// issued by another method or for another `filter` (named `filterName`; a list without
    /// one passes nil, and a token whose filter was edited is then simply not valid).
    init(pageSize: Int32, pageToken: String, list: NamePageToken.List,
         filter: String = "", filterName: String? = nil) throws(RPCError) {
        guard pageSize >= 0 else {
            throw RPCError.invalidArgument("page_size must not be negative, got \(pageSize)")
        }
        self.list = list
        filterHash = NamePageToken.filterHash(filter)
        self.pageSize = pageSize == 0 ? nil : min(Int(pageSize), Operations.maxPageSize)
        let after = pageToken.isEmpty ? NameCursor.start
            : try NamePageToken.decode(pageToken, list: list, filterHash: filterHash, filterName: filterName).cursor
        query = NamePageQuery(after: after, limit: self.pageSize.map { $0 + 1 } ?? .max,
                              maxNameBytes: self.pageSize == nil ? .max : NamePageToken.maxNameBytes)
    }

    /// `rows` (read with `query`) cut to the page, and the token of the next page (empty on
    /// the last one). A page also ends early, after at least one row, where the rows'
    /// `listEncodingBound` and the token naming its last row would take it past
    /// `Operations.maxPageBytes`: only rows stored before names were capped in bytes are
    /// large enough for that.
    func page<Row: NameSortedRow>(_ rows: [Row]) -> (rows: [Row], nextPageToken: String) {
        guard let pageSize else { return (rows, "") }
        var count = 0
        var bytes = 0
        while count < min(pageSize, rows.count) {
            bytes += rows[count].listEncodingBound
            let token = NamePageToken.maxEncodedLength(nameBytes: rows[count].name.utf8.count)
            if count > 0 && bytes + token > Operations.maxPageBytes { break }
            count += 1
        }
        guard count < rows.count else { return (rows, "") }
        let token = NamePageToken(list: list, filterHash: filterHash, cursor: rows[count - 1].nameCursor)
        return (Array(rows.prefix(count)), token.encoded())
    }
}
