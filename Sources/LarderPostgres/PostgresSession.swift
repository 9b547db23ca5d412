import LarderAPI
import LarderStore
import LarderWire

/// The PostgreSQL implementation of the store primitives on one connection.
/// Used by one executor thread at a time.
///
/// Losing the database never needs a restart of larder-server:
/// - before each transaction an idle connection the server hung up on (a
///   restart, a failover) is noticed and replaced, and a transaction whose
///   first statement finds the connection dead is started once more on a new
///   one: nothing had been done in it yet;
/// - a session that turns out read-only (a standby, after a failover) is
///   dropped and re-resolved, so the next transaction finds the primary;
/// - while the database stays unreachable, reconnecting is retried with a
///   bounded backoff (`PostgresBackoff`) and calls in between fail fast with UNAVAILABLE;
/// - every wait is bounded by the statement timeout and the calls' deadlines
///   (`PostgresConnection.deadline`);
/// - a COMMIT whose answer was lost answers UNKNOWN: it may have been applied (DEADLINE_EXCEEDED
///   when the calls' deadline cut it off);
/// - when a call's deadline cuts a statement off, the connection closes and its transaction
///   with it: that call answers DEADLINE_EXCEEDED, the others of the transaction ABORTED (not
///   applied; retry), and the database is not taken for lost.
final class PostgresSession: StoreConnection {
    let connection: PostgresConnection
    /// Fixed SQL run on every (re)connect, e.g. `SET synchronous_commit TO off`.
    private let setup: [String]
    private let availability: PostgresAvailability?
    private var backoff = PostgresBackoff()
    /// The latest deadline of the calls of the current transaction, while every one of them has a deadline.
    private var latestDeadline: UInt64?
    private var everyCallHasDeadline = true
    /// Set when a call's deadline cut a wait of the current transaction short: the connection
    /// was closed with it, so the transaction is gone and nothing of it was applied.
    private var cutByDeadline = false
    /// True inside a write transaction: reads by id lock their row (`…ForUpdate`).
    private var writing = false
    /// Set when a statement gave up waiting for a lock another session holds (55P03), until
    /// `takeLockWaitTimedOut` or the next savepoint.
    private var lockWaitTimedOut = false

    func takeLockWaitTimedOut() -> Bool {
        defer { lockWaitTimedOut = false }
        return lockWaitTimedOut
    }

    /// Set when a statement of the current read transaction failed (PostgreSQL then ends it).
    private(set) var readTransactionFailed = false

    init(connection: PostgresConnection, setup: [String] = [],
         availability: PostgresAvailability? = nil) throws(PostgresError) {
        self.connection = connection
        self.setup = setup
        self.availability = availability
        for sql in setup { try connection.execute(sql) }
    }

    // MARK: Deadlines

    /// Waits of the current transaction end at the latest deadline of its calls
    /// (a call whose own deadline passed is answered DEADLINE_EXCEEDED by the
    /// router, without failing the others), or only at the statement timeout
    /// when some call has no deadline.
    func boundWaits(byDeadline deadline: UInt64?) {
        if let deadline, everyCallHasDeadline {
            latestDeadline = max(latestDeadline ?? 0, deadline)
        } else {
            everyCallHasDeadline = false
            latestDeadline = nil
        }
        connection.deadline = latestDeadline
    }

    private func resetDeadlines() {
        latestDeadline = nil
        everyCallHasDeadline = true
        connection.deadline = nil
        cutByDeadline = false
    }

    /// ABORTED for every statement of a transaction after a deadline cut it off: the calls
    /// still in it were not applied, and the database is not lost for that.
    private func ensureNotCutOff() throws(RPCError) {
        guard cutByDeadline else { return }
        throw RPCError(.aborted, "this call shared a transaction with calls whose deadline passed while PostgreSQL "
                       + "worked on it, and the transaction ended with them: nothing of this call was applied; retry it")
    }

    // MARK: Connecting

