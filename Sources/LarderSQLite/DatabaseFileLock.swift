#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LarderWire
import LarderSystem

/// An advisory `flock` on the database file: one read-write store per file at a time
/// (exclusive), or any number of read-only ones (shared).
///
/// A store keeps where each meal record is in memory (`MealKeyIndex`), which a second
/// process writing the same file would silently make wrong; this lock refuses that
/// second server instead. SQLite's own locks are POSIX record locks, which a `flock`
/// does not touch — but closing *any* descriptor of the file drops the process's POSIX
/// locks on it, so the lock is released only after every SQLite connection closed.
final class DatabaseFileLock: Sendable {
    private let descriptor: LockedValue<Int32>
    /// The database file's path; its WAL is this plus "-wal".
    private let path: String
    /// The flock on the WAL file (-1 until `lockWAL` took it).
    private let walDescriptor = LockedValue<Int32>(-1)
    /// The files this lock created (the database, its WAL), which `removeCreatedFiles` deletes
    /// while still empty: a failed open leaves nothing behind it.
    private let created = LockedValue<[String]>([])

    /// Takes the lock, creating an empty file (which SQLite reads as a new database)
    /// unless `shared`. Call before opening any SQLite connection to `path`.
    ///
    /// - Throws: FAILED_PRECONDITION while another store holds a conflicting lock,
    ///   UNAVAILABLE when the file cannot be opened.
    init(path: String, shared: Bool) throws(RPCError) {
        var createdFile = false
        let fd = shared ? open(path, O_RDONLY | O_CLOEXEC) : Self.openOrCreate(path, created: &createdFile)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            throw RPCError.unavailable("cannot open database \"\(path)\": \(reason)")
        }
        if let failure = Self.lockFailure(fd, shared ? LOCK_SH : LOCK_EX) {
            close(fd)
            throw failure == EWOULDBLOCK
                ? RPCError.failedPrecondition(
                    "database \"\(path)\" is in use by another larder-server; stop it or use another file")
                : RPCError.unavailable("cannot lock database \"\(path)\": \(String(cString: strerror(failure)))")
        }
        descriptor = LockedValue(fd)
        self.path = path
        if createdFile { created.withLock { $0.append(path) } }
    }

    /// `open(path, O_RDWR)`, creating the file when missing (then `created` is set).
    private static func openOrCreate(_ path: String, created: inout Bool) -> Int32 {
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd < 0, errno == ENOENT else { return fd }
        let new = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        if new >= 0 { created = true }
        return new >= 0 || errno != EEXIST ? new : open(path, O_RDWR | O_CLOEXEC)
    }

    /// Locks the WAL file too, creating it empty when missing (SQLite then uses that file):
    /// call before SQLite opens the database. The lock on the database file protects only
    /// while the file stays in place: replaced under a running server (a backup restored with
    /// `mv`), it lets a second server start on the new file, and the two would share the WAL,
    /// which SQLite finds by path. This lock refuses that.
    ///
    /// - Throws: FAILED_PRECONDITION while another larder-server has the WAL locked,
    ///   UNAVAILABLE when it cannot be opened.
    func lockWAL() throws(RPCError) {
        guard walDescriptor.withLock({ $0 }) < 0 else { return }
        let wal = walPath
        var createdFile = false
        let fd = Self.openOrCreate(wal, created: &createdFile)
        guard fd >= 0 else {
            throw RPCError.unavailable("cannot open \(wal): \(String(cString: strerror(errno)))")
        }
        if let failure = Self.lockFailure(fd, LOCK_EX) {
            close(fd)
            throw failure == EWOULDBLOCK
                ? RPCError.failedPrecondition(
                    "database \"\(path)\" is in use by another larder-server, which has its WAL file \(wal) open "
                        + "(the database file was replaced or moved while that server ran); stop it first")
                : RPCError.unavailable("cannot lock \(wal): \(String(cString: strerror(failure)))")
        }
        walDescriptor.withLock { $0 = fd }
        if createdFile { created.withLock { $0.append(wal) } }
    }

    /// True when the file at the WAL's path is no longer the WAL this lock holds open (deleted,
    /// renamed or replaced): SQLite goes on writing to the file it has open, which a restart
    /// would never read. False before `lockWAL`.
    func walHasMoved() -> Bool {
        let fd = walDescriptor.withLock { $0 }
        guard fd >= 0 else { return false }
        var held = stat()
        guard fstat(fd, &held) == 0 else { return false }
        if held.st_nlink == 0 { return true }
        var current = stat()
        guard stat(walPath, &current) == 0 else { return errno == ENOENT || errno == ENOTDIR }
        return current.st_dev != held.st_dev || current.st_ino != held.st_ino
    }

    /// The WAL's path: SQLite's, the database file's plus "-wal".
    var walPath: String { path + "-wal" }

    /// Deletes the files this lock created that are still empty: call when the open failed,
    /// before `release`, so that a refused file (another application's database) is left as it was.
    func removeCreatedFiles() {
        for file in created.withLock({ $0 }).reversed() {
            var info = stat()
            if stat(file, &info) == 0, info.st_size == 0 { unlink(file) }
        }
        created.withLock { $0.removeAll() }
    }

    /// `flock(fd, operation)` without waiting, again after EINTR: nil once taken, else the errno.
    private static func lockFailure(_ fd: Int32, _ operation: Int32) -> Int32? {
        while flock(fd, operation | LOCK_NB) != 0 {
            guard errno == EINTR else { return errno }
        }
        return nil
    }

    /// Drops the lock. Idempotent; only after every SQLite connection to the file closed.
    func release() {
        let wal = walDescriptor.withLock { fd in
            defer { fd = -1 }
            return fd
        }
        if wal >= 0 { close(wal) }
        let fd = descriptor.withLock { fd in
            defer { fd = -1 }
            return fd
        }
        if fd >= 0 { close(fd) }
    }
}
