import Drivers
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What an input file is, for telling later whether it is still the same file: its size and a
/// CRC-32 of every byte (as stored: a `.gz` input by its compressed bytes). A resumed
/// `commit: batches` run compares them with what the interrupted run read, so that it never skips
/// records of a different file that arrived under the same name.
///
/// Written as `<size>-<crc32 hex>` (`116483921-9f3a20c1`); standard input has none (`-`): what comes
/// in on it cannot be known before it is read.
public struct InputIdentity: Sendable, Equatable, CustomStringConvertible {
    public var size: Int64
    public var checksum: UInt32

    public init(size: Int64, checksum: UInt32) {
        self.size = size
        self.checksum = checksum
    }

    /// The identity of the file at `path` (read once, 1 MiB at a time).
    /// - Throws: `ReaderError` (`.io`) when it cannot be read.
    public init(ofFileAt path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ReaderError(.io, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var size: Int64 = 0, checksum: UInt32 = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else {
                throw ReaderError(.io, "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            checksum = buffer.withUnsafeBytes {
                Zlib.crc32(UnsafeRawBufferPointer(rebasing: $0[..<count]), after: checksum)
            }
            size += Int64(count)
        }
        self.init(size: size, checksum: checksum)
    }

    /// `<size>-<crc32 hex>`, or `nil` when `text` is not one.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "-")
        guard parts.count == 2, let size = Int64(parts[0]), let checksum = UInt32(parts[1], radix: 16) else {
            return nil
        }
        self.init(size: size, checksum: checksum)
    }

    public var description: String { "\(size)-\(String(checksum, radix: 16))" }
}
