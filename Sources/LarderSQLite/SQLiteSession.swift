import CSQLite
import LarderAPI
import LarderStore
import LarderWire

/// The SQLite implementation of the store primitives on one connection,
/// with its prepared statements cached. Used by one thread at a time.
final class SQLiteSession: StoreConnection {
    let connection: SQLiteConnection
    private let checkpointOnClose: Bool
    private var statements: [SQLiteStatement?]

    /// Wraps `connection`; a writer checkpoints and truncates the WAL on close.
    init(connection: SQLiteConnection, checkpointOnClose: Bool) {
        self.connection = connection
        self.checkpointOnClose = checkpointOnClose
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
    func beginWrite() throws(RPCError) { try run(.beginImmediate) }
    func savepoint() throws(RPCError) { try run(.savepoint) }
    func releaseSavepoint() throws(RPCError) { try run(.release) }

    func rollbackToSavepoint() throws(RPCError) {
        try run(.rollbackToSavepoint)
        try run(.release)
    }

    func commit() throws(RPCError) { try run(.commit) }

    /// SQLite undoes a failed statement (its statement journal) and keeps the transaction.
    var undoesFailedStatements: Bool { true }
    var changeCount: Int { connection.totalChanges }
    var isInTransaction: Bool { !connection.isAutocommit }

    func rollback() {
        guard !connection.isAutocommit else { return }
        do throws(RPCError) { try run(.rollback) } catch {}
    }

    func close() {
        if checkpointOnClose {
            // Best effort: folds the WAL back into the database and empties it.
            do throws(SQLiteError) { try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)") } catch {}
        }
        statements.removeAll()
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
        guard let category = Int32(exactly: rawCategory).flatMap(MealCategory.init(rawValue:)),
              let calories = Int32(exactly: row.int64(at: 2)) else {
            throw SQLiteError(code: SQLITE_CORRUPT, message: "meal record \(row.string(at: 0)) has invalid values")
        }
        return MealRecord(id: row.string(at: 0), name: row.string(at: 1), calories: calories, category: category,
                          eatenAt: Timestamp(unixMilliseconds: row.int64(at: 4)),
                          createTime: Timestamp(unixMilliseconds: row.int64(at: 5)),
                          updateTime: Timestamp(unixMilliseconds: row.int64(at: 6)))
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
            if error.primaryCode == SQLITE_CONSTRAINT, let mapped = constraint(error) { throw mapped }
            throw error.rpcError
        }
    }

    /// Maps a unique-key violation on `table` to ALREADY_EXISTS for the id or the name.
    private static func uniqueViolation(_ error: SQLiteError, table: String, entity: String, id: String,
                                        name: String) -> RPCError? {
        guard error.code == SQLiteError.constraintUnique || error.code == SQLiteError.constraintPrimaryKey else {
            return nil
        }
        if error.message.contains("\(table).name") { return StoreError.duplicateName(entity, name: name) }
        if error.message.contains("\(table).id") { return StoreError.duplicateID(entity, id: id) }
        return nil
    }
}

// MARK: - StoreReader

extension SQLiteSession {
    func location(id: String) throws(RPCError) -> Location? { try one(.locationByID, id: id, Self.location) }
    func locations() throws(RPCError) -> [Location] { try all(.locations, Self.location) }

    func categoryGroup(id: String) throws(RPCError) -> CategoryGroup? { try one(.groupByID, id: id, Self.group) }
    func categoryGroups() throws(RPCError) -> [CategoryGroup] { try all(.groups, Self.group) }

    func itemCategory(id: String) throws(RPCError) -> ItemCategory? {
        try one(.itemCategoryByID, id: id, Self.itemCategory)
    }

    func itemCategories(groupID: String?) throws(RPCError) -> [ItemCategory] {
        guard let groupID else { return try all(.itemCategories, Self.itemCategory) }
        return try all(.itemCategoriesOfGroup, bind: { s throws(SQLiteError) in try s.bind(groupID, at: 1) },
                       Self.itemCategory)
    }

