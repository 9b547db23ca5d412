import CSQLite
@testable import LarderSQLite
import Testing

/// Every query the SQLite backend runs is served by an index: no full-table
/// scans for lookups, pages or summaries, and no sorting in a temporary B-tree.
@Suite struct QueryPlanTests {
    static let selects = SQLiteQuery.allCases.filter { $0.sql.hasPrefix("SELECT") }

    @Test(arguments: selects)
    func queryUsesAnIndex(query: SQLiteQuery) throws {
        let db = try TestDatabase()
        let connection = try SQLiteConnection(path: db.path, flags: SQLITE_OPEN_READONLY)
        let statement = try connection.prepare("EXPLAIN QUERY PLAN " + query.sql)
        var plan: [String] = []
        while try statement.step() { plan.append(statement.string(at: 3)) }
        // The summary groups by a computed local day: a small temporary B-tree of
        // (day, category) groups, never a sort of the rows themselves.
        if query == .mealSummary || query == .mealSummaryPrecise {
            #expect(plan.contains("USE TEMP B-TREE FOR GROUP BY"), "\(plan)")
            plan.removeAll { $0 == "USE TEMP B-TREE FOR GROUP BY" }
        }
        if [.mealSummary, .mealPage, .mealPageAfter, .mealSummaryPrecise, .mealPagePrecise,
            .mealPageAfterPrecise].contains(query) {
            // A range of the table clustered by (eaten_at_ms, id): no lookup per row.
            #expect(plan.contains { $0.contains("USING PRIMARY KEY") }, "\(query): \(plan)")
        }
        #expect(!plan.isEmpty)
        #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(query) sorts: \(plan)")
        // Lists by name too: a keyset page is a range of the name index, never a scan.
        #expect(plan.allSatisfy { $0.hasPrefix("SEARCH") }, "\(query) scans: \(plan)")
    }
}
