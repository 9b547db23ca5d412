import CSQLite
import LarderWire
import Synchronization

/// Notices that the database file a store has open, or its WAL, is no longer the file at its
/// path: renamed, replaced (a backup restored with `mv` while the server runs) or deleted.
///
/// From then on every write would go to a file nobody will open again: lost at the next
/// start. So once either has moved, writes are refused before they commit (UNAVAILABLE,
/// nothing written) and the store reports itself unavailable (health NOT_SERVING). The
/// writer checks before each commit, the checkpointer thread at each of its wakes (every
/// 250 ms), so an idle server notices too. A deleted WAL still holds the latest acknowledged
/// writes, readable through the descriptors SQLite has open: the checkpointer then copies it
/// into the database file (`walLost`), which is still the right one. (A second server on a
/// new file is refused by the WAL's lock: `DatabaseFileLock.lockWAL`.)
final class DatabaseFileWatch: Sendable {
    let path: String
    /// Which file moved: a `MovedFile` raw value, 0 while none has.
    private let moved = Atomic<UInt8>(0)
    private let walHasMoved: @Sendable () -> Bool
    private let onMoved: @Sendable (String) -> Void
    private let onLostWALCopied: @Sendable () -> Void

    private enum MovedFile: UInt8 {
        case database = 1
        case wal = 2
    }

    /// `walHasMoved` tells whether the WAL at its path is still the store's; `onMoved` is told
    /// once, with the reason, on the thread that noticed; `onLostWALCopied` once a deleted WAL's
    /// content is all in the database file (`lostWALCopied`).
    init(path: String, walHasMoved: @escaping @Sendable () -> Bool = { false },
         onMoved: @escaping @Sendable (String) -> Void, onLostWALCopied: @escaping @Sendable () -> Void = {}) {
        self.path = path
        self.walHasMoved = walHasMoved
        self.onMoved = onMoved
        self.onLostWALCopied = onLostWALCopied
    }

    /// Called by the checkpointer once it copied all of a deleted WAL into the database file.
    func lostWALCopied() { onLostWALCopied() }

    /// True once a file was seen moved; an atomic load.
    var hasMoved: Bool { moved.load(ordering: .acquiring) != 0 }

    /// True once the WAL (and not the database file) was seen moved: what the WAL holds
    /// belongs in the database file, and the store's connections can still read it.
    var walLost: Bool { moved.load(ordering: .acquiring) == MovedFile.wal.rawValue }

    /// Asks SQLite whether `connection`'s file is still the one at the path (one `stat`), and
    /// whether the WAL is (an `fstat` and a `stat`); true when one has moved, now or before.
    func check(_ connection: SQLiteConnection) -> Bool {
        if hasMoved { return true }
        let file: MovedFile
        if connection.fileHasMoved() {
            file = .database
        } else if walHasMoved() {
            file = .wal
        } else {
            return false
        }
        // The first to notice says so; a later one (another thread, another file) keeps it.
        if moved.compareExchange(expected: 0, desired: file.rawValue, ordering: .acquiringAndReleasing).exchanged {
            onMoved(reason)
        }
        return true
    }

    /// What a refused write answers.
    var error: RPCError {
        if walLost {
            return RPCError.unavailable("\(reason): nothing of this call was written; restart larder-server (what was "
                                        + "acknowledged before is copied into the database file)")
        }
        return RPCError.unavailable("\(reason): nothing of this call was written; restart larder-server on the "
                                    + "database file it should use")
    }

    var reason: String {
        if walLost {
            return "the WAL file \"\(path)-wal\" was deleted, renamed or replaced while larder-server ran"
        }
        return "the database file \"\(path)\" was moved, replaced or deleted while larder-server ran"
    }
}
