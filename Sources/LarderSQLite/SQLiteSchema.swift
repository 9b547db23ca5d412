/// The schema of the SQLite database, as ordered migrations.
///
/// Migration `n` (1-based) moves `PRAGMA user_version` from `n - 1` to `n`.
/// Never edit a released migration; append a new one.
enum SQLiteSchema {
    static let migrations: [String] = [
        // 1: the four entities and an index for every query.
        """
        CREATE TABLE category_groups (
            id TEXT NOT NULL PRIMARY KEY,
            name TEXT NOT NULL,
            color_hex TEXT NOT NULL,
            create_time_ms INTEGER NOT NULL,
            update_time_ms INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE UNIQUE INDEX category_groups_name ON category_groups (name);

        CREATE TABLE item_categories (
            id TEXT NOT NULL PRIMARY KEY,
            name TEXT NOT NULL,
            icon_name TEXT NOT NULL,
            category_group_id TEXT NOT NULL REFERENCES category_groups (id),
            create_time_ms INTEGER NOT NULL,
            update_time_ms INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE UNIQUE INDEX item_categories_group_name ON item_categories (category_group_id, name);
        CREATE INDEX item_categories_name ON item_categories (name);

        CREATE TABLE locations (
            id TEXT NOT NULL PRIMARY KEY,
            name TEXT NOT NULL,
            color_hex TEXT NOT NULL,
            create_time_ms INTEGER NOT NULL,
            update_time_ms INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE UNIQUE INDEX locations_name ON locations (name);

        CREATE TABLE meal_records (
            id TEXT NOT NULL PRIMARY KEY,
            name TEXT NOT NULL,
            calories INTEGER NOT NULL CHECK (calories BETWEEN 0 AND 100000),
            category INTEGER NOT NULL CHECK (category BETWEEN 1 AND 4),
            eaten_at_ms INTEGER NOT NULL,
            create_time_ms INTEGER NOT NULL,
            update_time_ms INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX meal_records_eaten_at ON meal_records (eaten_at_ms DESC, id DESC);
        CREATE INDEX meal_records_category_eaten_at ON meal_records (category, eaten_at_ms DESC, id DESC);
        """,
        // 2: the time index also carries category and calories, so summaries read
        // only the index (a covering index) instead of every row.
        """
        DROP INDEX meal_records_eaten_at;
        CREATE INDEX meal_records_eaten_at_covering
            ON meal_records (eaten_at_ms DESC, id DESC, category, calories);
        """,
        // 3: meal records clustered by (eaten_at_ms, id), the order every list and
        // summary reads them in: a page is one sequential range of the table,
        // with no lookup per row, and an insert updates three b-trees, not four.
        """
        CREATE TABLE meal_records_clustered (
            id TEXT NOT NULL,
            name TEXT NOT NULL,
            calories INTEGER NOT NULL CHECK (calories BETWEEN 0 AND 100000),
            category INTEGER NOT NULL CHECK (category BETWEEN 1 AND 4),
            eaten_at_ms INTEGER NOT NULL,
            create_time_ms INTEGER NOT NULL,
            update_time_ms INTEGER NOT NULL,
            PRIMARY KEY (eaten_at_ms DESC, id DESC)
        ) WITHOUT ROWID;
        INSERT INTO meal_records_clustered
            SELECT id, name, calories, category, eaten_at_ms, create_time_ms, update_time_ms FROM meal_records;
        DROP TABLE meal_records;
        ALTER TABLE meal_records_clustered RENAME TO meal_records;
        CREATE UNIQUE INDEX meal_records_id ON meal_records (id);
        CREATE INDEX meal_records_category_eaten_at ON meal_records (category, eaten_at_ms DESC, id DESC);
        """,
        // Each record's protobuf encoding (larder.v1.MealRecord), written with its columns, so
        // a page is served without rebuilding its records. Rows from before are filled in by
        // SQLiteSession.fillMissingMealEncodings in the same transaction.
        """
        ALTER TABLE meal_records ADD COLUMN encoding BLOB;
        """,
        // 5: a new record now only ever grows the meal table and its category index at
        // one end. Their keys ascend: a new record is usually the newest, and lands at
        // the right edge of both b-trees, where SQLite appends to the last page instead
        // of splitting the first one in half (lists scan them backwards). And the unique
        // index on the random ids is gone: MealKeyIndex, in memory, finds a record's
        // primary key from its id.
        """
        CREATE TABLE meal_records_ascending (
            id TEXT NOT NULL,
            name TEXT NOT NULL,
            calories INTEGER NOT NULL CHECK (calories BETWEEN 0 AND 100000),
            category INTEGER NOT NULL CHECK (category BETWEEN 1 AND 4),
            eaten_at_ms INTEGER NOT NULL,
            create_time_ms INTEGER NOT NULL,
            update_time_ms INTEGER NOT NULL,
            encoding BLOB,
            PRIMARY KEY (eaten_at_ms, id)
        ) WITHOUT ROWID;
        INSERT INTO meal_records_ascending
            SELECT id, name, calories, category, eaten_at_ms, create_time_ms, update_time_ms, encoding
            FROM meal_records;
        DROP TABLE meal_records;
        ALTER TABLE meal_records_ascending RENAME TO meal_records;
        CREATE INDEX meal_records_category_eaten_at ON meal_records (category, eaten_at_ms, id);
        """,
        // 6: eaten_at to the nanosecond: eaten_at_ns holds the nanoseconds past eaten_at_ms
        // (0-999999) and joins the primary key, which keeps its order (and keeps ascending).
        // Earlier rows were stored truncated to the millisecond: they get 0, which is what
        // their stored encodings already say, so the encodings stay as they are.
        """
        CREATE TABLE meal_records_ns (
            id TEXT NOT NULL,
            name TEXT NOT NULL,
            calories INTEGER NOT NULL CHECK (calories BETWEEN 0 AND 100000),
            category INTEGER NOT NULL CHECK (category BETWEEN 1 AND 4),
            eaten_at_ms INTEGER NOT NULL,
            eaten_at_ns INTEGER NOT NULL CHECK (eaten_at_ns BETWEEN 0 AND 999999),
            create_time_ms INTEGER NOT NULL,
            update_time_ms INTEGER NOT NULL,
            encoding BLOB,
            PRIMARY KEY (eaten_at_ms, eaten_at_ns, id)
        ) WITHOUT ROWID;
        INSERT INTO meal_records_ns
            SELECT id, name, calories, category, eaten_at_ms, 0, create_time_ms, update_time_ms, encoding
            FROM meal_records ORDER BY eaten_at_ms, id;
        DROP TABLE meal_records;
        ALTER TABLE meal_records_ns RENAME TO meal_records;
        CREATE INDEX meal_records_category_eaten_at ON meal_records (category, eaten_at_ms, eaten_at_ns, id);
        """,
    ]

    /// The first version whose meal records carry their encoding.
    static let mealEncodingVersion = 4

    /// The schema version this build writes.
    static var latestVersion: Int { migrations.count }
}
