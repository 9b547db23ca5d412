import LarderWire

/// Cuts a page of encoded records to what one reply may hold.
enum PageBudget {
    /// The records that go in the reply, and the encoding of the row a next page
    /// starts after (nil on the last page).
    struct Page {
        var records: EncodedMessages
        var cursorRecord: [UInt8]?
    }

    /// `rows` (up to `pageSize` + 1, the extra one only saying that more follow) cut to
    /// `pageSize` records whose encodings, as fields of the reply, fit `maxBytes`. The page
    /// ends before the first record that would not fit; a record that cannot fit even
    /// alone is passed over (left out), so that it never blocks the listing.
    static func fit(_ rows: consuming EncodedMessages, pageSize: Int, maxBytes: Int) -> Page {
        var bytes = 0
        var lastConsumed: Int?
        var ended = false
        var keep: [Int] = []
        keep.reserveCapacity(min(rows.count, pageSize))
        for index in 0..<min(rows.count, pageSize) {
            let size = fieldSize(rows[index].count)
            if size > maxBytes {
                lastConsumed = index
                continue
            }
            if bytes + size > maxBytes {
                ended = true
                break
            }
            bytes += size
            keep.append(index)
            lastConsumed = index
        }
        // Past the budget, the backend may have stopped reading before the end: more may follow.
        let more = ended || rows.count > pageSize || rows.bytes.count > maxBytes
        let cursorRecord = more ? lastConsumed.map { Array(rows[$0]) } : nil
        if keep.last.map({ $0 + 1 == keep.count }) ?? rows.isEmpty {
            // No record passed over: the page is a prefix of the rows, cut in place (not copied).
            var records = rows
            records.removeLast(records.count - keep.count)
            return Page(records: records, cursorRecord: cursorRecord)
        }
        var records = EncodedMessages()
        records.reserveCapacity(messages: keep.count, bytesEach: keep.isEmpty ? 0 : bytes / keep.count)
        for index in keep { records.append(Array(rows[index])) }
        return Page(records: records, cursorRecord: cursorRecord)
    }

    /// Bytes of one record as a length-delimited field: tag, length varint, encoding.
    static func fieldSize(_ length: Int) -> Int {
        var varint = 1
        var rest = length >> 7
        while rest > 0 { varint += 1; rest >>= 7 }
        return 1 + varint + length
    }
}
