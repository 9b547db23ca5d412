import LarderStore
import Testing

/// The tables and indexes migrations leave behind, read from their DDL.
@Suite("Schema relation names")
struct SchemaRelationNamesTests {
    @Test func dropsRemoveAndLaterCreatesRestore() {
        let migrations = [
            "CREATE TABLE a (id TEXT, CONSTRAINT a_pkey PRIMARY KEY (id));\nCREATE INDEX a_old ON a (id);\nCREATE UNIQUE INDEX a_u ON a (id);",
            "DROP INDEX a_old;\nDROP INDEX IF EXISTS a_u;\nCREATE INDEX a_new ON a (id);",
            "CREATE INDEX a_old ON a (id);",
        ]
        #expect(SchemaRelationNames.present(after: Array(migrations.prefix(2))) == ["a", "a_pkey", "a_new"])
        #expect(SchemaRelationNames.present(after: migrations) == ["a", "a_pkey", "a_new", "a_old"])
        #expect(SchemaRelationNames.created(by: migrations) == ["a", "a_pkey", "a_old", "a_u", "a_new"])
    }

    @Test func ifNotExistsAndPunctuationAreNotNames() {
        let migrations = ["CREATE TABLE IF NOT EXISTS t(id INT);\nCREATE INDEX IF NOT EXISTS t_i ON t(id);DROP INDEX t_i;"]
        #expect(SchemaRelationNames.created(by: migrations) == ["t", "t_i"])
        #expect(SchemaRelationNames.present(after: migrations) == ["t"])
    }
}
