import Foundation
import Synchronization

/// Bytes of a file or of standard input, read with `read(2)`.
///
/// Standard input (`-`) and named pipes (FIFOs) can be read once only: each is copied, the first time
/// it is opened, into an unlinked temporary file, and every opening reads that copy from its start —
/// a command that reads its input more than once (the format and dialect sniffed, then the import)
/// reads all of it each time, and no temporary file is left or named.
public final class FileByteSource: ByteSource {
    public let name: String
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    /// For standard input: the next offset to read in the copy (`pread`).
    private var offset: Int?

    /// The copies of standard input (`-`) and of named pipes, by path, made when first opened.
    private static let copies = Mutex<[String: Int32]>([:])

    /// - Throws: `ReaderError.Kind.io` naming the path and the system's reason.
    public init(path: String) throws {
        name = path
        var status = stat()
        let isPipe = path == "-" || (stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO)
        let fd = isPipe ? try Self.copy(of: path) : Foundation.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw ReaderError(.io, "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        descriptor = fd
        ownsDescriptor = !isPipe
        offset = isPipe ? 0 : nil
    }

    deinit { if ownsDescriptor { close(descriptor) } }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            let n =
                offset.map { Foundation.pread(descriptor, base, buffer.count, off_t($0)) }
                ?? Foundation.read(descriptor, base, buffer.count)
            if n >= 0 {
                if let current = offset { offset = current + n }
                return n
            }
            if errno == EINTR { continue }
            throw ReaderError(.io, "cannot read \(name): \(String(cString: strerror(errno)))")
        }
    }

    /// The descriptor of the copy of standard input (`-`) or the named pipe at `path` (made on first
    /// use: read to its end, written to an unlinked temporary file).
    private static func copy(of path: String) throws -> Int32 {
        let shown = path == "-" ? "standard input" : path
        return try copies.withLock { copies in
            if let copy = copies[path] { return copy }
            let input = path == "-" ? 0 : Foundation.open(path, O_RDONLY | O_CLOEXEC)
            guard input >= 0 else {
                throw ReaderError(.io, "cannot open \(path): \(String(cString: strerror(errno)))")
            }
            defer { if input != 0 { close(input) } }
            var template = Array((NSTemporaryDirectory() + "/sluice-stdin-XXXXXX").utf8CString)
            let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            guard fd >= 0 else {
                throw ReaderError(.io, "cannot keep \(shown): \(String(cString: strerror(errno)))")
            }
            template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n = chunk.withUnsafeMutableBytes { Foundation.read(input, $0.baseAddress!, $0.count) }
                if n == 0 { break }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw ReaderError(.io, "cannot read \(shown): \(String(cString: strerror(errno)))")
                }
                var written = 0
                while written < n {
                    let w = chunk.withUnsafeBytes { Foundation.write(fd, $0.baseAddress! + written, n - written) }
                    guard w > 0 else {
                        throw ReaderError(
                            .io, "cannot keep \(shown) (temporary file): \(String(cString: strerror(errno)))")
                    }
                    written += w
                }
            }
            copies[path] = fd
            return fd
        }
    }
}
