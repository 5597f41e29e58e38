/// How a CSV file is written: separators, quoting, header, nulls, encoding. The defaults are RFC 4180
/// with a header row, in UTF-8.
///
/// ```swift
/// var dialect = CSVDialect()
/// dialect.delimiter = UInt8(ascii: ";")
/// dialect.nullMarkers = ["", "NULL"]
/// ```
public struct CSVDialect: Sendable, Hashable {
    /// The field separator: one ASCII byte (`,`, `;`, tab, `|`, ...).
    public var delimiter: UInt8 = UInt8(ascii: ",")
    /// The quote character; `nil` when fields are never quoted.
    public var quote: UInt8? = UInt8(ascii: "\"")
    /// An escape character (`\` in MySQL exports) that makes the next byte literal, inside or outside
    /// quotes. `nil`: a quote inside a quoted field is written doubled (RFC 4180).
    public var escape: UInt8?
    /// Whether the first record names the fields.
    public var hasHeader = true
    /// Lines starting with this byte are skipped (`#`); `nil`: no comment lines.
    public var comment: UInt8?
    /// Unquoted field texts that mean null (`""` makes empty unquoted fields null; a quoted `""` stays
    /// an empty string). Default: none.
    public var nullMarkers: [String] = []
    /// Whether spaces and tabs around fields (outside quotes) are dropped.
    public var trimsWhitespace = false
    public var encoding: TextEncoding = .utf8
    /// Replace bytes that are invalid in the encoding with U+FFFD instead of rejecting the record.
    public var lossyEncoding = false
    /// Accept quotes inside unquoted fields (`5" screen`) as ordinary characters instead of an error.
    public var lenientQuotes = false
    /// A record larger than this is an error (it bounds memory when a quote is never closed).
    public var maxRecordBytes = ReaderLimits.defaultRecordBytes

    public init() {}

    /// Tab-separated values: tab delimiter, no quoting.
    public static var tsv: CSVDialect {
        var dialect = CSVDialect()
        dialect.delimiter = UInt8(ascii: "\t")
        dialect.quote = nil
        return dialect
    }

    /// Checks that the separators can be told apart.
    /// - Throws: `ReaderError.Kind.invalidOption`.
    public func validate() throws {
        func fail(_ message: String) -> ReaderError { ReaderError(.invalidOption, "CSV dialect: \(message)") }
        let newline: Set<UInt8> = [10, 13]
        guard delimiter < 0x80, !newline.contains(delimiter) else {
            throw fail("the delimiter must be one ASCII character other than a line break")
        }
        if let quote {
            guard quote < 0x80, !newline.contains(quote), quote != delimiter else {
                throw fail("the quote must be an ASCII character other than the delimiter and line breaks")
            }
        }
        if let escape {
            guard escape < 0x80, !newline.contains(escape), escape != delimiter else {
                throw fail("the escape must be an ASCII character other than the delimiter and line breaks")
            }
        }
        if let comment {
            guard comment < 0x80, !newline.contains(comment), comment != delimiter, comment != quote else {
                throw fail("the comment character must differ from the delimiter, the quote and line breaks")
            }
        }
        guard maxRecordBytes > 0 else { throw fail("maxRecordBytes must be positive") }
    }
}
