import Foundation
import Synchronization

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

extension Input {
    /// Like `open(_:)`, also returning the counter of the file's bytes read (compressed bytes for gzip).
    public static func openCounting(_ path: String) throws -> (source: ByteSource, counter: CountingByteSource) {
        let counter = CountingByteSource(try FileByteSource(path: path))
        return (try decompressingIfNeeded(counter), counter)
    }
}