    /// Maps a failure to its status; a lost or read-only session is dropped and
    /// counts as the database being lost.
    private func failure(_ error: PostgresError) -> RPCError {
        if !writing { readTransactionFailed = true }
        if error.sqlState == PostgresError.deadlineExceeded { cutByDeadline = true }
        if error.sqlState == PostgresError.lockNotAvailable { lockWaitTimedOut = true }
        // A missing table: lost until the monitor finds it again. A missing column only fails its calls.
        if error.sqlState == PostgresError.undefinedTable { availability?.markSchemaMissing(error.rpcError.message) }
        if error.sqlState == PostgresError.readOnlyTransaction {
            connection.close()
            let message = "the PostgreSQL session at \(connection.target) is read-only (a standby, after a "
                + "failover?): it was dropped, the next call reconnects to the primary; retry"
            availability?.markLost(message)
            return RPCError.unavailable(message)
        }
        // One connection lost (a backend an administrator or a pooler ended, a restart) says
        // little about the database yet: it is lost when reconnecting fails (`ensureConnected`)
        // or the monitor finds it gone. So is a call's deadline passing.
        return error.rpcError
    }

    /// Replaces a dead connection (with backoff while the database stays away)
    /// and re-runs `setup`; a session that turns out read-only is refused.
    private func ensureConnected() throws(RPCError) {
        guard connection.isStale else { return }
        let now = PostgresConnection.monotonicNanoseconds()
        if let wait = backoff.remainingWait(now: now) {
            throw RPCError.unavailable("the PostgreSQL server at \(connection.target) is unreachable; next "
                                       + "reconnect attempt in \(wait / 1_000_000) ms; retry: \(backoff.lastError)")
        }
        do throws(PostgresError) {
            try connection.reconnect()
            for sql in setup { try connection.execute(sql) }
            let readOnly = try connection.query("SHOW transaction_read_only")
            if readOnly.rowCount == 1, readOnly.string(row: 0, column: 0) == "on" {
                throw PostgresError(sqlState: PostgresError.readOnlyTransaction, message: "the session is read-only")
            }
            backoff.succeeded()
        } catch {
            let rpc = failure(error)
            connection.close()
            // Whatever the reason (a refused login too), this server has no database until it
            // reconnects; but a call's deadline passing while it tried says little about that, and
            // does not count toward the backoff either (review 36 M1).
            if error.sqlState != PostgresError.deadlineExceeded {
                availability?.markLost(rpc.message)
                backoff.failed(now: PostgresConnection.monotonicNanoseconds(), error: rpc.message)
            }
            throw rpc
        }
    }

    private func control(_ sql: String) throws(RPCError) {
        try ensureNotCutOff()
        do throws(PostgresError) { try connection.execute(sql) } catch { throw failure(error) }
    }

    /// Runs the first statement of a transaction; when it finds the connection
    /// dead, reconnects and runs it once more (nothing had been done in it yet).
    private func start(_ sql: String) throws(RPCError) {
        try ensureConnected()
        do throws(PostgresError) {
            try connection.execute(sql)
            return
        } catch {
            guard error.isConnectionProblem, error.sqlState != PostgresError.timedOut,
                  error.sqlState != PostgresError.deadlineExceeded else { throw failure(error) }
            connection.close()
        }
        try ensureConnected()
        try control(sql)
    }

    // MARK: Transactions

