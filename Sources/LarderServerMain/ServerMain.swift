import LarderPostgres
import LarderReactor
import LarderServer
import LarderSQLite
import LarderStore
import LarderWire
#if canImport(Glibc)
import Glibc
#endif

/// The `larder-server` program: parse flags, open the store, serve until a signal.
public enum ServerMain {
    /// Runs the server; returns the process exit code.
    public static func run(arguments: [String], environment: [String: String]) -> Int32 {
        let launch: LaunchConfiguration
        do {
            switch try ServerCommandLine.parse(arguments, environment: environment) {
            case .help:
                Logger.writeRaw(ServerCommandLine.helpText, fd: 1)
                return 0
            case .version:
                Logger.writeRaw("larder-server \(BuildInfo.summary)\n", fd: 1)
                return 0
            case .serve(let parsed):
                launch = parsed
            }
            try launch.server.validate()
        } catch let error as ServerCommandLine.UsageError {
            Logger.writeRaw("larder-server: \(error.description)\nRun larder-server --help for usage.\n", fd: 2)
            return 2
        } catch {
            Logger.writeRaw("larder-server: \(error)\n", fd: 2)
            return 2
        }
        let configuration = launch.server
        let logger = Logger(minimumLevel: configuration.logLevel)
        logger.info("starting", ["version": BuildInfo.version, "commit": BuildInfo.commit,
                                 "protocol": BuildInfo.protocolVersion, "pid": getpid()])
        // Before any thread starts: SIGINT/SIGTERM (drain) and SIGHUP (reload) then stay
        // pending until the event loop reads them, whenever they arrive.
        do {
            try SignalSource.block(Server.handledSignals)
        } catch {
            logger.error("signal_setup_failed", ["error": error])
            return 1
        }
        // A file-size limit (ulimit -f, systemd's LimitFSIZE=) reached by a database write
        // is then the write's error (EFBIG: SQLite's "database or disk is full",
        // RESOURCE_EXHAUSTED for that call), not a SIGXFSZ that kills the server silently.
        signal(SIGXFSZ, SIG_IGN)
        holdFreedBlocks(environment: environment)
        warnIfDescriptorsAreShort(maxConnections: configuration.maxConnections,
                                  readers: launch.database.readerCount, logger: logger)
        // Before the database is opened: a bad file or a busy port leaves no new (or migrated)
        // database behind.
        let files: Server.StartupFiles
        let sockets: Server.StartupSockets
        do {
            files = try Server.StartupFiles.load(configuration)
            sockets = try Server.StartupSockets.bind(configuration)
        } catch {
            logger.error("start_failed", ["error": error.description])
            return 1
        }
        let store: any Store
        let database = launch.database.databaseDescription
        do {
            store = try openStore(launch.database, logger: logger)
        } catch {
            logger.error("database_open_failed", ["db": database, "error": error.description])
            return 1
        }
        if let postgres = store as? PostgresStore {
            logger.info("database_opened", ["db": database, "backend": "postgres", "schema": postgres.schema,
                                            "durability": launch.database.durability.rawValue])
        } else {
            logger.info("database_opened", ["db": database, "backend": "sqlite",
                                            "durability": launch.database.durability.rawValue])
        }
        let server: Server
        do {
            server = try Server(configuration: configuration, store: store, logger: logger, files: files, sockets: sockets)
        } catch {
            logger.error("start_failed", ["error": error.description])
            store.close()
            return 1
        }
        // A server that could not start serving (listen_failed) exits 1, as start_failed does.
        return server.run() ? 0 : 1
    }

    /// Fixes malloc's thresholds (`ProcessMemory.holdFreedBlocks`) at 16 MiB, unless the
    /// environment sets either of them (GLIBC_TUNABLES, or glibc's older MALLOC_MMAP_THRESHOLD_
    /// and MALLOC_TRIM_THRESHOLD_): big replies (a page of 1,000 meal records is about 0.5 MB)
    /// then reuse the heap instead of faulting fresh pages in (docs/BENCHMARKS.md). The heap
    /// is still given back after a peak (`Server.watchBudget`) and when quiet.
    static func holdFreedBlocks(environment: [String: String]) {
        let tunables = environment["GLIBC_TUNABLES"] ?? ""
        guard !tunables.contains("glibc.malloc.mmap_threshold"), !tunables.contains("glibc.malloc.trim_threshold"),
              environment["MALLOC_MMAP_THRESHOLD_"] == nil, environment["MALLOC_TRIM_THRESHOLD_"] == nil
        else { return }
        ProcessMemory.holdFreedBlocks(upTo: 16 << 20)
    }

    /// Descriptors the server needs besides its connections': standard streams, the listener,
    /// epoll, its event and timer descriptors, the metrics endpoint and the like (16, with room
    /// to spare), and 4 per database connection (SQLite's file, WAL, shared memory and journal;
    /// a PostgreSQL socket uses one) for the writer, the checkpointer, the event loop's reader
    /// and the `--readers`. Measured: with a limit of 100 and 2 readers, 78 connections fit
    /// (22 besides them; this says 36).
    static func descriptorsBesideConnections(readers: Int) -> Int { 16 + 4 * (readers + 3) }

