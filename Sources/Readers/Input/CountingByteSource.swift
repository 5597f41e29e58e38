import Foundation
import Synchronization

/// Counts the bytes read from a source (the file's bytes, before decompression when it wraps the
/// file): how a run shows its progress and estimates the time left. `bytesRead` may be read from
/// any thread while another reads the source.
public final class CountingByteSource: ByteSource, @unchecked Sendable {
    // @unchecked: `base` is used only by the reading thread; `count` is atomic.
    private let base: ByteSource
    private let count = Atomic<Int64>(0)

    public init(_ base: ByteSource) { self.base = base }

    public var name: String { base.name }
    public var bytesRead: Int64 { count.load(ordering: .relaxed) }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = try base.read(into: buffer)
        count.add(Int64(n), ordering: .relaxed)
        return n
    }
}
