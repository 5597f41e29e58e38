import CZlib

/// A gzip decompressor over zlib's streaming `inflate`, one member at a time.
///
/// zlib checks each member's CRC-32 and length trailer; a mismatch is an error, never silent damage.
/// After a member ends (`endOfMember`), call `startNextMember()` to go on with a multi-member file.
///
/// ```swift
/// let inflater = try GzipInflater()
/// let step = try inflater.inflate(input: compressed, output: buffer)
/// ```
public final class GzipInflater {
    private var stream = z_stream()

    /// The outcome of one `inflate` call.
    public struct Step: Sendable {
        /// Input bytes consumed.
        public var consumed: Int
        /// Output bytes written.
        public var produced: Int
        /// Whether the member's trailer was read (and its checksum verified).
        public var endOfMember: Bool
    }

    /// - Throws: `GzipError` when zlib cannot start (out of memory).
    public init() throws {
        // 16 + MAX_WBITS: gzip wrapper only, with header and trailer checks.
        let status = inflateInit2_(&stream, 16 + MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw GzipError(code: status, message: "zlib could not start a decompressor") }
    }

    deinit { inflateEnd(&stream) }

    /// Decompresses from `input` into `output` until one of them is used up or the member ends.
    /// - Throws: `GzipError` for a corrupt stream or a checksum mismatch.
    public func inflate(input: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer) throws -> Step {
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        stream.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.avail_out = uInt(output.count)
        let status = CZlib.inflate(&stream, Z_NO_FLUSH)
        let step = Step(
            consumed: input.count - Int(stream.avail_in), produced: output.count - Int(stream.avail_out),
            endOfMember: status == Z_STREAM_END)
        stream.next_in = nil
        stream.next_out = nil
        switch status {
        case Z_OK, Z_STREAM_END: return step
        case Z_BUF_ERROR where step.consumed > 0 || step.produced > 0 || input.isEmpty: return step
        default:
            let detail = stream.msg.map { String(cString: $0) } ?? "code \(status)"
            throw GzipError(code: status, message: "the gzip data is corrupt (\(detail))")
        }
    }

    /// Prepares for the next member of a multi-member file.
    public func startNextMember() {
        inflateReset(&stream)
    }
}
