import Drivers
import Foundation
import Synchronization

/// Bytes held in memory (tests, fuzzing, small inputs), optionally handed out in small chunks to
/// exercise a reader's buffer boundaries.
public final class MemoryByteSource: ByteSource {
    public let name: String
    private let bytes: [UInt8]
    private let chunkSize: Int
    private var offset = 0

    public init(_ bytes: [UInt8], name: String = "<memory>", chunkSize: Int = .max) {
        self.bytes = bytes
        self.name = name
        self.chunkSize = max(1, chunkSize)
    }

    public convenience init(_ text: String, name: String = "<memory>", chunkSize: Int = .max) {
        self.init(Array(text.utf8), name: name, chunkSize: chunkSize)
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = min(buffer.count, bytes.count - offset, chunkSize)
        guard n > 0 else { return 0 }
        bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: n) }
        offset += n
        return n
    }
}
