import CSQLite
import LarderAPI
import LarderStore
import LarderWire

/// The SQLite implementation of the store primitives on one connection,
/// with its prepared statements cached. Used by one thread at a time.
final class SQLiteSession: StoreConnection {
    /// What a session does with the store's `MealKeyIndex`.
    enum Role {
        /// Reads it, from snapshots that may lag it or run ahead of it.
        case reader
        /// Stages its changes and publishes them at commit; the only one to change it.
        case writer
    }

    let connection: SQLiteConnection
    private let role: Role
    /// For a writer: how closing copies the WAL into the database, and whom it tells when it
    /// could not; nil for readers.
    private let closingCheckpoint: ClosingCheckpoint?
    /// Refuses writes once the database file has moved; nil for readers and a read-only store.
    private let fileWatch: DatabaseFileWatch?
    private let mealKeys: MealKeyIndex
    private var mealKeyChanges: MealKeyTransaction
    private var statements: [SQLiteStatement?]

    /// Wraps `connection`; a writer checkpoints and truncates the WAL on close, and
    /// refuses writes once `fileWatch` saw the database file move.
    init(connection: SQLiteConnection, role: Role, mealKeys: MealKeyIndex, closingCheckpoint: ClosingCheckpoint? = nil,
         fileWatch: DatabaseFileWatch? = nil) {
        self.connection = connection
        self.role = role
        self.closingCheckpoint = closingCheckpoint
        self.fileWatch = fileWatch
        self.mealKeys = mealKeys
        self.mealKeyChanges = MealKeyTransaction(index: mealKeys)
        self.statements = Array(repeating: nil, count: SQLiteQuery.allCases.count)
    }

    // MARK: Statements

    /// The cached statement for `query`, reset and ready to bind.
    @inline(__always)
    private func prepared(_ query: SQLiteQuery) throws(SQLiteError) -> SQLiteStatement {
        if let statement = statements[query.rawValue] { return statement }
        let statement = try connection.prepare(query.sql)
        statements[query.rawValue] = statement
        return statement
    }

    /// Runs a statement that returns no rows.
    private func run(_ query: SQLiteQuery) throws(RPCError) {
        do throws(SQLiteError) {
            let statement = try prepared(query)
            defer { statement.reset() }
            try statement.run()
        } catch {
            throw error.rpcError
        }
    }

    // MARK: Transactions

    func beginRead() throws(RPCError) { try run(.begin) }
    func endRead() throws(RPCError) { try run(.commit) }
    func beginWrite() throws(RPCError) {
        if let fileWatch, fileWatch.hasMoved { throw fileWatch.error }
        try run(.beginImmediate)
    }
    func savepoint() throws(RPCError) {
        try run(.savepoint)
        mealKeyChanges.savepoint()
    }

    func releaseSavepoint() throws(RPCError) {
        try run(.release)
        mealKeyChanges.releaseSavepoint()
    }

    func rollbackToSavepoint() throws(RPCError) {
        mealKeyChanges.rollbackToSavepoint()
        try run(.rollbackToSavepoint)
        try run(.release)
    }

    func commit() throws(RPCError) {
        // Checked last, so that what is refused is never written: the executor rolls back.
        if let fileWatch, role == .writer, fileWatch.check(connection) { throw fileWatch.error }
        do throws(SQLiteError) {
            let statement = try prepared(.commit)
            defer { statement.reset() }
            try statement.run()
        } catch {
            throw Self.commitFailure(error)
        }
        mealKeyChanges.committed()
    }

    /// What a failed COMMIT answers: UNKNOWN where its frames may be in the WAL, for the
    /// recovery at the next start to find (`SQLiteError.commitOutcomeUnknown`), else what the
    /// error means (a full disk met while writing the frames is RESOURCE_EXHAUSTED, not applied).
    ///
    /// Such a write is not seen while the server runs (the connection rolled back), and the next
    /// commit writes over its frames: it comes back only if the server stops before another write
    /// commits. Conservative: a sync failing at a WAL restart, before any frame, is UNKNOWN too.
    static func commitFailure(_ error: SQLiteError) -> RPCError {
        guard SQLiteError.commitOutcomeUnknown.contains(error.returnedCode) else { return error.rpcError }
        let step = error.returnedCode == SQLiteError.ioErrorFsync || error.returnedCode == SQLiteError.ioErrorDirectoryFsync
            ? "syncing the commit to disk failed" : "the commit failed where it may already be in the write-ahead log"
        return RPCError(.unknown, "\(step), so this write may or may not have been applied: it is not seen now, but if "
                        + "the server stops before another write commits, its next start applies it; read it back "
                        + "before repeating it: \(error.message)", cause: error)
    }

