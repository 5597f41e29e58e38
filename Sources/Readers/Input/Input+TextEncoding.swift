extension Input {
    /// Wraps `source` so it yields UTF-8: skips a UTF-8 byte order mark, and converts UTF-16 (chosen, or
    /// announced by its byte order mark), ISO-8859-1 and Windows-1252 as the bytes stream.
    /// - Parameter lossy: replace bytes invalid in the encoding with U+FFFD instead of failing.
    public static func decodingText(
        _ source: ByteSource, encoding: TextEncoding, lossy: Bool = false
    ) throws -> ByteSource {
        let peek = source as? PeekingByteSource ?? PeekingByteSource(source)
        let head = try peek.peek(3)
        switch encoding {
        case .utf8, .utf16, .utf16LE, .utf16BE:
            if head.starts(with: [0xEF, 0xBB, 0xBF]), encoding == .utf8 {
                try peek.skip(3)
                return peek
            }
            if head.starts(with: [0xFF, 0xFE]), encoding != .utf16BE {
                try peek.skip(2)
                return TranscodingByteSource(peek, from: .utf16LE, lossy: lossy)
            }
            if head.starts(with: [0xFE, 0xFF]), encoding != .utf16LE {
                try peek.skip(2)
                return TranscodingByteSource(peek, from: .utf16BE, lossy: lossy)
            }
            if encoding == .utf8 { return peek }
            return TranscodingByteSource(peek, from: encoding == .utf16BE ? .utf16BE : .utf16LE, lossy: lossy)
        case .latin1, .windows1252:
            return TranscodingByteSource(peek, from: encoding, lossy: lossy)
        }
    }
}
