import Foundation

/// Writes CSV in a dialect, quoting exactly the fields that need it, so `CSVReader` with the same
/// dialect reads back the same fields (rejects files, exports).
///
/// A field is quoted when it holds the delimiter, the quote, the escape, a line break, leading or
/// trailing blanks (when the dialect trims), a comment character at the start of a line, or text equal
/// to a null marker; null is written as the first null marker. Output is UTF-8.
///
/// ```swift
/// let writer = try CSVWriter(sink: FileByteSink(path: "rejects.csv"))
/// try writer.write(["id", "reason"])
/// try writer.write(["17", "price \"12,5\" is not a number"])
/// try writer.flush()
/// ```
public final class CSVWriter {
    public let dialect: CSVDialect
    private let sink: ByteSink
    private let lineTerminator: [UInt8]
    private var pending: [UInt8] = []
    private let nullMarkers: Set<String>

    /// - Parameter lineTerminator: `"\n"` (default) or `"\r\n"`.
    /// - Throws: `ReaderError.Kind.invalidOption` for an invalid dialect.
    public init(sink: ByteSink, dialect: CSVDialect = CSVDialect(), lineTerminator: String = "\n") throws {
        try dialect.validate()
        self.dialect = dialect
        self.sink = sink
        self.lineTerminator = Array(lineTerminator.utf8)
        nullMarkers = Set(dialect.nullMarkers)
        pending.reserveCapacity(1 << 16)
    }

    /// Writes one record; `nil` fields are written as the first null marker (as an empty field when the
    /// dialect has none, which reads back as an empty string).
    /// - Throws: `ReaderError.Kind.invalidOption` when a field cannot be written in a dialect without
    ///   quote or escape characters; I/O errors of the sink.
    public func write(_ fields: [String?]) throws {
        for (index, field) in fields.enumerated() {
            if index > 0 { pending.append(dialect.delimiter) }
            guard let field else {
                pending += (dialect.nullMarkers.first ?? "").utf8
                continue
            }
            try append(field, first: index == 0, only: fields.count == 1)
        }
        pending += lineTerminator
        if pending.count >= 1 << 16 { try flush() }
    }

    /// Writes a record read from another input, field by field.
    public func write(_ record: Record) throws {
        try write(record.strings)
    }

    /// Hands buffered bytes to the sink.
    public func flush() throws {
        guard !pending.isEmpty else { return }
        try pending.withUnsafeBytes { try sink.write($0) }
        pending.removeAll(keepingCapacity: true)
    }

    private func append(_ field: String, first: Bool, only: Bool) throws {
        let bytes = Array(field.utf8)
        var needsQuotes = bytes.contains {
            $0 == dialect.delimiter || $0 == 10 || $0 == 13 || $0 == dialect.quote || $0 == dialect.escape
        }
        if dialect.trimsWhitespace, let head = bytes.first, let tail = bytes.last,
            [32, 9].contains(head) || [32, 9].contains(tail)
        {
            needsQuotes = true
        }
        if first, let comment = dialect.comment, bytes.first == comment { needsQuotes = true }
        if nullMarkers.contains(field) { needsQuotes = true }
        if only, bytes.isEmpty { needsQuotes = true }  // an empty line would be skipped as blank
        guard needsQuotes else {
            pending += bytes
            return
        }
        guard let quote = dialect.quote else {
            guard let escape = dialect.escape, !nullMarkers.contains(field), !bytes.isEmpty else {
                throw ReaderError(
                    .invalidOption,
                    "the field \(field.debugDescription) cannot be written in a dialect without a quote or escape "
                        + "character"
                )
            }
            for byte in bytes {
                if byte == dialect.delimiter || byte == 10 || byte == 13 || byte == escape { pending.append(escape) }
                pending.append(byte)
            }
            return
        }
        pending.append(quote)
        for byte in bytes {
            if byte == quote {
                pending.append(dialect.escape ?? quote)
            } else if let escape = dialect.escape, byte == escape {
                pending.append(escape)
            }
            pending.append(byte)
        }
        pending.append(quote)
    }
}
