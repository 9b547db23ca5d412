/// The schema of the PostgreSQL database, as ordered migrations recorded in
/// `schema_migrations` (one row per applied version).
///
/// Never edit a released migration; append a new one. Text keys use the "C"
/// collation so that names and ids sort and compare byte for byte, exactly
/// like SQLite's BINARY collation, whatever the database's locale.
enum PostgresSchema {
    /// Created outside the numbered migrations: it records them.
    static let migrationsTable = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version BIGINT NOT NULL PRIMARY KEY,
            applied_at_ms BIGINT NOT NULL
        )
        """

    /// The key of the transaction-scoped advisory lock that serializes migrations
    /// of replicas starting together ("LARDER" and 1, as a 64-bit number).
    static let migrationLockKey: Int64 = 0x4C41_5244_4552_0001

    static let migrations: [String] = [
        // 1: the four entities, named constraints (the backend maps them to errors), an index for every query.
        """
        CREATE TABLE category_groups (
            id TEXT COLLATE "C" NOT NULL,
            name TEXT COLLATE "C" NOT NULL,
            color_hex TEXT NOT NULL,
            create_time_ms BIGINT NOT NULL,
            update_time_ms BIGINT NOT NULL,
            CONSTRAINT category_groups_pkey PRIMARY KEY (id),
            CONSTRAINT category_groups_name UNIQUE (name)
        );

        CREATE TABLE item_categories (
            id TEXT COLLATE "C" NOT NULL,
            name TEXT COLLATE "C" NOT NULL,
            icon_name TEXT NOT NULL,
            category_group_id TEXT COLLATE "C" NOT NULL,
            create_time_ms BIGINT NOT NULL,
            update_time_ms BIGINT NOT NULL,
            CONSTRAINT item_categories_pkey PRIMARY KEY (id),
            CONSTRAINT item_categories_group_name UNIQUE (category_group_id, name),
            CONSTRAINT item_categories_group_fkey FOREIGN KEY (category_group_id) REFERENCES category_groups (id)
        );
        CREATE INDEX item_categories_name ON item_categories (name, id);

        CREATE TABLE locations (
            id TEXT COLLATE "C" NOT NULL,
            name TEXT COLLATE "C" NOT NULL,
            color_hex TEXT NOT NULL,
            create_time_ms BIGINT NOT NULL,
            update_time_ms BIGINT NOT NULL,
            CONSTRAINT locations_pkey PRIMARY KEY (id),
            CONSTRAINT locations_name UNIQUE (name)
        );

        CREATE TABLE meal_records (
            id TEXT COLLATE "C" NOT NULL,
            name TEXT NOT NULL,
            calories INTEGER NOT NULL,
            category INTEGER NOT NULL,
            eaten_at_ms BIGINT NOT NULL,
            create_time_ms BIGINT NOT NULL,
            update_time_ms BIGINT NOT NULL,
            CONSTRAINT meal_records_pkey PRIMARY KEY (id),
            CONSTRAINT meal_records_calories CHECK (calories BETWEEN 0 AND 100000),
            CONSTRAINT meal_records_category CHECK (category BETWEEN 1 AND 4)
        );
        -- Covering: pages and summaries read only the index (SQLite's migration 2 does the same).
        CREATE INDEX meal_records_eaten_at_covering ON meal_records (eaten_at_ms DESC, id DESC, category, calories);
        CREATE INDEX meal_records_category_eaten_at ON meal_records (category, eaten_at_ms DESC, id DESC);
        """,
        // 2: eaten_at to the nanosecond: eaten_at_ns holds the nanoseconds past eaten_at_ms
        // (0-999999) and joins both indexes' keys. Earlier rows were stored truncated to the
        // millisecond and get 0 (a constant default: no table rewrite).
        """
        ALTER TABLE meal_records ADD COLUMN eaten_at_ns INTEGER NOT NULL DEFAULT 0,
            ADD CONSTRAINT meal_records_eaten_at_ns CHECK (eaten_at_ns BETWEEN 0 AND 999999);
        DROP INDEX meal_records_eaten_at_covering;
        DROP INDEX meal_records_category_eaten_at;
        CREATE INDEX meal_records_eaten_at_covering
            ON meal_records (eaten_at_ms DESC, eaten_at_ns DESC, id DESC, category, calories);
        CREATE INDEX meal_records_category_eaten_at
            ON meal_records (category, eaten_at_ms DESC, eaten_at_ns DESC, id DESC);
        """,
    ]

    /// The schema version this build writes.
    static var latestVersion: Int { migrations.count }
}
