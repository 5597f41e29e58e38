import Drivers
import Foundation
import Synchronization

/// Bytes of a file or of standard input, read with `read(2)`.
public final class FileByteSource: ByteSource {
    public let name: String
    private let descriptor: Int32
    private let ownsDescriptor: Bool

    /// - Throws: `ReaderError.Kind.io` naming the path and the system's reason.
    public init(path: String) throws {
        name = path
        if path == "-" {
            descriptor = 0
            ownsDescriptor = false
        } else {
            let fd = Foundation.open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                throw ReaderError(.io, "cannot open \(path): \(String(cString: strerror(errno)))")
            }
            descriptor = fd
            ownsDescriptor = true
        }
    }

    deinit { if ownsDescriptor { close(descriptor) } }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            let n = Foundation.read(descriptor, base, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw ReaderError(.io, "cannot read \(name): \(String(cString: strerror(errno)))")
        }
    }
}
