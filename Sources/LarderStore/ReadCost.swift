/// What a read costs, which decides the thread it may run on (`Store.read(_:_:completion:)`).
public enum ReadCost: Sendable {
    /// A lookup of one row by its key: a few microseconds, less than waking a reader
    /// thread and being woken back costs.
    case point
    /// Anything that may visit many rows (a list, a summary): on a reader thread.
    case query
}