    func beginRead() throws(RPCError) {
        resetDeadlines()
        writing = false
        readTransactionFailed = false
        // One snapshot for every read of the batch.
        try start("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
    }

    func endRead() throws(RPCError) {
        try control("COMMIT")
        availability?.markAvailable()
    }

    // Transaction control is sent lazily to save round trips: BEGIN travels with
    // the first SAVEPOINT, each RELEASE with the next SAVEPOINT, and COMMIT
    // releases the last savepoint itself. So a write costs one round trip for
    // its savepoint plus its statements, not three.
    private var pendingBegin = false
    private var pendingRelease = false

    func beginWrite() throws(RPCError) {
        resetDeadlines()
        writing = true
        try ensureConnected()
        pendingBegin = true
        pendingRelease = false
    }

    func savepoint() throws(RPCError) {
        lockWaitTimedOut = false
        if pendingBegin {
            pendingBegin = false
            pendingRelease = false
            return try start("BEGIN; SAVEPOINT op")
        }
        let prefix = pendingRelease ? "RELEASE SAVEPOINT op; " : ""
        pendingRelease = false
        try control(prefix + "SAVEPOINT op")
    }

    func releaseSavepoint() throws(RPCError) { pendingRelease = true }
    func rollbackToSavepoint() throws(RPCError) { try control("ROLLBACK TO SAVEPOINT op; RELEASE SAVEPOINT op") }

    func commit() throws(RPCError) {
        pendingRelease = false
        guard !pendingBegin else {
            pendingBegin = false
            return
        }
        try ensureNotCutOff()
        let status: String
        do throws(PostgresError) { status = try connection.execute("COMMIT").commandStatus } catch {
            guard error.isConnectionProblem else { throw failure(error) }
            _ = failure(error)
            // The COMMIT may have reached the server and been applied before the answer was lost.
            let advice = "so this write may or may not have been applied: read it back before repeating it "
                + "(a create with the same id answers ALREADY_EXISTS if it was applied)"
            if error.sqlState == PostgresError.deadlineExceeded {
                // gRPC's own code for an outcome the deadline cut off.
                throw RPCError(.deadlineExceeded, "the call's deadline passed during COMMIT, \(advice)")
            }
            throw RPCError(.unknown, "the connection to PostgreSQL was lost during COMMIT, \(advice): \(error.message)")
        }
        // COMMIT of a transaction that failed earlier answers ROLLBACK instead of an error.
        guard status != "ROLLBACK" else {
            throw RPCError(.aborted, "the transaction was rolled back by the database; retry the call")
        }
        availability?.markAvailable()
    }

    func rollback() {
        pendingBegin = false
        pendingRelease = false
        guard connection.isInTransaction else { return }
        do throws(PostgresError) { try connection.execute("ROLLBACK") } catch {}
    }

    func close() { connection.close() }

    // MARK: Row decoding

    private static func location(_ r: PostgresResult, _ i: Int) throws(PostgresError) -> Location {
        Location(id: r.string(row: i, column: 0), name: r.string(row: i, column: 1),
                 colorHex: r.string(row: i, column: 2),
                 createTime: Timestamp(unixMilliseconds: try r.int64(row: i, column: 3)),
                 updateTime: Timestamp(unixMilliseconds: try r.int64(row: i, column: 4)))
    }

    private static func group(_ r: PostgresResult, _ i: Int) throws(PostgresError) -> CategoryGroup {
        CategoryGroup(id: r.string(row: i, column: 0), name: r.string(row: i, column: 1),
                      colorHex: r.string(row: i, column: 2),
                      createTime: Timestamp(unixMilliseconds: try r.int64(row: i, column: 3)),
                      updateTime: Timestamp(unixMilliseconds: try r.int64(row: i, column: 4)))
    }

    private static func itemCategory(_ r: PostgresResult, _ i: Int) throws(PostgresError) -> ItemCategory {
        ItemCategory(id: r.string(row: i, column: 0), name: r.string(row: i, column: 1),
                     iconName: r.string(row: i, column: 2), categoryGroupID: r.string(row: i, column: 3),
                     createTime: Timestamp(unixMilliseconds: try r.int64(row: i, column: 4)),
                     updateTime: Timestamp(unixMilliseconds: try r.int64(row: i, column: 5)))
    }

    private static func meal(_ r: PostgresResult, _ i: Int) throws(PostgresError) -> MealRecord {
        guard let category = Int32(exactly: try r.int64(row: i, column: 3)).flatMap(MealCategory.init(known:)),
              let calories = Int32(exactly: try r.int64(row: i, column: 2)) else {
            throw PostgresError(sqlState: "XX001", message: "meal record \(r.string(row: i, column: 0)) has invalid values")
        }
        return MealRecord(id: r.string(row: i, column: 0), name: r.string(row: i, column: 1), calories: calories,
                          category: category,
                          eatenAt: try eatenAt(r, i).timestamp,
                          createTime: Timestamp(unixMilliseconds: try r.int64(row: i, column: 5)),
                          updateTime: Timestamp(unixMilliseconds: try r.int64(row: i, column: 6)))
    }

    /// A meal row's eaten_at from eaten_at_ms (column 4) and eaten_at_ns (column 7).
    private static func eatenAt(_ r: PostgresResult, _ i: Int) throws(PostgresError) -> StoreInstant {
        guard let ns = Int32(exactly: try r.int64(row: i, column: 7)), (0..<1_000_000).contains(ns) else {
            throw PostgresError(sqlState: "XX001", message: "meal record \(r.string(row: i, column: 0)) has invalid eaten_at_ns")
        }
        return StoreInstant(milliseconds: try r.int64(row: i, column: 4), nanos: ns)
    }

    // MARK: Generic helpers

    /// Every row of `query` run with `parameters`, decoded.
    private func all<T>(_ query: PostgresQuery, _ parameters: [PostgresValue],
                        _ decode: (PostgresResult, Int) throws(PostgresError) -> T) throws(RPCError) -> [T] {
        try ensureNotCutOff()
        do throws(PostgresError) {
            let result = try connection.run(query.name, sql: query.sql, parameters)
            var rows: [T] = []
            rows.reserveCapacity(result.rowCount)
            for row in 0..<result.rowCount { rows.append(try decode(result, row)) }
            return rows
        } catch {
            throw failure(error)
        }
    }

    /// The first row `query` returns for `id`, or nil.
    private func one<T>(_ query: PostgresQuery, id: String,
                        _ decode: (PostgresResult, Int) throws(PostgresError) -> T) throws(RPCError) -> T? {
        try all(query, [.text(id)], decode).first
    }

    /// Runs a write; returns the rows changed. Integrity errors go through `constraint` first.
    private func change(_ query: PostgresQuery, _ parameters: [PostgresValue],
                        constraint: (PostgresError) -> RPCError? = { _ in nil }) throws(RPCError) -> Int {
        try ensureNotCutOff()
        do throws(PostgresError) {
            return try connection.run(query.name, sql: query.sql, parameters).affectedRows
        } catch {
            if error.violatedConstraint != nil, let mapped = constraint(error) { throw mapped }
            throw failure(error)
        }
    }

    /// Which unique key a violation hit, from the constraint name the server reports
    /// (`locations_pkey`, `locations_name`), never from the message text.
    private static func violatedKey(_ error: PostgresError, table: String) -> String? {
        if let constraint = error.constraint, constraint.hasPrefix(table + "_") {
            return String(constraint.dropFirst(table.count + 1))
        }
        return nil
    }

    /// Maps a unique-key violation on `table` to ALREADY_EXISTS for the id or the name.
    private static func uniqueViolation(_ error: PostgresError, table: String, entity: String, id: String,
                                        name: String) -> RPCError? {
        guard error.violatedConstraint == .unique else { return nil }
        switch violatedKey(error, table: table) {
        case "pkey": return StoreError.duplicateID(entity, id: id)
        case "name": return StoreError.duplicateName(entity, name: name)
        default: return nil
        }
    }

    private static func itemCategoryViolation(_ error: PostgresError, _ category: ItemCategory) -> RPCError? {
        if error.violatedConstraint == .foreignKey {
            return StoreError.missingCategoryGroup(id: category.categoryGroupID)
        }
        if error.violatedConstraint == .unique,
           violatedKey(error, table: "item_categories") == "group_name" {
            return StoreError.duplicateItemCategoryName(category.name, groupID: category.categoryGroupID)
        }
        return uniqueViolation(error, table: "item_categories", entity: "item category", id: category.id,
                               name: category.name)
    }
}

// MARK: - StoreReader

extension PostgresSession {
    func location(id: String) throws(RPCError) -> Location? {
        try one(writing ? .locationByIDForUpdate : .locationByID, id: id, Self.location)
    }
    func locations(_ page: NamePageQuery) throws(RPCError) -> [Location] {
        try all(.locations, Self.parameters(page), Self.location)
    }

