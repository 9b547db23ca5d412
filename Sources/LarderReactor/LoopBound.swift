/// A value owned by an event loop: read and written only on the loop's thread.
///
/// Like swift-nio's `NIOLoopBoundBox`: the box may be captured by `@Sendable`
/// closures and held by `Sendable` types (it is what lets them be checked
/// `Sendable`), but every access to `value` must happen on `loop`'s thread
/// (`EventLoop.isOnLoopThread`). Debug builds check that on every access and
/// trap with a message naming the value's type; release builds compile the
/// check away, so an access costs what reading a stored property of a class does.
///
/// A closure running on another thread (a store completion, the metrics HTTP
/// thread) reaches loop-owned state by `loop.execute { ... }`, never directly.
public final class LoopBound<Value>: @unchecked Sendable {
    // Sendable by this type's one invariant, checked in debug builds: `storage` is
    // only touched on `loop`'s thread (or, before the loop first runs, by the
    // single thread setting it up).
    /// The loop whose thread owns the value.
    public let loop: EventLoop
    @usableFromInline var storage: Value

    /// Binds `value` to `loop`. Callable from any thread: the value is handed over.
    public init(_ value: Value, on loop: EventLoop) {
        self.loop = loop
        self.storage = value
    }

    /// The value; traps in debug builds when called off the loop's thread.
    @inlinable
    public var value: Value {
        get {
            loop.assertOnLoopThread("a LoopBound<\(Value.self)>")
            return storage
        }
        _modify {
            loop.assertOnLoopThread("a LoopBound<\(Value.self)>")
            yield &storage
        }
    }
}
