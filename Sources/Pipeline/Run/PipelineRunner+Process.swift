import Drivers

extension PipelineRunner {
    /// Sets up a process that runs imports (the `sluice` command): freed blocks of 4 MiB and more go
    /// back to the system at once, so a run's memory follows the records in flight, not the largest
    /// records it met (`ProcessMemory`).
    public static func configureProcessMemory() {
        ProcessMemory.returnFreedBlocks(ofAtLeast: 4 << 20)
        ProcessMemory.keepFreedMemory(upTo: 32 << 20)
    }
}
