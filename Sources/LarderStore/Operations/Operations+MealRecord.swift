public import LarderAPI
public import LarderWire

extension Operations {
    /// Page size when the request leaves it 0, and the most a page holds (AIP-158).
    public static let defaultPageSize = 50
    public static let maxPageSize = 1000

    /// Creates a meal record; `eaten_at` defaults to now and is kept to the nanosecond.
    /// INVALID_ARGUMENT for a bad field, ALREADY_EXISTS for a taken id. The record is
    /// encoded once, for the store and the reply.
    public static func createMealRecord(_ request: CreateMealRecordRequest,
                                        _ db: any StoreWriter) throws(RPCError) -> EncodedMessage<MealRecord> {
        let input = request.mealRecord
        let id = try Validation.newID(input.id, field: "meal_record.id")
        let name = try Validation.name(input.name, field: "meal_record.name")
        let calories = try Validation.calories(input.calories, field: "meal_record.calories")
        let category = try Validation.mealCategory(input.category, field: "meal_record.category")
        let now = StoreClock.now()
        let eatenAt = try input.eatenAt.map { t throws(RPCError) in
            try Validation.storedTime(t, field: "meal_record.eaten_at")
        } ?? now
        let record = MealRecord(id: id, name: name, calories: calories, category: category, eatenAt: eatenAt,
                                createTime: now, updateTime: now)
        let encoded = EncodedMessage(record)
        try db.insertMealRecord(encoded)
        return encoded
    }

    /// The meal record with the id. INVALID_ARGUMENT for a bad id, NOT_FOUND.
    public static func getMealRecord(_ request: GetMealRecordRequest,
                                     _ db: any StoreReader) throws(RPCError) -> MealRecord {
        let id = try Validation.id(request.id, field: "id")
        guard let record = try db.mealRecord(id: id) else { throw StoreError.notFound("meal record", id: id) }
        try checkReplySize(record)
        return record
    }

    /// RESOURCE_EXHAUSTED for a record too large for a reply: only a name stored before
    /// names were capped in bytes can make one (a record is otherwise under 600 bytes).
    static func checkReplySize(_ record: MealRecord) throws(RPCError) {
        guard record.name.utf8.count > 4096 else { return }
        let size = ProtoCodec.encode(record).count
        guard size > maxPageBytes else { return }
        throw RPCError(.resourceExhausted,
                       "meal record \(record.id) is \(size) bytes, more than a reply holds (\(maxPageBytes)): "
                       + "its name was stored before names were limited to \(Validation.maxNameBytes) bytes; "
                       + "update its name or delete it")
    }

    /// The most bytes of records one ListMealRecords page holds: the 4 MiB frame every
    /// client accepts by default, less room for the envelope and the page token.
    public static let maxPageBytes = Frame.defaultMaxSize - 4096

    /// One page of meal records, newest first, filtered by [start_time, end_time) and category
    /// (to the nanosecond). A page that would exceed `maxPageBytes` ends early, with a
    /// next_page_token; a record larger than that alone (only data stored before names were
    /// capped in bytes can be) is left out of lists (Get answers RESOURCE_EXHAUSTED for it).
    /// INVALID_ARGUMENT for a negative page size, a bad time, or a page token that is not one
    /// or was issued for other filters.
    public static func listMealRecords(_ request: ListMealRecordsRequest,
                                       _ db: any StoreReader) throws(RPCError) -> EncodedListMealRecordsResponse {
        guard request.pageSize >= 0 else {
            throw RPCError.invalidArgument("page_size must not be negative, got \(request.pageSize)")
        }
        let pageSize = request.pageSize == 0 ? defaultPageSize : min(Int(request.pageSize), maxPageSize)
        let start = try request.startTime.map { t throws(RPCError) in try Validation.instant(t, field: "start_time") }
        let end = try request.endTime.map { t throws(RPCError) in try Validation.endInstant(t, field: "end_time") }
        if let start, let end, end <= start {
            throw RPCError.invalidArgument("end_time must be after start_time")
        }
        let filter = try Validation.knownMealCategory(request.category, field: "category")
        let category = filter == .unspecified ? nil : filter
        let hash = PageToken.filterHash(start: start, end: end, category: request.category.rawValue)
        let after = request.pageToken.isEmpty
            ? nil : try PageToken.decode(request.pageToken, filterHash: hash).cursor

        let rows = try db.mealRecords(MealRecordPageQuery(
            start: start ?? .min, end: end ?? .max, category: category, after: after,
            limit: pageSize + 1, maxBytes: maxPageBytes))
        let page = PageBudget.fit(rows, pageSize: pageSize, maxBytes: maxPageBytes)
        var nextPageToken = ""
        if let last = page.cursorRecord {
            // The cursor is the last row passed over (eaten_at, id): read back from its encoding.
            let record = try ProtoCodec.decode(MealRecord.self, from: last)
            let cursor = MealRecordCursor(eatenAt: StoreInstant(record.eatenAt ?? Timestamp(seconds: 0)),
                                          id: record.id)
            nextPageToken = PageToken(cursor: cursor, filterHash: hash).encoded()
        }
        return EncodedListMealRecordsResponse(mealRecords: page.records, nextPageToken: nextPageToken)
    }

    /// Changes the fields the mask names (all mutable ones when empty; then `eaten_at` is required).
    /// INVALID_ARGUMENT for a bad field or path, NOT_FOUND.
    public static func updateMealRecord(_ request: UpdateMealRecordRequest,
                                        _ db: any StoreWriter) throws(RPCError) -> MealRecord {
        let input = request.mealRecord
        let mask = request.updateMask
        let id = try Validation.id(input.id, field: "meal_record.id")
        try UpdateMask.check(mask, allowed: mealRecordPaths)
        let name = mask.covers("name") ? try Validation.name(input.name, field: "meal_record.name") : nil
        let calories = mask.covers("calories")
            ? try Validation.calories(input.calories, field: "meal_record.calories") : nil
        let category = mask.covers("category")
            ? try Validation.mealCategory(input.category, field: "meal_record.category") : nil
        var eatenAt: Timestamp?
        if mask.covers("eaten_at") {
            guard let time = input.eatenAt else {
                throw RPCError.invalidArgument("meal_record.eaten_at is required when the update mask covers it")
            }
            eatenAt = try Validation.storedTime(time, field: "meal_record.eaten_at")
        }

        guard var record = try db.mealRecord(id: id) else { throw StoreError.notFound("meal record", id: id) }
        if let name { record.name = name }
        if let calories { record.calories = calories }
        if let category { record.category = category }
        if let eatenAt { record.eatenAt = eatenAt }
        record.updateTime = StoreClock.now()
        try checkReplySize(record)
        guard try db.updateMealRecord(record) else { throw StoreError.notFound("meal record", id: id) }
        return record
    }

    /// Deletes a meal record. INVALID_ARGUMENT for a bad id, NOT_FOUND.
    public static func deleteMealRecord(_ request: DeleteMealRecordRequest,
                                        _ db: any StoreWriter) throws(RPCError) -> Empty {
        let id = try Validation.id(request.id, field: "id")
        guard try db.deleteMealRecord(id: id) else { throw StoreError.notFound("meal record", id: id) }
        return Empty()
    }
}
