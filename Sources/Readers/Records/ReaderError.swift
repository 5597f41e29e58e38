/// Bad input or a failed read: what went wrong, and where.
///
/// The description is one sentence for a cron log, position first:
/// `orders.csv:12:7 (record 11): the record has 5 fields, the header has 4`.
/// A reader that threw a data error (`isRecoverable`) can go on with `next()` from the following record;
/// I/O and compression errors end the input.
public struct ReaderError: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The file could not be opened or read.
        case io
        /// Gzip data that is corrupt, truncated or fails its checksum.
        case compression
        /// Bytes that are not valid in the input's text encoding.
        case encoding
        /// A CSV record with more or fewer fields than the header (or first record).
        case raggedRow
        /// A quoted CSV field still open at the end of the input.
        case unterminatedQuote
        /// A quote where CSV does not allow one (inside an unquoted field, or text after a closing quote).
        case misplacedQuote
        /// A record larger than the reader's limit (often an unterminated quote in a huge file).
        case recordTooLarge
        /// XML that is not well-formed.
        case malformedXML
        /// A JSON Lines line that is not one JSON object of scalar members (the next line is read on).
        case malformedJSON
        /// A SQL statement the dump reader cannot parse.
        case sqlSyntax
        /// A SQL dump statement that changes data in a way the reader cannot apply (UPDATE, DELETE,
        /// ALTER TABLE, a ROLLBACK): the rows read would not be what SQLite keeps.
        case unsupportedStatement
        /// An input that ends where it cannot: a SQL dump cut inside a statement, or whose
        /// transaction never commits.
        case truncated
        /// A SQLite database that cannot be read.
        case sqlite
        /// A reader option that makes no sense (an unbound namespace prefix, an empty delimiter, ...).
        case invalidOption
    }

    public let kind: Kind
    public let message: String
    public let position: SourcePosition?
    /// Whether the reader can continue with the next record after this error: true for errors in one
    /// record (a ragged row, a misplaced quote, invalid text in a field, a bad SQL statement), false
    /// where the input itself cannot go on (I/O, compression, a broken text stream, malformed XML).
    public let isRecoverable: Bool
    /// The error that caused this one, when there was one (a `SQLiteError`, a `GzipError`, an
    /// `XMLParseError`, a Foundation file error).
    public let underlying: (any Error & Sendable)?

    public init(
        _ kind: Kind, _ message: String, at position: SourcePosition? = nil, recoverable: Bool? = nil,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.kind = kind
        self.message = message
        self.position = position
        self.underlying = underlying
        switch kind {
        case .encoding, .raggedRow, .misplacedQuote, .sqlSyntax, .malformedJSON: isRecoverable = recoverable ?? true
        default: isRecoverable = recoverable ?? false
        }
    }

    public var description: String {
        guard let position else { return message }
        return "\(position): \(message)"
    }
}