    /// SQLite undoes a failed statement (its statement journal) and keeps the transaction.
    var undoesFailedStatements: Bool { true }
    var changeCount: Int { connection.totalChanges }
    var isInTransaction: Bool { !connection.isAutocommit }

    func rollback() {
        mealKeyChanges.rollback()
        guard !connection.isAutocommit else { return }
        do throws(RPCError) { try run(.rollback) } catch {}
    }

    func close() {
        statements.removeAll()  // finalized first: a statement of ours would hold the checkpoint back
        if let closingCheckpoint, let db = try? connection.database() { closingCheckpoint.run(on: db) }
        connection.close()
    }

    // MARK: Row decoding

    private static func location(_ row: SQLiteStatement) -> Location {
        Location(id: row.string(at: 0), name: row.string(at: 1), colorHex: row.string(at: 2),
                 createTime: Timestamp(unixMilliseconds: row.int64(at: 3)),
                 updateTime: Timestamp(unixMilliseconds: row.int64(at: 4)))
    }

    private static func group(_ row: SQLiteStatement) -> CategoryGroup {
        CategoryGroup(id: row.string(at: 0), name: row.string(at: 1), colorHex: row.string(at: 2),
                      createTime: Timestamp(unixMilliseconds: row.int64(at: 3)),
                      updateTime: Timestamp(unixMilliseconds: row.int64(at: 4)))
    }

    private static func itemCategory(_ row: SQLiteStatement) -> ItemCategory {
        ItemCategory(id: row.string(at: 0), name: row.string(at: 1), iconName: row.string(at: 2),
                     categoryGroupID: row.string(at: 3),
                     createTime: Timestamp(unixMilliseconds: row.int64(at: 4)),
                     updateTime: Timestamp(unixMilliseconds: row.int64(at: 5)))
    }

    private static func meal(_ row: SQLiteStatement) throws(SQLiteError) -> MealRecord {
        let rawCategory = row.int64(at: 3)
        guard let category = Int32(exactly: rawCategory).flatMap(MealCategory.init(known:)),
              let calories = Int32(exactly: row.int64(at: 2)) else {
            throw SQLiteError(code: SQLITE_CORRUPT, message: "meal record \(row.string(at: 0)) has invalid values")
        }
        return MealRecord(id: row.string(at: 0), name: row.string(at: 1), calories: calories, category: category,
                          eatenAt: try eatenAt(row, milliseconds: 4, nanos: 7).timestamp,
                          createTime: Timestamp(unixMilliseconds: row.int64(at: 5)),
                          updateTime: Timestamp(unixMilliseconds: row.int64(at: 6)))
    }

    /// The eaten_at of a row from its two columns; SQLITE_CORRUPT for nanoseconds out of range.
    private static func eatenAt(_ row: SQLiteStatement, milliseconds: Int32, nanos: Int32)
        throws(SQLiteError) -> StoreInstant
    {
        guard let ns = Int32(exactly: row.int64(at: nanos)), (0..<1_000_000).contains(ns) else {
            throw SQLiteError(code: SQLITE_CORRUPT, message: "a meal record has eaten_at_ns \(row.int64(at: nanos)), not 0-999999")
        }
        return StoreInstant(milliseconds: row.int64(at: milliseconds), nanos: ns)
    }

    // MARK: Generic helpers

    /// The one row `query` returns for `id`, or nil.
    private func one<T>(_ query: SQLiteQuery, id: String,
                        _ decode: (SQLiteStatement) throws(SQLiteError) -> T) throws(RPCError) -> T? {
        do throws(SQLiteError) {
            let statement = try prepared(query)
            defer { statement.reset() }
            try statement.bind(id, at: 1)
            return try statement.step() ? try decode(statement) : nil
        } catch {
            throw error.rpcError
        }
    }

    /// Every row of `query`, after `bind` set its parameters.
    private func all<T>(_ query: SQLiteQuery, bind: (SQLiteStatement) throws(SQLiteError) -> Void = { _ in },
                        _ decode: (SQLiteStatement) throws(SQLiteError) -> T) throws(RPCError) -> [T] {
        do throws(SQLiteError) {
            let statement = try prepared(query)
            defer { statement.reset() }
            try bind(statement)
            var rows: [T] = []
            while try statement.step() { rows.append(try decode(statement)) }
            return rows
        } catch {
            throw error.rpcError
        }
    }