    func itemCategoryCount(groupID: String) throws(RPCError) -> Int {
        try one(.itemCategoryCount, id: groupID) { s in Int(s.int64(at: 0)) } ?? 0
    }

    func mealRecord(id: String) throws(RPCError) -> MealRecord? { try one(.mealByID, id: id, Self.meal) }

    func mealRecords(_ query: MealRecordPageQuery) throws(RPCError) -> EncodedMessages {
        let statementKind: SQLiteQuery = switch (query.category != nil, query.after != nil) {
        case (false, false): .mealPage
        case (false, true): .mealPageAfter
        case (true, false): .mealPageCategory
        case (true, true): .mealPageCategoryAfter
        }
        var page = EncodedMessages()
        var missing: [(index: Int, id: String)] = []
        do throws(SQLiteError) {
            let statement = try prepared(statementKind)
            defer { statement.reset() }
            try statement.bind(query.startMilliseconds, at: 1)
            try statement.bind(Int64(query.limit), at: 3)
            if let after = query.after {
                let (bound, overflow) = after.eatenAtMilliseconds.addingReportingOverflow(1)
                try statement.bind(overflow ? query.endMilliseconds : min(query.endMilliseconds, bound), at: 2)
                try statement.bind(after.eatenAtMilliseconds, at: 4)
                try statement.bind(after.id, at: 5)
            } else {
                try statement.bind(query.endMilliseconds, at: 2)
            }
            if let category = query.category { try statement.bind(Int64(category.rawValue), at: 6) }
            page.reserveCapacity(messages: min(query.limit, 128), bytesEach: 128)
            while try statement.step() {
                statement.withBlob(at: 0) { encoding in
                    if let encoding {
                        page.append(encoding)
                    } else {
                        missing.append((page.count, statement.string(at: 1)))
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
    private func rebuilding(_ page: EncodedMessages, _ missing: [(index: Int, id: String)]) throws(RPCError)
        -> EncodedMessages
    {
        var rebuilt = EncodedMessages()
        var next = missing.makeIterator()
        var pending = next.next()
        for index in 0..<page.count {
            if let item = pending, item.index == index {
                guard let record = try mealRecord(id: item.id) else {
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
        try all(.mealSummary, bind: { s throws(SQLiteError) in
            try s.bind(query.startMilliseconds, at: 1)
            try s.bind(query.endMilliseconds, at: 2)
            try s.bind(query.offsetMilliseconds, at: 3)
        }) { s in
            MealSummaryRow(day: s.int64(at: 0), category: Int32(truncatingIfNeeded: s.int64(at: 1)),
                           totalCalories: s.int64(at: 2), mealCount: s.int64(at: 3))
        }
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
            Self.uniqueViolation(error, table: "locations", entity: "location", id: location.id, name: location.name)
        })
    }

    func updateLocation(_ location: Location) throws(RPCError) -> Bool {
        try change(.updateLocation, bind: { s throws(SQLiteError) in
            try s.bind(location.id, at: 1)
            try s.bind(location.name, at: 2)
            try s.bind(location.colorHex, at: 3)
            try s.bind(location.updateTime?.unixMilliseconds ?? 0, at: 4)
        }, constraint: { error in
            Self.uniqueViolation(error, table: "locations", entity: "location", id: location.id, name: location.name)
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
            Self.uniqueViolation(error, table: "category_groups", entity: "category group", id: group.id,
                                 name: group.name)
        })
    }

    func updateCategoryGroup(_ group: CategoryGroup) throws(RPCError) -> Bool {
        try change(.updateGroup, bind: { s throws(SQLiteError) in
            try s.bind(group.id, at: 1)
            try s.bind(group.name, at: 2)
            try s.bind(group.colorHex, at: 3)
            try s.bind(group.updateTime?.unixMilliseconds ?? 0, at: 4)
        }, constraint: { error in
            Self.uniqueViolation(error, table: "category_groups", entity: "category group", id: group.id,
                                 name: group.name)
        }) > 0
    }

    func deleteCategoryGroup(id: String) throws(RPCError) -> Bool {
        try change(.deleteGroup, bind: { s throws(SQLiteError) in try s.bind(id, at: 1) }, constraint: { error in
            error.code == SQLiteError.constraintForeignKey ? StoreError.categoryGroupInUse(id: id) : nil
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
        }, constraint: { error in Self.itemCategoryViolation(error, category) })
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

    private static func itemCategoryViolation(_ error: SQLiteError, _ category: ItemCategory) -> RPCError? {
        if error.code == SQLiteError.constraintForeignKey {
            return StoreError.missingCategoryGroup(id: category.categoryGroupID)
        }
        if error.message.contains("item_categories.name") {
            return StoreError.duplicateItemCategoryName(category.name, groupID: category.categoryGroupID)
        }
        return uniqueViolation(error, table: "item_categories", entity: "item category", id: category.id,
                               name: category.name)
    }

    func deleteItemCategory(id: String) throws(RPCError) -> Bool {
        try change(.deleteItemCategory, bind: { s throws(SQLiteError) in try s.bind(id, at: 1) }) > 0
    }

    func deleteItemCategories(groupID: String) throws(RPCError) -> Int {
        try change(.deleteItemCategoriesOfGroup, bind: { s throws(SQLiteError) in try s.bind(groupID, at: 1) })
    }

    func insertMealRecord(_ record: MealRecord) throws(RPCError) {
        _ = try change(.insertMeal, bind: { s throws(SQLiteError) in
            try s.bind(record.id, at: 1)
            try s.bind(record.name, at: 2)
            try s.bind(Int64(record.calories), at: 3)
            try s.bind(Int64(record.category.rawValue), at: 4)
            try s.bind(record.eatenAt?.unixMilliseconds ?? 0, at: 5)
            try s.bind(record.createTime?.unixMilliseconds ?? 0, at: 6)
            try s.bind(record.updateTime?.unixMilliseconds ?? 0, at: 7)
            try s.bind(blob: ProtoCodec.encode(record), at: 8)
        }, constraint: { error in
            Self.uniqueViolation(error, table: "meal_records", entity: "meal record", id: record.id, name: record.name)
        })
    }

    func updateMealRecord(_ record: MealRecord) throws(RPCError) -> Bool {
        try change(.updateMeal, bind: { s throws(SQLiteError) in
            try s.bind(record.id, at: 1)
            try s.bind(record.name, at: 2)
            try s.bind(Int64(record.calories), at: 3)
            try s.bind(Int64(record.category.rawValue), at: 4)
            try s.bind(record.eatenAt?.unixMilliseconds ?? 0, at: 5)
            try s.bind(record.updateTime?.unixMilliseconds ?? 0, at: 6)
            try s.bind(blob: ProtoCodec.encode(record), at: 7)
        }) > 0
    }

    func deleteMealRecord(id: String) throws(RPCError) -> Bool {
        try change(.deleteMeal, bind: { s throws(SQLiteError) in try s.bind(id, at: 1) }) > 0
    }
}

// MARK: - Migration

extension SQLiteSession {
    /// Stores the encoding of every meal record that has none (rows written
    /// before schema version 4). Runs inside the migration's transaction.
    func fillMissingMealEncodings() throws(RPCError) {
        // A one-off scan, so not among the indexed statements of SQLiteQuery.
        var ids: [String] = []
        do throws(SQLiteError) {
            let select = try connection.prepare("SELECT id FROM meal_records WHERE encoding IS NULL")
            while try select.step() { ids.append(select.string(at: 0)) }
        } catch {
            throw error.rpcError
        }
        for id in ids {
            guard let record = try mealRecord(id: id) else { continue }
            _ = try change(.setMealEncoding, bind: { s throws(SQLiteError) in
                try s.bind(id, at: 1)
                try s.bind(blob: ProtoCodec.encode(record), at: 2)
            })
        }
    }
}