    func categoryGroup(id: String) throws(RPCError) -> CategoryGroup? {
        try one(writing ? .groupByIDForUpdate : .groupByID, id: id, Self.group)
    }
    func categoryGroups(_ page: NamePageQuery) throws(RPCError) -> [CategoryGroup] {
        try all(.groups, Self.parameters(page), Self.group)
    }

    func itemCategory(id: String) throws(RPCError) -> ItemCategory? {
        try one(writing ? .itemCategoryByIDForUpdate : .itemCategoryByID, id: id, Self.itemCategory)
    }

    func itemCategories(groupID: String?, _ page: NamePageQuery) throws(RPCError) -> [ItemCategory] {
        guard let groupID else { return try all(.itemCategories, Self.parameters(page), Self.itemCategory) }
        return try all(.itemCategoriesOfGroup, Self.parameters(page) + [.text(groupID)], Self.itemCategory)
    }

    /// A keyset page's cursor, limit and name length bound as $1 – $4 of the name-ordered lists.
    private static func parameters(_ page: NamePageQuery) -> [PostgresValue] {
        [.text(page.after.name), .text(page.after.id), .int64(Int64(page.limit)), .int64(Int64(page.maxNameBytes))]
    }

    func itemCategoryCount(groupID: String) throws(RPCError) -> Int {
        try one(.itemCategoryCount, id: groupID) { r, i throws(PostgresError) in Int(try r.int64(row: i, column: 0)) }
            ?? 0
    }