    /// Runs a write; returns the rows changed. Constraint violations go through `constraint`.
    private func change(_ query: SQLiteQuery, bind: (SQLiteStatement) throws(SQLiteError) -> Void,
                        constraint: (SQLiteError) -> RPCError? = { _ in nil }) throws(RPCError) -> Int {
        do throws(SQLiteError) {
            let statement = try prepared(query)
            defer { statement.reset() }
            try bind(statement)
            try statement.run()
            return connection.changes
        } catch {
            if error.violatedConstraint != nil, let mapped = constraint(error) { throw mapped }
            throw error.rpcError
        }
    }

    /// Maps a key violation to ALREADY_EXISTS: the primary key is the id, the unique index the name.
    /// When both are taken SQLite names the name and PostgreSQL the id; an insert passes
    /// `idTaken` (looked up only then) so that both backends report the id.
    private static func uniqueViolation(_ error: SQLiteError, entity: String, id: String, name: String,
                                        idTaken: () -> Bool = { false }) -> RPCError? {
        switch error.violatedConstraint {
        case .primaryKey: StoreError.duplicateID(entity, id: id)
        case .unique: idTaken() ? StoreError.duplicateID(entity, id: id) : StoreError.duplicateName(entity, name: name)
        default: nil
        }
    }
}

// MARK: - StoreReader

extension SQLiteSession {
    func location(id: String) throws(RPCError) -> Location? { try one(.locationByID, id: id, Self.location) }
    func locations(_ page: NamePageQuery) throws(RPCError) -> [Location] {
        try all(.locations, bind: { s throws(SQLiteError) in try Self.bind(page, s) }, Self.location)
    }

    func categoryGroup(id: String) throws(RPCError) -> CategoryGroup? { try one(.groupByID, id: id, Self.group) }
    func categoryGroups(_ page: NamePageQuery) throws(RPCError) -> [CategoryGroup] {
        try all(.groups, bind: { s throws(SQLiteError) in try Self.bind(page, s) }, Self.group)
    }

    func itemCategory(id: String) throws(RPCError) -> ItemCategory? {
        try one(.itemCategoryByID, id: id, Self.itemCategory)
    }

    func itemCategories(groupID: String?, _ page: NamePageQuery) throws(RPCError) -> [ItemCategory] {
        guard let groupID else {
            return try all(.itemCategories, bind: { s throws(SQLiteError) in try Self.bind(page, s) },
                           Self.itemCategory)
        }
        return try all(.itemCategoriesOfGroup, bind: { s throws(SQLiteError) in
            try Self.bind(page, s)
            try s.bind(groupID, at: 5)
        }, Self.itemCategory)
    }

    /// Binds a keyset page's cursor, limit and name length bound as ?1 – ?4 of the name-ordered lists.
    private static func bind(_ page: NamePageQuery, _ statement: SQLiteStatement) throws(SQLiteError) {
        try statement.bind(page.after.name, at: 1)
        try statement.bind(page.after.id, at: 2)
        try statement.bind(Int64(page.limit), at: 3)
        try statement.bind(Int64(page.maxNameBytes), at: 4)
    }

    func itemCategoryCount(groupID: String) throws(RPCError) -> Int {
        try one(.itemCategoryCount, id: groupID) { s in Int(s.int64(at: 0)) } ?? 0
    }

    func mealRecord(id: String) throws(RPCError) -> MealRecord? {
        guard let key = MealKey(id: id) else { return nil }
        switch role {
        case .writer:
            guard let eatenAt = mealKeys.writerView(key) else { return nil }
            return try mealRecord(id: id, eatenAt: eatenAt)
        case .reader:
            return try readMealRecord(id: id, key: key)
        }
    }

    /// The meal record with this primary key, or nil.
    private func mealRecord(id: String, eatenAt: StoreInstant) throws(RPCError) -> MealRecord? {
        do throws(SQLiteError) {
            let statement = try prepared(.mealByKey)
            defer { statement.reset() }
            try statement.bind(id, at: 1)
            try statement.bind(eatenAt.milliseconds, at: 2)
            try statement.bind(Int64(eatenAt.nanos), at: 3)
            return try statement.step() ? try Self.meal(statement) : nil
        } catch {
            throw error.rpcError
        }
    }

