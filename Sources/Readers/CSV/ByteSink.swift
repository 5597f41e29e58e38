import Foundation

/// Where a writer's bytes go.
public protocol ByteSink: AnyObject {
    func write(_ bytes: UnsafeRawBufferPointer) throws
}

/// Writes to a file (created or truncated) or to standard output (`-`).
public final class FileByteSink: ByteSink {
    private let handle: FileHandle
    private let path: String

    /// - Throws: `ReaderError.Kind.io` when the file cannot be created.
    public init(path: String) throws {
        self.path = path
        if path == "-" {
            handle = .standardOutput
        } else {
            guard FileManager.default.createFile(atPath: path, contents: nil),
                let handle = FileHandle(forWritingAtPath: path)
            else {
                throw ReaderError(.io, "cannot create \(path)")
            }
            self.handle = handle
        }
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        do { try handle.write(contentsOf: Data(bytes)) } catch {
            throw ReaderError(.io, "cannot write \(path): \(error)", underlying: error)
        }
    }
}

/// Collects written bytes in memory.
public final class MemoryByteSink: ByteSink {
    public private(set) var bytes: [UInt8] = []
    public init() {}
    public func write(_ bytes: UnsafeRawBufferPointer) throws { self.bytes += bytes }
    public var text: String { String(decoding: bytes, as: UTF8.self) }
}
