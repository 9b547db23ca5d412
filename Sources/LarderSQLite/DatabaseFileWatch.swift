import CSQLite
import LarderWire
import Synchronization

/// Notices that the database file a store has open is no longer the file at its path:
/// renamed, replaced (a backup restored with `mv` while the server runs) or deleted.
///
/// From then on every write would go to a file nobody will open again: lost at the next
/// start. So once it has moved, writes are refused before they commit (UNAVAILABLE,
/// nothing written) and the store reports itself unavailable (health NOT_SERVING). The
/// writer checks before each commit, the checkpointer thread at each of its wakes (every
/// 250 ms), so an idle server notices too. (A
/// second server on the new file is refused by the WAL's lock: `DatabaseFileLock.lockWAL`.)
final class DatabaseFileWatch: Sendable {
    let path: String
    private let moved = Atomic<Bool>(false)
    private let onMoved: @Sendable (String) -> Void

    /// `onMoved` is told once, with the reason, on the thread that noticed.
    init(path: String, onMoved: @escaping @Sendable (String) -> Void) {
        self.path = path
        self.onMoved = onMoved
    }

    /// True once the file was seen moved; an atomic load.
    var hasMoved: Bool { moved.load(ordering: .acquiring) }

    /// Asks SQLite whether `connection`'s file is still the one at the path (one `stat`);
    /// true when it has moved, now or before.
    func check(_ connection: SQLiteConnection) -> Bool {
        if hasMoved { return true }
        guard connection.fileHasMoved() else { return false }
        if moved.exchange(true, ordering: .acquiringAndReleasing) == false { onMoved(reason) }
        return true
    }

    /// What a refused write answers.
    var error: RPCError {
        RPCError.unavailable("\(reason): nothing of this call was written; restart larder-server on the database "
                             + "file it should use")
    }

    var reason: String {
        "the database file \"\(path)\" was moved, replaced or deleted while larder-server ran"
    }
}
