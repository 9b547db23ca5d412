#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LarderStore
import LarderSystem

/// Where each meal record is stored: its id → its eaten_at (`eaten_at_ms`,
/// `eaten_at_ns`), the rest of the table's primary key `(eaten_at_ms, eaten_at_ns, id)`.
/// Held in memory instead of a unique index on `meal_records(id)`.
///
/// Ids are random UUIDs, so such an index took each create to a random page of it:
/// with many creates per transaction, every one of them wrote a page of its own to
/// the WAL and later to the database — about half of what a create cost. The table
/// and its category index grow at one end (new records are the newest), so without
/// it a transaction writes a few pages, however many records it holds.
///
/// The index is rebuilt from the table when the store opens (a scan of the narrowest
/// index), so the database alone stays the truth; it costs about 50 bytes of memory
/// per record. Because it lives in one process, `SQLiteStore` locks the database file
/// against a second server.
///
/// The writer *stages* its changes while its transaction runs and *publishes* them
/// after the commit; readers see both (`Entry`), so a reader whose snapshot is on
/// either side of a commit finds the record under one of the two keys.
final class MealKeyIndex: Sendable {
    /// A change of the writer's open transaction.
    enum Staged: Equatable, Sendable {
        /// The record is (now) at this eaten_at.
        case at(StoreInstant)
        /// The record is deleted.
        case deleted
    }

    /// What a reader sees of one id.
    struct Entry: Equatable, Sendable {
        /// Where the record is as of the last published commit; nil when it did not exist.
        var committed: StoreInstant?
        /// The writer's change in flight (possibly committed, not yet published).
        var staged: Staged?

        /// Nothing committed and nothing in flight: no such record.
        var isEmpty: Bool { committed == nil && staged == nil }
    }

    private struct State {
        var committed: [ScrambledKey: StoreInstant] = [:]
        var staged: [ScrambledKey: Staged] = [:]
    }

    /// One part of the index, with its own lock. Parts keep the pause of a dictionary that
    /// grows short: doubling one of 1.5 million entries took ~100 ms under the lock every
    /// reader and the writer wait on; a part holds 1/64 of them.
    private final class Shard: Sendable {
        let state = LockedValue(State())
    }

    private static let shardBits = 6
    private let shards: [Shard]
    /// Random per index: what keys are scrambled with.
    private let secret: (UInt64, UInt64)

    init() {
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { buffer in
            if let base = buffer.baseAddress { arc4random_buf(base, buffer.count) }
        }
        secret = words
        shards = (0..<(1 << Self.shardBits)).map { _ in Shard() }
    }

    /// A key as the dictionaries hold it: its words mixed with the index's secret, so
    /// that the cheap hash below cannot be steered into collisions (or into one part) by
    /// ids that clients choose. SipHash, Swift's default, was most of a lookup's cost and
    /// 40% of rebuilding the index; this is a folded multiply of the two words, as
    /// foldhash and Go's maps do.
    private struct ScrambledKey: Hashable {
        let first: UInt64
        let second: UInt64

        func hash(into hasher: inout Hasher) {
            hasher.combine(first)
            hasher.combine(second)
        }

        func _rawHashValue(seed: Int) -> Int {
            let product = (first ^ UInt64(UInt(bitPattern: seed))).multipliedFullWidth(by: second | 1)
            return Int(bitPattern: UInt(truncatingIfNeeded: product.high ^ product.low))
        }
    }

    @inline(__always)
    private func scrambled(_ key: MealKey) -> ScrambledKey {
        ScrambledKey(first: key.high ^ secret.0, second: key.low ^ secret.1)
    }

    /// The part that holds `key`: the top bits of its scrambled first word.
    @inline(__always)
    private func shard(_ key: ScrambledKey) -> Shard {
        shards[Int(truncatingIfNeeded: key.first >> UInt64(64 - Self.shardBits))]
    }

    /// Records that the committed table holds each key at its `eatenAt`; returns a key
    /// that was there already, if any.
    func load(_ rows: [(key: MealKey, eatenAt: StoreInstant)]) -> MealKey? {
        for row in rows {
            let key = scrambled(row.key)
            let added = shard(key).state.withLock { $0.committed.updateValue(row.eatenAt, forKey: key) == nil }
            if !added { return row.key }
        }
        return nil
    }

    /// How many records are committed.
    var count: Int { shards.reduce(0) { sum, shard in sum + shard.state.withLock { $0.committed.count } } }

    /// What readers see of `key`.
    func entry(_ key: MealKey) -> Entry {
        let key = scrambled(key)
        return shard(key).state.withLock { Entry(committed: $0.committed[key], staged: $0.staged[key]) }
    }

    /// Where the writer's own transaction sees `key`: its staged change, else the committed place.
    func writerView(_ key: MealKey) -> StoreInstant? {
        let key = scrambled(key)
        return shard(key).state.withLock { state in
            switch state.staged[key] {
            case .at(let eatenAt): eatenAt
            case .deleted: nil
            case nil: state.committed[key]
            }
        }
    }

    /// Sets (nil: clears) the staged change of `key`; returns the one it replaced,
    /// which undoes this call when staged again.
    @discardableResult
    func stage(_ key: MealKey, _ change: Staged?) -> Staged? {
        let key = scrambled(key)
        return shard(key).state.withLock { state in
            if let change { state.staged.updateValue(change, forKey: key) } else { state.staged.removeValue(forKey: key) }
        }
    }

    /// Makes the staged changes of `keys` committed; call after the transaction committed.
    func publish<Keys: Sequence<MealKey>>(_ keys: Keys) {
        for key in keys {
            let key = scrambled(key)
            shard(key).state.withLock { state in
                guard let change = state.staged.removeValue(forKey: key) else { return }
                switch change {
                case .at(let eatenAt): state.committed[key] = eatenAt
                case .deleted: state.committed.removeValue(forKey: key)
                }
            }
        }
    }
}