    /// How often a reader looks again for a record that keeps moving under it.
    private static let mealLookupAttempts = 16

    /// A reader's lookup. Its snapshot may predate or follow what `mealKeys` says, so the
    /// record is looked for where the index had it committed and where the writer is
    /// moving it. Missing from both, it is gone when the index saw it being created (not
    /// yet visible) or deleted; else it moved after the index was read, and the lookup
    /// runs again in a new snapshot taken after a fresh read of the index.
    private func readMealRecord(id: String, key: MealKey) throws(RPCError) -> MealRecord? {
        var entry = mealKeys.entry(key)
        for _ in 0..<Self.mealLookupAttempts {
            if entry.isEmpty { return nil }
            if let eatenAt = entry.committed, let record = try mealRecord(id: id, eatenAt: eatenAt) {
                return record
            }
            if case .at(let eatenAt)? = entry.staged, eatenAt != entry.committed,
               let record = try mealRecord(id: id, eatenAt: eatenAt) {
                return record
            }
            if entry.committed == nil || entry.staged == .deleted { return nil }
            // A new read transaction, whose snapshot starts with the next statement.
            try run(.commit)
            try run(.begin)
            entry = mealKeys.entry(key)
        }
        throw RPCError.unavailable("meal record \(id) could not be read consistently: it kept moving while "
                                   + "being read, or was changed behind the server's back; retry")
    }

    func mealRecords(_ query: MealRecordPageQuery) throws(RPCError) -> EncodedMessages {
        let statementKind: SQLiteQuery = switch (query.category != nil, query.after != nil, query.isWholeMilliseconds) {
        case (false, false, true): .mealPage
        case (false, true, true): .mealPageAfter
        case (true, false, true): .mealPageCategory
        case (true, true, true): .mealPageCategoryAfter
        case (false, false, false): .mealPagePrecise
        case (false, true, false): .mealPageAfterPrecise
        case (true, false, false): .mealPageCategoryPrecise
        case (true, true, false): .mealPageCategoryAfterPrecise
        }
        var page = EncodedMessages()
        var missing: [(index: Int, id: String, milliseconds: Int64, nanos: Int64)] = []
        do throws(SQLiteError) {
            let statement = try prepared(statementKind)
            defer { statement.reset() }
            try Self.bindRange(statement, start: query.start, end: query.end, upper: query.upperMilliseconds,
                               precise: statementKind.isPrecise)
            try statement.bind(Int64(query.limit), at: 3)
            if let after = query.after {
                try statement.bind(after.eatenAt.milliseconds, at: 7)
                try statement.bind(Int64(after.eatenAt.nanos), at: 8)
                try statement.bind(after.id, at: 9)
            }
            if let category = query.category { try statement.bind(Int64(category.rawValue), at: 10) }
            page.reserveCapacity(messages: min(query.limit, 128), bytesEach: 128)
            while page.bytes.count <= query.maxBytes, try statement.step() {
                statement.withBlob(at: 0) { encoding in
                    if let encoding {
                        page.append(encoding)
                    } else {
                        missing.append((page.count, statement.string(at: 2), statement.int64(at: 1),
                                        statement.int64(at: 3)))
                        page.append(UnsafeRawBufferPointer(start: nil, count: 0))
                    }
                }
            }
        } catch {
            throw error.rpcError
        }
        // Not expected (the migration fills every row in), but never an empty record.
        if !missing.isEmpty { page = try rebuilding(page, missing) }
        return page
    }

    /// `page` with the records at `missing` encoded from their columns.
    private func rebuilding(_ page: EncodedMessages,
                            _ missing: [(index: Int, id: String, milliseconds: Int64, nanos: Int64)])
        throws(RPCError) -> EncodedMessages
    {
        var rebuilt = EncodedMessages()
        var next = missing.makeIterator()
        var pending = next.next()
        for index in 0..<page.count {
            if let item = pending, item.index == index {
                guard let nanos = Int32(exactly: item.nanos), (0..<1_000_000).contains(nanos) else {
                    throw SQLiteError(code: SQLITE_CORRUPT, message: "meal record \(item.id) has eaten_at_ns \(item.nanos)")
                        .rpcError
                }
                let eatenAt = StoreInstant(milliseconds: item.milliseconds, nanos: nanos)
                guard let record = try mealRecord(id: item.id, eatenAt: eatenAt) else {
                    throw RPCError.internalError("meal record \(item.id) vanished while being read")
                }
                rebuilt.append(ProtoCodec.encode(record))
                pending = next.next()
            } else {
                rebuilt.append(Array(page[index]))
            }
        }
        return rebuilt
    }

