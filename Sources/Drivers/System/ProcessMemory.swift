import CMalloc

/// How the process's allocator gives memory back to the system.
public enum ProcessMemory {
    /// Blocks of `bytes` and more are mapped on their own and given back to the system as soon as
    /// they are freed. By default glibc raises that threshold (up to 32 MiB) each time such a block
    /// is freed, and keeps the blocks of that size freed later in its heaps: a run of huge records
    /// then holds the buffers of records long gone (30 records of 60 MiB: 336 MB, not 227).
    public static func returnFreedBlocks(ofAtLeast bytes: Int) {
        _ = mallopt(M_MMAP_THRESHOLD, Int32(clamping: bytes))
    }

    /// Free memory at the top of a heap is given back to the system only beyond `bytes`. glibc's
    /// default (128 KiB, fixed once the mapping threshold is set) has each thread's heap give back
    /// and fault in again the memory of every batch (hundreds of `madvise` calls and a page fault
    /// per page in a run); what is kept is reused by the next batch, so the peak does not grow.
    public static func keepFreedMemory(upTo bytes: Int) {
        _ = mallopt(M_TRIM_THRESHOLD, Int32(clamping: bytes))
    }
}
