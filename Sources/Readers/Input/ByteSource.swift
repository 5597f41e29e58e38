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