    func mealSummary(_ query: MealSummaryQuery) throws(RPCError) -> [MealSummaryRow] {
        let statementKind: SQLiteQuery = query.isWholeMilliseconds ? .mealSummary : .mealSummaryPrecise
        return try all(statementKind, bind: { s throws(SQLiteError) in
            try Self.bindRange(s, start: query.start, end: query.end, upper: query.upperMilliseconds,
                               precise: statementKind.isPrecise)
            try s.bind(query.offsetMilliseconds, at: 3)
        }) { s in
            MealSummaryRow(day: s.int64(at: 0), category: Int32(truncatingIfNeeded: s.int64(at: 1)),
                           totalCalories: s.int64(at: 2), mealCount: s.int64(at: 3))
        }
    }
}

extension SQLiteSession {
    /// Binds the eaten_at range of SQLiteQuery's meal statements: ?1 the start, ?2 the
    /// inclusive upper millisecond of the index range; for a precise statement also ?4 the
    /// start's nanoseconds and ?5/?6 the end.
    private static func bindRange(_ statement: SQLiteStatement, start: StoreInstant, end: StoreInstant,
                                  upper: Int64, precise: Bool) throws(SQLiteError) {
        try statement.bind(start.milliseconds, at: 1)
        try statement.bind(upper, at: 2)
        guard precise else { return }
        try statement.bind(Int64(start.nanos), at: 4)
        try statement.bind(end.milliseconds, at: 5)
        try statement.bind(Int64(end.nanos), at: 6)
    }
}

// MARK: - StoreWriter

extension SQLiteSession {
    func insertLocation(_ location: Location) throws(RPCError) {
        _ = try change(.insertLocation, bind: { s throws(SQLiteError) in
            try s.bind(location.id, at: 1)
            try s.bind(location.name, at: 2)
            try s.bind(location.colorHex, at: 3)
            try s.bind(location.createTime?.unixMilliseconds ?? 0, at: 4)
            try s.bind(location.updateTime?.unixMilliseconds ?? 0, at: 5)
        }, constraint: { error in
            Self.uniqueViolation(error, entity: "location", id: location.id, name: location.name,
                                 idTaken: { (try? self.location(id: location.id)) != nil })
        })
    }

    func updateLocation(_ location: Location) throws(RPCError) -> Bool {
        try change(.updateLocation, bind: { s throws(SQLiteError) in
            try s.bind(location.id, at: 1)
            try s.bind(location.name, at: 2)
            try s.bind(location.colorHex, at: 3)
            try s.bind(location.updateTime?.unixMilliseconds ?? 0, at: 4)
        }, constraint: { error in
            Self.uniqueViolation(error, entity: "location", id: location.id, name: location.name)
        }) > 0
    }

    func deleteLocation(id: String) throws(RPCError) -> Bool {
        try change(.deleteLocation, bind: { s throws(SQLiteError) in try s.bind(id, at: 1) }) > 0
    }

    func insertCategoryGroup(_ group: CategoryGroup) throws(RPCError) {
        _ = try change(.insertGroup, bind: { s throws(SQLiteError) in
            try s.bind(group.id, at: 1)
            try s.bind(group.name, at: 2)
            try s.bind(group.colorHex, at: 3)
            try s.bind(group.createTime?.unixMilliseconds ?? 0, at: 4)
            try s.bind(group.updateTime?.unixMilliseconds ?? 0, at: 5)
        }, constraint: { error in
            Self.uniqueViolation(error, entity: "category group", id: group.id, name: group.name,
                                 idTaken: { (try? self.categoryGroup(id: group.id)) != nil })
        })
    }

    func updateCategoryGroup(_ group: CategoryGroup) throws(RPCError) -> Bool {
        try change(.updateGroup, bind: { s throws(SQLiteError) in
            try s.bind(group.id, at: 1)
            try s.bind(group.name, at: 2)
            try s.bind(group.colorHex, at: 3)
            try s.bind(group.updateTime?.unixMilliseconds ?? 0, at: 4)
        }, constraint: { error in
            Self.uniqueViolation(error, entity: "category group", id: group.id,
                                 name: group.name)
        }) > 0
    }

