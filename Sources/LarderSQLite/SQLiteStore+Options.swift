extension SQLiteStore {
    /// How `SQLiteStore.open` sets up the database.
    public struct Options: Sendable {
        /// When a commit reaches the disk.
        public enum Durability: Sendable {
            /// `PRAGMA synchronous=FULL`: a commit survives power loss.
            case full
            /// `PRAGMA synchronous=NORMAL`: in WAL mode a commit survives a crash of the
            /// process, but the last ones may be lost on power loss. Much faster.
            case normal
        }

        public var durability: Durability
        /// Fill a newly created database with the default data (once, never again).
        public var seed: Bool
        /// How many reader connections (and threads) serve reads; at least 1.
        public var readerCount: Int
        /// How long a connection waits for a lock held by another process.
        public var busyTimeoutMilliseconds: Int32
        /// Open an existing database for reading only: no migrations, no seeding;
        /// writes fail with FAILED_PRECONDITION.
        public var readOnly: Bool
        /// The most writes committed together in one transaction.
        public var maxWriteBatch: Int
        /// The page cache of each reader connection, in KiB.
        public var cacheKilobytes: Int
        /// The writer's page cache, in KiB. Smaller than the readers': at every commit
        /// that split a B-tree page, SQLite walks the writer's whole cache (to drop pages
        /// past the end of the file). Measured on creates while meal ids still had a
        /// unique index (schema v4, nearly every batch split a page of it): 4 MiB cost
        /// ~10% less CPU than 32 MiB. Reads of the pages it no longer keeps come from
        /// the memory map.
        public var writerCacheKilobytes: Int
        /// How much of the file each connection maps into memory for reading (0 = none).
        public var mmapBytes: Int
        /// WAL pages between two wake-ups of the background checkpointer (the first once
        /// the WAL holds this many); at 4x this the writer checkpoints itself
        /// (`CheckpointPolicy`). 16,000 pages = 64 MB.
        public var checkpointPages: Int32
        /// After this long without a commit, the background checkpointer copies what is
        /// left of the WAL into the database (0 = never): once it is all copied, reads skip
        /// the WAL (no lookup of each page in its index) and the next write starts it over.
        public var idleCheckpointMilliseconds: Int
        /// Point reads (`ReadCost.point`: gets by id) submitted inside `submitBatch` run on
        /// the submitting thread (the server's event loop, at the end of its turn), on one
        /// more reader connection, instead of on a reader thread: a lookup by key costs a few
        /// microseconds, a hand-off to a reader and back a thread switch and two wake-ups.
        public var inlinePointReads: Bool
        /// The free space (bytes) the database's file system must have for a read-write store
        /// to open: SQLite maps its WAL index (`-shm`) into memory, and on a file system with
        /// no room left, growing it ends the process with SIGBUS rather than an error.
        public var minimumFreeBytes: UInt64 = 1 << 20
        /// Free space under which `onLowFreeSpace` is told at open: under writes the WAL grows to
        /// about 64 MB before the background checkpoint starts it over, and to 256 MB in a burst.
        public var lowFreeSpaceBytes: UInt64 = 256 << 20
        /// Told at open (read-write only) the free bytes on the database's file system when under
        /// `lowFreeSpaceBytes`: writes may fail RESOURCE_EXHAUSTED long before the database is that big.
        public var onLowFreeSpace: @Sendable (UInt64) -> Void = { _ in }
        /// Told at open the database file's link count when it has other hard links: a server
        /// started on another of its names would use another WAL, not see the writes waiting in
        /// this one, and have its own undone when this one is started again (audit 30 F3).
        public var onHardLinks: @Sendable (Int) -> Void = { _ in }
        /// Told once (why, on a store thread) when the database file or its WAL turns out to have
        /// been moved, replaced or deleted while the store runs: it takes no more writes from then on.
        public var onFileMoved: @Sendable (String) -> Void = { _ in }
        /// Told once (on a store thread) when the WAL was the file deleted under the store and
        /// all it held, every write acknowledged before, is now in the database file.
        public var onLostWALCopied: @Sendable () -> Void = {}
        /// Told (why, and what is left where) when closing could not copy the whole WAL into the
        /// database file within `closeCheckpointMilliseconds`: another process reads it, or the
        /// disk is full. The WAL then holds acknowledged writes the database file alone lacks.
        public var onCloseCheckpointIncomplete: @Sendable (String) -> Void = { _ in }
        /// How long closing keeps trying to copy the whole WAL while something holds it back.
        public var closeCheckpointMilliseconds: Int = 2000
        /// Told when opening changed the file's schema (a new database counts, from version 0):
        /// the version before and after, and how long it took in milliseconds.
        public var onMigrated: @Sendable (_ from: Int, _ to: Int, _ milliseconds: Int) -> Void = { _, _, _ in }

        public init(durability: Durability = .full, seed: Bool = true, readerCount: Int = 2,
                    busyTimeoutMilliseconds: Int32 = 5000, readOnly: Bool = false, maxWriteBatch: Int = 512,
                    cacheKilobytes: Int = 32 * 1024, writerCacheKilobytes: Int = 4 * 1024,
                    mmapBytes: Int = 256 * 1024 * 1024,
                    checkpointPages: Int32 = 16000, idleCheckpointMilliseconds: Int = 250,
                    inlinePointReads: Bool = true) {
            self.durability = durability
            self.seed = seed
            self.readerCount = readerCount
            self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
            self.readOnly = readOnly
            self.maxWriteBatch = maxWriteBatch
            self.cacheKilobytes = cacheKilobytes
            self.writerCacheKilobytes = writerCacheKilobytes
            self.mmapBytes = mmapBytes
            self.checkpointPages = checkpointPages
            self.idleCheckpointMilliseconds = max(0, idleCheckpointMilliseconds)
            self.inlinePointReads = inlinePointReads
        }
    }
}
