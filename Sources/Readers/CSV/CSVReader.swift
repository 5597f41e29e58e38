import Foundation

/// Streams CSV records: a byte-level tokenizer over a 1 MiB buffer, constant memory whatever the file size.
///
/// RFC 4180 quoting (delimiters, doubled quotes and CR/LF/CRLF inside quotes), any one-byte delimiter,
/// optional escape character, header row, comment lines, null markers, trimming; records end at LF, CRLF
/// or CR; blank lines are skipped. Fields are checked to be valid UTF-8 (after conversion from the
/// dialect's encoding). Errors name the line and byte column; after a ragged row, a misplaced quote or
/// invalid text the reader goes on with the next record.
///
/// ```swift
/// var reader = try CSVReader(path: "customers.csv.gz")    // gzip is detected by its magic bytes
/// while let record = try reader.next() {
///     print(record["email"] ?? "NULL", record.position)
/// }
/// ```
public final class CSVReader: RecordReader {
    public let dialect: CSVDialect
    /// The header's field names (`nil` without a header row).
    public var schema: RecordSchema? { tokenizer.schema }
    public let name: String

    // The tokenizer's state is a struct so the hot loops work on it in place, not through a class's
    // properties; unchecked exclusivity because the reader is used by one thread at a time (it is not
    // Sendable) and never hands the tokenizer out.
    @exclusivity(unchecked) private var tokenizer: CSVTokenizer

    /// Opens `path` (`-` for standard input; gzip detected) with `dialect`, reading the header row if it has one.
    /// - Throws: `ReaderError` when the file cannot be opened, the dialect is invalid, or the header is bad.
    public convenience init(path: String, dialect: CSVDialect = CSVDialect()) throws {
        try self.init(source: try Input.open(path), dialect: dialect)
    }

    /// Reads from `source` (already decompressed; text encoding is handled here).
    public init(source: ByteSource, dialect: CSVDialect = CSVDialect()) throws {
        try dialect.validate()
        self.dialect = dialect
        name = source.name
        tokenizer = CSVTokenizer(
            source: try Input.decodingText(source, encoding: dialect.encoding, lossy: dialect.lossyEncoding),
            dialect: dialect)
        if dialect.hasHeader, let header = try tokenizer.readRecord(countingRecord: false) {
            let names = Self.distinct(
                header.strings.enumerated().map { index, name in
                    // An empty or missing header name: the column's place.
                    if let name, !name.isEmpty { return name }
                    return "column \(index + 1)"
                })
            tokenizer.schema = RecordSchema(names: names)
            tokenizer.expectedFields = names.count
        }
    }

    deinit { tokenizer.deallocate() }

    /// Header names made distinct: a name taken by an earlier column gets `_2`, `_3`, … (`id,name,name`
    /// → `id`, `name`, `name_2`), so every column can be named.
    static func distinct(_ names: [String]) -> [String] {
        var taken = Set<String>(), result: [String] = []
        for name in names {
            var unique = name, n = 2
            while taken.contains(unique.lowercased()) {
                unique = "\(name)_\(n)"
                n += 1
            }
            taken.insert(unique.lowercased())
            result.append(unique)
        }
        return result
    }

    public func next() throws -> Record? {
        try tokenizer.readRecord(countingRecord: true)
    }
}