    func mealRecord(id: String) throws(RPCError) -> MealRecord? {
        try one(writing ? .mealByIDForUpdate : .mealByID, id: id, Self.meal)
    }

    func mealRecords(_ query: MealRecordPageQuery) throws(RPCError) -> EncodedMessages {
        var parameters = Self.range(query.start, query.end) + [.int64(Int64(query.limit))]
        if let category = query.category { parameters.append(.int64(Int64(category.rawValue))) }
        if let after = query.after {
            parameters += [.int64(after.eatenAt.milliseconds), .int64(Int64(after.eatenAt.nanos)), .text(after.id)]
        }
        let statement: PostgresQuery = switch (query.category != nil, query.after != nil) {
        case (false, false): .mealPage
        case (false, true): .mealPageAfter
        case (true, false): .mealPageCategory
        case (true, true): .mealPageCategoryAfter
        }
        // PostgreSQL keeps no encodings: each record is encoded as it is read.
        var page = EncodedMessages()
        for record in try all(statement, parameters, Self.meal) {
            // Past the byte budget: the caller ends the page here.
            if page.bytes.count > query.maxBytes { break }
            page.append(ProtoCodec.encode(record))
        }
        return page
    }

    /// The parameters $1-$4 of a meal range: start (ms, ns), end (ms, ns).
    private static func range(_ start: StoreInstant, _ end: StoreInstant) -> [PostgresValue] {
        [.int64(start.milliseconds), .int64(Int64(start.nanos)), .int64(end.milliseconds), .int64(Int64(end.nanos))]
    }

    func mealSummary(_ query: MealSummaryQuery) throws(RPCError) -> [MealSummaryRow] {
        try all(.mealSummary, Self.range(query.start, query.end) + [.int64(query.offsetMilliseconds)]) {
            r, i throws(PostgresError) in
            MealSummaryRow(day: try r.int64(row: i, column: 0),
                           category: Int32(truncatingIfNeeded: try r.int64(row: i, column: 1)),
                           totalCalories: try r.int64(row: i, column: 2), mealCount: try r.int64(row: i, column: 3))
        }
    }
}

// MARK: - StoreWriter

extension PostgresSession {
    private static func ms(_ time: Timestamp?) -> PostgresValue { .int64(time?.unixMilliseconds ?? 0) }
    /// The nanoseconds of `time` past its millisecond (eaten_at_ns).
    private static func subMillisecondNanos(_ time: Timestamp?) -> PostgresValue {
        .int64(Int64((time?.nanos ?? 0) % 1_000_000))
    }