    func deleteCategoryGroup(id: String) throws(RPCError) -> Bool {
        try change(.deleteGroup, bind: { s throws(SQLiteError) in try s.bind(id, at: 1) }, constraint: { error in
            error.violatedConstraint == .foreignKey ? StoreError.categoryGroupInUse(id: id) : nil
        }) > 0
    }

    func insertItemCategory(_ category: ItemCategory) throws(RPCError) {
        _ = try change(.insertItemCategory, bind: { s throws(SQLiteError) in
            try s.bind(category.id, at: 1)
            try s.bind(category.name, at: 2)
            try s.bind(category.iconName, at: 3)
            try s.bind(category.categoryGroupID, at: 4)
            try s.bind(category.createTime?.unixMilliseconds ?? 0, at: 5)
            try s.bind(category.updateTime?.unixMilliseconds ?? 0, at: 6)
        }, constraint: { error in
            Self.itemCategoryViolation(error, category, idTaken: { (try? self.itemCategory(id: category.id)) != nil })
        })
    }

    func updateItemCategory(_ category: ItemCategory) throws(RPCError) -> Bool {
        try change(.updateItemCategory, bind: { s throws(SQLiteError) in
            try s.bind(category.id, at: 1)
            try s.bind(category.name, at: 2)
            try s.bind(category.iconName, at: 3)
            try s.bind(category.categoryGroupID, at: 4)
            try s.bind(category.updateTime?.unixMilliseconds ?? 0, at: 5)
        }, constraint: { error in Self.itemCategoryViolation(error, category) }) > 0
    }

    private static func itemCategoryViolation(_ error: SQLiteError, _ category: ItemCategory,
                                              idTaken: () -> Bool = { false }) -> RPCError? {
        switch error.violatedConstraint {
        case .foreignKey: return StoreError.missingCategoryGroup(id: category.categoryGroupID)
        // The one unique index is on (category_group_id, name); see `uniqueViolation` for `idTaken`.
        case .unique:
            return idTaken() ? StoreError.duplicateID("item category", id: category.id)
                : StoreError.duplicateItemCategoryName(category.name, groupID: category.categoryGroupID)
        default: break
        }
        return uniqueViolation(error, entity: "item category", id: category.id, name: category.name)
    }

    func deleteItemCategory(id: String) throws(RPCError) -> Bool {
        try change(.deleteItemCategory, bind: { s throws(SQLiteError) in try s.bind(id, at: 1) }) > 0
    }

    func deleteItemCategories(groupID: String) throws(RPCError) -> Int {
        try change(.deleteItemCategoriesOfGroup, bind: { s throws(SQLiteError) in try s.bind(groupID, at: 1) })
    }

    func insertMealRecord(_ encoded: EncodedMessage<MealRecord>) throws(RPCError) {
        let record = encoded.message
        let key = try Self.mealKey(record.id)
        guard mealKeys.writerView(key) == nil else { throw StoreError.duplicateID("meal record", id: record.id) }
        let eatenAt = StoreInstant(record.eatenAt ?? Timestamp(seconds: 0))
        _ = try change(.insertMeal, bind: { s throws(SQLiteError) in
            try s.bind(record.id, at: 1)
            try s.bind(record.name, at: 2)
            try s.bind(Int64(record.calories), at: 3)
            try s.bind(Int64(record.category.rawValue), at: 4)
            try s.bind(eatenAt.milliseconds, at: 5)
            try s.bind(record.createTime?.unixMilliseconds ?? 0, at: 6)
            try s.bind(record.updateTime?.unixMilliseconds ?? 0, at: 7)
            try s.bind(Int64(eatenAt.nanos), at: 8)
            try s.bind(blob: encoded.bytes, at: 9)
        }, constraint: { error in
            // Meal records have no unique name: any key violation is the id's.
            error.violatedConstraint == .primaryKey || error.violatedConstraint == .unique
                ? StoreError.duplicateID("meal record", id: record.id) : nil
        })
        mealKeyChanges.stage(key, .at(eatenAt))
    }

