import Drivers

extension XMLPushParser {
    /// Reads the next chunk of `source` into the parser, ending the document at the end of the input.
    /// Returns `false` once the document has ended.
    /// - Throws: `ReaderError`: the source's I/O errors; malformed XML with line and column.
    public func feedNextChunk(from source: ByteSource, buffer: inout [UInt8]) throws -> Bool {
        let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
        do {
            if n == 0 {
                try finish()
                return false
            }
            try buffer.withUnsafeBytes { try feed(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
            return true
        } catch let error as XMLParseError {
            throw ReaderError(
                .malformedXML, error.message,
                at: SourcePosition(file: source.name, line: error.line, column: error.column), underlying: error)
        }
    }
}