    func insertLocation(_ location: Location) throws(RPCError) {
        _ = try change(.insertLocation, [.text(location.id), .text(location.name), .text(location.colorHex),
                                         Self.ms(location.createTime), Self.ms(location.updateTime)]) { error in
            Self.uniqueViolation(error, table: "locations", entity: "location", id: location.id, name: location.name)
        }
    }

    func updateLocation(_ location: Location) throws(RPCError) -> Bool {
        try change(.updateLocation, [.text(location.id), .text(location.name), .text(location.colorHex),
                                     Self.ms(location.updateTime)]) { error in
            Self.uniqueViolation(error, table: "locations", entity: "location", id: location.id, name: location.name)
        } > 0
    }

    func deleteLocation(id: String) throws(RPCError) -> Bool { try change(.deleteLocation, [.text(id)]) > 0 }

    func insertCategoryGroup(_ group: CategoryGroup) throws(RPCError) {
        _ = try change(.insertGroup, [.text(group.id), .text(group.name), .text(group.colorHex),
                                      Self.ms(group.createTime), Self.ms(group.updateTime)]) { error in
            Self.uniqueViolation(error, table: "category_groups", entity: "category group", id: group.id,
                                 name: group.name)
        }
    }

    func updateCategoryGroup(_ group: CategoryGroup) throws(RPCError) -> Bool {
        try change(.updateGroup, [.text(group.id), .text(group.name), .text(group.colorHex),
                                  Self.ms(group.updateTime)]) { error in
            Self.uniqueViolation(error, table: "category_groups", entity: "category group", id: group.id,
                                 name: group.name)
        } > 0
    }

    func deleteCategoryGroup(id: String) throws(RPCError) -> Bool {
        try change(.deleteGroup, [.text(id)]) { error in
            error.violatedConstraint == .foreignKey ? StoreError.categoryGroupInUse(id: id) : nil
        } > 0
    }

    func insertItemCategory(_ category: ItemCategory) throws(RPCError) {
        _ = try change(.insertItemCategory, [.text(category.id), .text(category.name), .text(category.iconName),
                                             .text(category.categoryGroupID), Self.ms(category.createTime),
                                             Self.ms(category.updateTime)]) { error in
            Self.itemCategoryViolation(error, category)
        }
    }

    func updateItemCategory(_ category: ItemCategory) throws(RPCError) -> Bool {
        try change(.updateItemCategory, [.text(category.id), .text(category.name), .text(category.iconName),
                                         .text(category.categoryGroupID), Self.ms(category.updateTime)]) { error in
            Self.itemCategoryViolation(error, category)
        } > 0
    }

    func deleteItemCategory(id: String) throws(RPCError) -> Bool { try change(.deleteItemCategory, [.text(id)]) > 0 }

    func deleteItemCategories(groupID: String) throws(RPCError) -> Int {
        try change(.deleteItemCategoriesOfGroup, [.text(groupID)])
    }

    func insertMealRecord(_ encoded: EncodedMessage<MealRecord>) throws(RPCError) {
        let record = encoded.message
        _ = try change(.insertMeal, [.text(record.id), .text(record.name), .int64(Int64(record.calories)),
                                     .int64(Int64(record.category.rawValue)), Self.ms(record.eatenAt),
                                     Self.ms(record.createTime), Self.ms(record.updateTime),
                                     Self.subMillisecondNanos(record.eatenAt)]) { error in
            Self.uniqueViolation(error, table: "meal_records", entity: "meal record", id: record.id, name: record.name)
        }
    }

    func updateMealRecord(_ record: MealRecord) throws(RPCError) -> Bool {
        try change(.updateMeal, [.text(record.id), .text(record.name), .int64(Int64(record.calories)),
                                 .int64(Int64(record.category.rawValue)), Self.ms(record.eatenAt),
                                 Self.ms(record.updateTime), Self.subMillisecondNanos(record.eatenAt)]) > 0
    }

    func deleteMealRecord(id: String) throws(RPCError) -> Bool { try change(.deleteMeal, [.text(id)]) > 0 }
}