    func updateMealRecord(_ record: MealRecord) throws(RPCError) -> Bool {
        let key = try Self.mealKey(record.id)
        guard let storedAt = mealKeys.writerView(key) else { return false }
        let eatenAt = StoreInstant(record.eatenAt ?? Timestamp(seconds: 0))
        let changed = try change(.updateMeal, bind: { s throws(SQLiteError) in
            try s.bind(record.id, at: 1)
            try s.bind(record.name, at: 2)
            try s.bind(Int64(record.calories), at: 3)
            try s.bind(Int64(record.category.rawValue), at: 4)
            try s.bind(eatenAt.milliseconds, at: 5)
            try s.bind(record.updateTime?.unixMilliseconds ?? 0, at: 6)
            try s.bind(blob: ProtoCodec.encode(record), at: 7)
            try s.bind(storedAt.milliseconds, at: 8)
            try s.bind(Int64(storedAt.nanos), at: 9)
            try s.bind(Int64(eatenAt.nanos), at: 10)
        })
        guard changed > 0 else { return false }
        if eatenAt != storedAt { mealKeyChanges.stage(key, .at(eatenAt)) }
        return true
    }

    func deleteMealRecord(id: String) throws(RPCError) -> Bool {
        let key = try Self.mealKey(id)
        guard let storedAt = mealKeys.writerView(key) else { return false }
        let changed = try change(.deleteMeal, bind: { s throws(SQLiteError) in
            try s.bind(id, at: 1)
            try s.bind(storedAt.milliseconds, at: 2)
            try s.bind(Int64(storedAt.nanos), at: 3)
        })
        guard changed > 0 else { return false }
        mealKeyChanges.stage(key, .deleted)
        return true
    }

    /// The key of a meal record id the rules already validated.
    private static func mealKey(_ id: String) throws(RPCError) -> MealKey {
        guard let key = MealKey(id: id) else { throw RPCError.internalError("meal record id \"\(id)\" is not a UUID") }
        return key
    }
}

// MARK: - Opening

extension SQLiteSession {
    /// Stores the encoding of every meal record that has none (rows written
    /// before schema version 4). Runs inside the migration's transaction.
    func fillMissingMealEncodings() throws(RPCError) {
        // A one-off scan, so not among the indexed statements of SQLiteQuery.
        var keys: [(id: String, eatenAt: StoreInstant)] = []
        do throws(SQLiteError) {
            let select = try connection.prepare(
                "SELECT id, eaten_at_ms, eaten_at_ns FROM meal_records WHERE encoding IS NULL")
            while try select.step() { keys.append((select.string(at: 0), try Self.eatenAt(select, milliseconds: 1, nanos: 2))) }
        } catch {
            throw error.rpcError
        }
        for (id, eatenAt) in keys {
            guard let record = try mealRecord(id: id, eatenAt: eatenAt) else { continue }
            _ = try change(.setMealEncoding, bind: { s throws(SQLiteError) in
                try s.bind(id, at: 1)
                try s.bind(blob: ProtoCodec.encode(record), at: 2)
                try s.bind(eatenAt.milliseconds, at: 3)
                try s.bind(Int64(eatenAt.nanos), at: 4)
            })
        }
    }

    /// Fills the store's empty `MealKeyIndex` from the table, in one read transaction.
    /// Fails with SQLITE_CORRUPT for an id that is not a UUID or that is stored twice.
    func loadMealKeys() throws(SQLiteError) {
        try connection.execute("BEGIN")
        defer { rollback() }
        // A one-off scan of the narrowest index that holds both columns.
        let select = try connection.prepare(
            "SELECT id, eaten_at_ms, eaten_at_ns FROM meal_records INDEXED BY meal_records_category_eaten_at")
        defer { select.reset() }
        var rows: [(key: MealKey, eatenAt: StoreInstant)] = []
        rows.reserveCapacity(4096)
        var more = true
        while more {
            rows.removeAll(keepingCapacity: true)
            while rows.count < 4096 {
                more = try select.step()
                guard more else { break }
                // The text in place: no String per row.
                guard let key = select.withBlob(at: 0, { $0.flatMap(MealKey.init(utf8:)) }) else {
                    throw SQLiteError(code: SQLITE_CORRUPT,
                                      message: "meal record id \"\(select.string(at: 0))\" is not a UUID")
                }
                rows.append((key, try Self.eatenAt(select, milliseconds: 1, nanos: 2)))
            }
            if let duplicate = mealKeys.load(rows) {
                throw SQLiteError(code: SQLITE_CORRUPT, message: "meal record id \"\(duplicate)\" is stored twice")
            }
        }
    }
}
