import Foundation

/// Where a writer's bytes go.
public protocol ByteSink: AnyObject {
    func write(_ bytes: UnsafeRawBufferPointer) throws
}

/// Writes to a file (created or truncated) or to standard output (`-`), through the system's calls:
/// a failure says the system's reason (`POSIXError` under the `ReaderError`).
public final class FileByteSink: ByteSink {
    private let descriptor: Int32
    private let path: String

    /// - Throws: `ReaderError.Kind.io` when the file cannot be created.
    public init(path: String) throws {
        self.path = path
        if path == "-" {
            descriptor = STDOUT_FILENO
        } else {
            descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw Self.failure("cannot create", path) }
        }
    }

    deinit { if descriptor != STDOUT_FILENO { close(descriptor) } }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let written = Foundation.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw Self.failure("cannot write", path)
            }
            offset += written
        }
    }

    /// The failure of the call that just failed: `errno`'s reason, and the `POSIXError` under it.
    private static func failure(_ what: String, _ path: String) -> ReaderError {
        let code = errno
        return ReaderError(
            .io, "\(what) \(path): \(String(cString: strerror(code)))",
            underlying: POSIXErrorCode(rawValue: code).map { POSIXError($0) })
    }
}

/// Collects written bytes in memory.
public final class MemoryByteSink: ByteSink {
    public private(set) var bytes: [UInt8] = []
    public init() {}
    public func write(_ bytes: UnsafeRawBufferPointer) throws { self.bytes += bytes }
    public var text: String { String(decoding: bytes, as: UTF8.self) }
}
