import LarderAPI
import LarderPostgres
import LarderSQLite
import LarderStore
import LarderWire
import Testing

/// Database errors are classified by their codes (SQLite's extended result codes,
/// PostgreSQL's SQLSTATE), never by message text, and mapped to statuses in one place.
@Suite struct DatabaseFailureTests {
    /// The error SQLite itself raises for `sql` on a table with every kind of constraint.
    static func sqliteError(_ sql: String) throws -> SQLiteError? {
        let connection = try SQLiteConnection(path: ":memory:", flags: 0x2 | 0x4)  // READWRITE | CREATE
        defer { connection.close() }
        try connection.execute("PRAGMA foreign_keys=ON")
        try connection.execute("""
            CREATE TABLE parents (id TEXT NOT NULL PRIMARY KEY);
            CREATE TABLE rows (id TEXT NOT NULL PRIMARY KEY, name TEXT NOT NULL, n INTEGER CHECK (n > 0),
                               parent TEXT REFERENCES parents (id));
            CREATE UNIQUE INDEX rows_name ON rows (name);
            INSERT INTO parents VALUES ('p');
            INSERT INTO rows VALUES ('a', 'x', 1, 'p');
            """)
        do throws(SQLiteError) {
            try connection.execute(sql)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        ("INSERT INTO rows VALUES ('a', 'y', 1, 'p')", DatabaseFailure.ConstraintKind.primaryKey),
        ("INSERT INTO rows VALUES ('b', 'x', 1, 'p')", .unique),
        ("INSERT INTO rows VALUES ('b', 'y', 1, 'nobody')", .foreignKey),
        ("INSERT INTO rows VALUES ('b', 'y', 0, 'p')", .check),
        ("INSERT INTO rows VALUES ('b', NULL, 1, 'p')", .notNull),
    ])
    func sqliteConstraintKindsComeFromExtendedResultCodes(sql: String, kind: DatabaseFailure.ConstraintKind) throws {
        let error = try #require(try Self.sqliteError(sql))
        #expect(error.failure == .constraint(kind))
        // The kind survives any message: it is read from the code alone.
        let reworded = SQLiteError(code: error.code, message: "some other words")
        #expect(reworded.violatedConstraint == kind)
        #expect(error.rpcError.code == .failedPrecondition)
    }

    @Test func sqliteErrorsThatAreNoConstraintMapToTheirStatus() throws {
        let noTable = try #require(try Self.sqliteError("SELECT * FROM missing"))
        #expect(noTable.failure == .other)
        let rpc = noTable.rpcError
        #expect(rpc.code == .internal)
        // SQLite's own text is the cause (for the log), not the message (for the client).
        #expect(!rpc.message.contains("missing"))
        #expect(rpc.logDescription.contains("no such table: missing"))
        #expect(SQLiteError(code: 5, message: "").rpcError.code == .unavailable)      // SQLITE_BUSY
        #expect(SQLiteError(code: 6, message: "").rpcError.code == .unavailable)      // SQLITE_LOCKED
        #expect(SQLiteError(code: 13, message: "").rpcError.code == .resourceExhausted)  // SQLITE_FULL
        #expect(SQLiteError(code: 8, message: "").rpcError.code == .failedPrecondition)  // SQLITE_READONLY
        #expect(SQLiteError(code: 11, message: "").rpcError.code == .dataLoss)        // SQLITE_CORRUPT
        #expect(SQLiteError(code: 26, message: "").rpcError.code == .dataLoss)        // SQLITE_NOTADB
        #expect(SQLiteError(code: 10 | (3 << 8), message: "").rpcError.code == .unavailable)  // SQLITE_IOERR_WRITE
    }

    @Test(arguments: [
        ("23505", DatabaseFailure.ConstraintKind.unique),
        ("23503", .foreignKey),
        ("23514", .check),
        ("23502", .notNull),
        ("23P01", .other),  // exclusion_violation
    ])
    func postgresConstraintKindsComeFromTheSQLState(state: String, kind: DatabaseFailure.ConstraintKind) {
        let error = PostgresError(sqlState: state, message: "duplicate key value violates unique constraint")
        #expect(error.failure == .constraint(kind))
        #expect(error.rpcError.code == .failedPrecondition)
    }

    @Test func postgresErrorsThatAreNoConstraintMapToTheirStatus() {
        let cases: [(String, StatusCode)] = [
            ("08006", .unavailable), ("57P01", .unavailable), ("40001", .aborted), ("40P01", .aborted),
            ("53100", .resourceExhausted), ("28P01", .permissionDenied), ("42501", .permissionDenied),
            ("57014", .unavailable), (PostgresError.deadlineExceeded, .deadlineExceeded),
            ("25006", .failedPrecondition), ("XX001", .dataLoss), ("42P01", .failedPrecondition), ("42703", .failedPrecondition),
            ("XX000", .internal),
        ]
        for (state, code) in cases {
            #expect(PostgresError(sqlState: state, message: "m").rpcError.code == code, "SQLSTATE \(state)")
        }
        let hidden = PostgresError(sqlState: "42P01", message: "relation \"locations\" does not exist").rpcError
        #expect(!hidden.message.contains("relation"))
        #expect(hidden.logDescription.contains("relation \"locations\" does not exist"))
    }
}

/// Through a real store: which key a write broke comes from the constraint's code
/// (SQLite: primary key vs unique index; PostgreSQL: the constraint's name), for every entity.
@Suite struct KeyViolationTests {
    static let groupID = "1b2c3d4e-5f60-4718-8a9b-0c1d2e3f4a5b"
    static let categoryID = "2c3d4e5f-6071-4829-9bac-1d2e3f4a5b6c"

    @Test(arguments: Backend.all)
    func duplicateIDsAndNamesOfGroupsAndCategoriesAreAlreadyExists(backend: Backend) throws {
        let db = try TestDatabase(backend)
        let group = try db.write(Operations.createCategoryGroup, CreateCategoryGroupRequest(
            categoryGroup: CategoryGroup(id: Self.groupID, name: "Food", colorHex: "#000000")))
        #expect(rpcError {
            try db.write(Operations.createCategoryGroup, CreateCategoryGroupRequest(
                categoryGroup: CategoryGroup(id: Self.groupID, name: "Other", colorHex: "#000000")))
        } == RPCError(.alreadyExists, "category group id \"\(Self.groupID)\" already exists"))
        #expect(rpcError {
            try db.write(Operations.createCategoryGroup, CreateCategoryGroupRequest(
                categoryGroup: CategoryGroup(name: "Food", colorHex: "#000000")))
        } == RPCError(.alreadyExists, "category group name \"Food\" already exists"))

        _ = try db.write(Operations.createItemCategory, CreateItemCategoryRequest(itemCategory: ItemCategory(
            id: Self.categoryID, name: "Fruit", iconName: "leaf", categoryGroupID: group.id)))
        #expect(rpcError {
            try db.write(Operations.createItemCategory, CreateItemCategoryRequest(itemCategory: ItemCategory(
                id: Self.categoryID, name: "Veg", iconName: "leaf", categoryGroupID: group.id)))
        } == RPCError(.alreadyExists, "item category id \"\(Self.categoryID)\" already exists"))
        #expect(rpcError {
            try db.write(Operations.createItemCategory, CreateItemCategoryRequest(itemCategory: ItemCategory(
                name: "Fruit", iconName: "leaf", categoryGroupID: group.id)))
        } == StoreError.duplicateItemCategoryName("Fruit", groupID: group.id))
    }
}
