import CEpoll

/// The process's heap, as malloc keeps it.
public enum ProcessMemory {
    /// Returns the free pages of every malloc arena to the system, so the resident
    /// size falls back once big buffers are freed. Takes about a millisecond per
    /// hundred megabytes of heap; call it rarely.
    public static func returnFreeMemory() {
        _ = cepoll_trim_free_memory()
    }
}
