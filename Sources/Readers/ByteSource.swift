import Drivers
import Foundation
import Synchronization

/// A stream of bytes that a reader pulls from: a file, standard input, or a decoding layer over another
/// source (gzip, text encodings).
public protocol ByteSource: AnyObject {
    /// The name positions use: the path, or `-` for standard input.
    var name: String { get }
    /// Reads up to `buffer.count` bytes; returns 0 only at the end of the input.
    /// - Throws: `ReaderError` (`.io`, `.compression`, `.encoding`).
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

/// Opens inputs: a path or `-` for standard input; gzip is recognised by its magic bytes, whatever the
/// file is called.
public enum Input {
    /// Opens `path` (or standard input for `-`), unwrapping gzip when the data starts with its magic.
    /// - Throws: `ReaderError.Kind.io` when the file cannot be opened.
    public static func open(_ path: String) throws -> ByteSource {
        let file = try FileByteSource(path: path)
        return try decompressingIfNeeded(file)
    }

    /// Wraps `source` in a gzip decoder when its first two bytes are gzip's magic (1f 8b).
    public static func decompressingIfNeeded(_ source: ByteSource) throws -> ByteSource {
        let peek = PeekingByteSource(source)
        let head = try peek.peek(2)
        // Decompression runs a few chunks ahead on its own thread, beside the parsing.
        if head.count == 2, head[0] == 0x1f, head[1] == 0x8b { return ThreadedByteSource(try GzipByteSource(peek)) }
        return peek
    }
}

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

/// Decompresses gzip data as it is read: streaming, multi-member files supported; a corrupt or truncated
/// stream, a checksum mismatch, or trailing bytes that are not another member are errors.
public final class GzipByteSource: ByteSource {
    private let base: ByteSource
    private let inflater: GzipInflater
    private let input: UnsafeMutableRawBufferPointer
    private var inputStart = 0, inputEnd = 0
    private var compressedOffset = 0
    private var baseAtEnd = false
    private var finished = false
    /// Whether the current member is complete (so ending here is fine).
    private var betweenMembers = false
    public var name: String { base.name }

    public init(_ base: ByteSource) throws {
        self.base = base
        do { inflater = try GzipInflater() } catch { throw ReaderError(.compression, "\(base.name): \(error)") }
        input = .allocate(byteCount: 1 << 18, alignment: 16)
    }

    deinit { input.deallocate() }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard buffer.count > 0 else { return 0 }
        while !finished {
            if inputStart == inputEnd, !baseAtEnd {
                inputStart = 0
                inputEnd = try base.read(into: input)
                if inputEnd == 0 { baseAtEnd = true }
            }
            if inputStart == inputEnd, baseAtEnd {
                if betweenMembers {
                    finished = true
                    return 0
                }
                throw ReaderError(
                    .compression,
                    "\(name): the gzip data is truncated (the input ends inside a compressed member, after "
                        + "\(compressedOffset) compressed bytes)"
                )
            }
            if betweenMembers {
                // Another member must follow: its magic bytes, or nothing.
                guard input.load(fromByteOffset: inputStart, as: UInt8.self) == 0x1f else {
                    throw ReaderError(
                        .compression,
                        "\(name): unexpected bytes after gzip member at compressed byte \(compressedOffset) (not "
                            + "another gzip member)"
                    )
                }
                inflater.startNextMember()
                betweenMembers = false
            }
            let step: GzipInflater.Step
            do {
                step = try inflater.inflate(
                    input: UnsafeRawBufferPointer(rebasing: input[inputStart..<inputEnd]), output: buffer)
            } catch {
                throw ReaderError(.compression, "\(name): \(error), near compressed byte \(compressedOffset)")
            }
            inputStart += step.consumed
            compressedOffset += step.consumed
            if step.endOfMember { betweenMembers = true }
            if step.produced > 0 { return step.produced }
            if step.consumed == 0, !step.endOfMember, inputStart < inputEnd {
                throw ReaderError(
                    .compression, "\(name): the gzip data is corrupt near compressed byte \(compressedOffset)")
            }
        }
        return 0
    }
}

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

extension Input {
    /// Like `open(_:)`, also returning the counter of the file's bytes read (compressed bytes for gzip).
    public static func openCounting(_ path: String) throws -> (source: ByteSource, counter: CountingByteSource) {
        let counter = CountingByteSource(try FileByteSource(path: path))
        return (try decompressingIfNeeded(counter), counter)
    }
}