    /// Raises the descriptor limit to the hard limit, and warns when even that cannot hold
    /// `--max-connections`: past it, new clients are refused "out of file descriptors".
    static func warnIfDescriptorsAreShort(maxConnections: Int, readers: Int, logger: Logger) {
        let own = descriptorsBesideConnections(readers: readers)
        guard let limit = DescriptorLimit.raiseToHard(), limit < maxConnections + own else { return }
        logger.warn("descriptor_limit_low", [
            "limit": limit, "max_connections": maxConnections,
            "effect": "at most about \(max(0, limit - own)) connections: raise the hard limit (ulimit -Hn, "
                + "systemd LimitNOFILE=) to \(maxConnections + own), or lower --max-connections",
        ])
    }

    /// The file-size limit (`ulimit -f`, systemd's `LimitFSIZE=`) below which the SQLite WAL
    /// alone reaches it under writes: it grows to 64 MB before the background checkpoint
    /// restarts it, and to 256 MB in a burst (DESIGN.md, Storage).
    static let walWorstCaseBytes: UInt64 = 512 << 20

    /// Warns when a file-size limit would cut the WAL short: writes would then fail
    /// RESOURCE_EXHAUSTED now and then while the database is far below the limit (audit 21 L2).
    static func warnIfFileSizeLimitIsLow(logger: Logger, database: String) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max,
              UInt64(limit.rlim_cur) < walWorstCaseBytes else { return }
        logger.warn("file_size_limit_low", [
            "db": database, "limit_bytes": UInt64(limit.rlim_cur),
            "effect": "the -wal grows to 64-256 MB under writes, so writes will fail RESOURCE_EXHAUSTED long before "
                + "the database reaches the limit: raise it (ulimit -f, systemd LimitFSIZE=) to at least "
                + "\(walWorstCaseBytes >> 20) MB above the largest the database may grow to",
        ])
    }

    /// PostgreSQL for a `postgres://` or `postgresql://` URL, else the SQLite file.
    static func openStore(_ configuration: DatabaseConfiguration, logger: Logger) throws(RPCError) -> any Store {
        if PostgresURL.isPostgres(configuration.databasePath) {
            let database = configuration.databaseDescription
            var options = PostgresStore.Options(
                durability: configuration.durability == .full ? .full : .normal,
                seed: configuration.seed, readerCount: configuration.readerCount,
                onAvailabilityChange: DatabaseAvailabilityLog(logger: logger, database: database).log)
            options.onMigrationLockBusy = { [timeout = options.migrationLockTimeoutSeconds] in
                logger.info("database_migration_wait", [
                    "db": database, "timeout_s": timeout,
                    "reason": "another larder-server holds the schema migration lock (migrating this database)",
                ])
            }
            options.onMigrated = { from, to, milliseconds in logMigration(logger, database: database, from, to, milliseconds) }
            return try PostgresStore.open(url: configuration.databasePath, options: options)
        }
        warnIfFileSizeLimitIsLow(logger: logger, database: configuration.databaseDescription)
        var options = SQLiteStore.Options(
            durability: configuration.durability == .full ? .full : .normal,
            seed: configuration.seed, readerCount: configuration.readerCount,
            busyTimeoutMilliseconds: Int32(configuration.busyTimeoutSeconds * 1000))
        let database = configuration.databaseDescription
        options.onFileMoved = { reason in
            logger.error("database_file_moved", ["db": database, "error": reason,
                                                 "effect": "writes refused, health NOT_SERVING; restart the server"])
        }
        options.onLostWALCopied = {
            logger.info("database_wal_copied", ["db": database, "effect": "every write acknowledged before the WAL "
                + "was deleted is in the database file; restart the server to take writes again"])
        }
        options.onLowFreeSpace = { free in
            logger.warn("disk_space_low", [
                "db": database, "free_bytes": free,
                "effect": "the -wal grows to 64-256 MB under writes, so writes may fail RESOURCE_EXHAUSTED while the "
                    + "database is far smaller: keep at least 256 MB free beside it",
            ])
        }
        options.onHardLinks = { links in
            logger.warn("database_hard_linked", [
                "db": database, "links": links,
                "effect": "start servers on this name only: one started on another name of the file would use "
                    + "another -wal, missing the writes in this one, and its own would be undone when a server "
                    + "starts on this name again",
            ])
        }
        options.onCloseCheckpointIncomplete = { problem in
            logger.warn("checkpoint_incomplete", ["db": database, "error": problem])
        }
        options.onMigrated = { from, to, milliseconds in logMigration(logger, database: database, from, to, milliseconds) }
        return try SQLiteStore.open(path: configuration.databasePath, options: options)
    }

    /// `database_created` (from version 0: an empty database, created and seeded) or
    /// `database_migrated`, for either backend.
    static func logMigration(_ logger: Logger, database: String, _ from: Int, _ to: Int, _ milliseconds: Int) {
        if from == 0 {
            logger.info("database_created", ["db": database, "schema_version": to, "duration_ms": milliseconds])
        } else {
            logger.info("database_migrated", [
                "db": database, "from_version": from, "to_version": to, "duration_ms": milliseconds,
                "effect": "earlier builds of larder cannot open the database; to go back, restore the backup taken "
                    + "before upgrading",
            ])
        }
    }
}
