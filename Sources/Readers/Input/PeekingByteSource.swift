import Foundation
import Synchronization

/// A source whose first bytes can be looked at before they are read (for format detection).
public final class PeekingByteSource: ByteSource {
    private let base: ByteSource
    private var pending: [UInt8] = []
    public var name: String { base.name }

    public init(_ base: ByteSource) { self.base = base }

    /// Up to `count` bytes from the start of what `read` will return next (fewer at the end of input).
    public func peek(_ count: Int) throws -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while pending.count < count {
            let n = try chunk.withUnsafeMutableBytes { try base.read(into: $0) }
            if n == 0 { break }
            pending += chunk[..<n]
        }
        return Array(pending.prefix(count))
    }

    /// Drops the next `count` bytes (after `peek` showed them).
    public func skip(_ count: Int) throws {
        _ = try peek(count)
        pending.removeFirst(min(count, pending.count))
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard !pending.isEmpty else { return try base.read(into: buffer) }
        let n = min(buffer.count, pending.count)
        pending.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: n) }
        pending.removeFirst(n)
        return n
    }
}
