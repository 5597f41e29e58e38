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
}
