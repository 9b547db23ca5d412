#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Which thread, if any, owns something: the owner's `pthread_self()` in an atomic word
/// (0: none). Claiming and handing over order the owner's memory accesses (acquire on
/// claim, release on hand-over); asking "is it me?" needs no lock.
public struct ThreadOwner: ~Copyable, Sendable {
    private let word = Atomic<UInt>(0)

    public init() {}

    /// True on the owning thread.
    public var isCurrentThread: Bool { word.load(ordering: .acquiring) == Self.currentThread }

    /// True when no thread owns it.
    public var isUnowned: Bool { word.load(ordering: .acquiring) == 0 }

    /// Makes the calling thread the owner if there is none; false when a thread owns it already.
    public func claim() -> Bool {
        word.compareExchange(expected: 0, desired: Self.currentThread, ordering: .acquiringAndReleasing).exchanged
    }

    /// Makes the calling thread the owner, whoever owned it before.
    public func take() { word.store(Self.currentThread, ordering: .releasing) }

    /// Leaves it without an owner.
    public func release() { word.store(0, ordering: .releasing) }

    private static var currentThread: UInt { UInt(bitPattern: Int(bitPattern: pthread_self())) }
}
