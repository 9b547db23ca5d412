import CEpoll

/// The process's heap, as malloc keeps it.
public enum ProcessMemory {
    /// Returns the free pages of every malloc arena to the system, so the resident
    /// size falls back once big buffers are freed. Takes about a millisecond per
    /// hundred megabytes of heap; call it rarely.
    public static func returnFreeMemory() {
        _ = cepoll_trim_free_memory()
    }

    /// Keeps freed blocks of less than `bytes` in the heap for reuse, and gives the heap's free
    /// top back to the system only once it exceeds `bytes` (glibc's `M_MMAP_THRESHOLD` and
    /// `M_TRIM_THRESHOLD`, fixed). By default glibc starts both at 128 KiB and raises them as
    /// big blocks are freed, so a server making and freeing half-megabyte replies by the
    /// hundred a second kept giving their pages back and faulting them in again (hundreds of
    /// page faults per reply). Call it once, before other threads start; false if malloc
    /// refused (another allocator, or a sanitizer's).
    @discardableResult
    public static func holdFreedBlocks(upTo bytes: Int) -> Bool {
        cepoll_fix_heap_thresholds(Int32(clamping: bytes)) == 1
    }
}
