/// A map from call ids (a lean `call_id`, an HTTP/2 stream id) to values, for the per-connection
/// tables that every call reaches several times on its way through the server.
///
/// Open addressing with linear probing and a seeded multiplicative hash: a lookup is a multiply
/// and a compare or two, where a `Dictionary` runs SipHash on every access. The seed is random
/// per process, so a peer choosing its ids cannot aim them at one slot without knowing it, and
/// a table holds at most a connection's calls in flight, which bounds any probe sequence; the
/// load factor stays at most a half. Id 0 is never a key (no call has it: the lean protocol
/// refuses it, and HTTP/2's stream 0 is the connection).
public struct CallIDMap<Value> {
    /// 0 marks a free slot.
    @usableFromInline var keys: [UInt64] = []
    @usableFromInline var values: [Value?] = []
    /// 64 minus log2 of the capacity: the hash is the product's top bits.
    @usableFromInline var shift: UInt64 = 64
    @usableFromInline var storedCount = 0
    /// `callIDMapSeed`, copied so that a lookup reads a field rather than a lazy global.
    @usableFromInline let seed: UInt64

    @inlinable
    public init() { seed = callIDMapSeed }

    @inlinable
    public var count: Int { storedCount }

    @inlinable
    public var isEmpty: Bool { count == 0 }

    /// The value under `key`; setting nil removes it.
    @inlinable
    public subscript(key: UInt64) -> Value? {
        get {
            guard let slot = slot(of: key) else { return nil }
            return values[slot]
        }
        set {
            if let newValue {
                insert(newValue, forKey: key)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    @inlinable
    public func contains(_ key: UInt64) -> Bool { slot(of: key) != nil }

    /// Sets the value under `key`, replacing any; returns the value replaced.
    @inlinable
    @discardableResult
    public mutating func insert(_ value: Value, forKey key: UInt64) -> Value? {
        precondition(key != 0, "call id 0 is never a key of a CallIDMap")
        if (count + 1) * 2 > keys.count { grow() }
        var slot = home(of: key)
        while keys[slot] != 0 {
            if keys[slot] == key {
                let old = values[slot].take()
                values[slot] = value
                return old
            }
            slot = (slot + 1) & (keys.count - 1)
        }
        keys[slot] = key
        values[slot] = value
        storedCount += 1
        return nil
    }

    /// Removes the value under `key` and returns it.
    @inlinable
    @discardableResult
    public mutating func removeValue(forKey key: UInt64) -> Value? {
        guard var hole = slot(of: key) else { return nil }
        let removed = values[hole].take()
        storedCount -= 1
        // Backward-shift deletion: the entries after the hole that probed past it move back,
        // so every probe sequence stays unbroken and no tombstones pile up.
        let mask = keys.count - 1
        var next = (hole + 1) & mask
        while keys[next] != 0 {
            let home = home(of: keys[next])
            // Move the entry at `next` into the hole unless its home lies in (hole, next].
            let stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next)
            if !stays {
                keys[hole] = keys[next]
                values[hole] = values[next].take()
                hole = next
            }
            next = (next + 1) & mask
        }
        keys[hole] = 0
        return removed
    }

    /// Calls `body` with every key and its value, in no particular order; `body` must not
    /// change the map.
    @inlinable
    public func forEach(_ body: (UInt64, Value) throws -> Void) rethrows {
        for slot in keys.indices where keys[slot] != 0 {
            if let value = values[slot] { try body(keys[slot], value) }
        }
    }

    // MARK: - Slots

    @inlinable
    func home(of key: UInt64) -> Int {
        Int(truncatingIfNeeded: ((key ^ seed) &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    @inlinable
    func slot(of key: UInt64) -> Int? {
        guard count > 0, key != 0 else { return nil }
        var slot = home(of: key)
        while true {
            let found = keys[slot]
            if found == key { return slot }
            if found == 0 { return nil }
            slot = (slot + 1) & (keys.count - 1)
        }
    }

    @usableFromInline
    mutating func grow() {
        let capacity = max(16, keys.count * 2)
        let oldKeys = keys
        var oldValues = values
        keys = Array(repeating: 0, count: capacity)
        values = Array(repeating: nil, count: capacity)
        shift = UInt64(64 - capacity.trailingZeroBitCount)
        storedCount = 0
        for index in oldKeys.indices where oldKeys[index] != 0 {
            if let value = oldValues[index].take() { insert(value, forKey: oldKeys[index]) }
        }
    }
}

extension CallIDMap: Sendable where Value: Sendable {}

/// The process's hash seed for `CallIDMap`, drawn once.
@usableFromInline let callIDMapSeed = UInt64.random(in: .min ... .max)

/// A set of call ids, as cheap to reach as `CallIDMap`.
public struct CallIDSet: Sendable {
    @usableFromInline var map = CallIDMap<Void>()

    @inlinable
    public init() {}

    @inlinable
    public var count: Int { map.count }
    @inlinable
    public var isEmpty: Bool { map.isEmpty }

    @inlinable
    public func contains(_ id: UInt64) -> Bool { map.contains(id) }

    /// Adds `id`; false when it was there already.
    @inlinable
    @discardableResult
    public mutating func insert(_ id: UInt64) -> Bool { map.insert((), forKey: id) == nil }

    /// Removes `id`; false when it was not there.
    @inlinable
    @discardableResult
    public mutating func remove(_ id: UInt64) -> Bool { map.removeValue(forKey: id) != nil }
}
