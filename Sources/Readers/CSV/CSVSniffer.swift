/// Guesses a CSV file's dialect from its first bytes: delimiter, quote, header, encoding (for `infer`
/// and `import --format auto`).
///
/// Each candidate delimiter (`,` `;` tab `|`) and quote (`"` `'`) is tried on the sample; the one whose
/// records most consistently have the same number (more than one) of fields wins. The first record is
/// a header when some column is numeric below it but not in it, or when its values all differ from
/// the type of the values below.
///
/// ```swift
/// let dialect = try CSVSniffer.sniff(path: "export.csv")
/// let reader = try CSVReader(path: "export.csv", dialect: dialect)
/// ```
public enum CSVSniffer {
    /// Sniffs the first 64 KiB of `path` (gzip is unwrapped).
    public static func sniff(path: String) throws -> CSVDialect {
        let (sample, isComplete) = try read(path)
        return sniff(sample: sample, isComplete: isComplete)
    }

    /// The first 64 KiB of `path` (gzip unwrapped), and whether that is all of it.
    private static func read(_ path: String) throws -> (sample: [UInt8], isComplete: Bool) {
        let source = try Input.open(path)
        var sample = [UInt8](repeating: 0, count: 1 << 16)
        var filled = 0
        while filled < sample.count {
            let n = try sample.withUnsafeMutableBytes {
                try source.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[filled...]))
            }
            if n == 0 { break }
            filled += n
        }
        return (Array(sample[..<filled]), filled < sample.count)
    }

    /// For a file sniffed to read double quotes as data: where a double quote opens a field of its
    /// first record that is never closed (why no dialect with the double quote read it), as line
    /// and column; `nil` otherwise. Import says so rather than reading quotes as data silently.
    public static func unclosedQuoteInFirstRecord(
        of path: String, dialect: CSVDialect
    ) throws -> (line: Int, column: Int)? {
        guard dialect.quote != UInt8(ascii: "\""), dialect.encoding != .utf16 else { return nil }
        var quoted = dialect
        quoted.quote = UInt8(ascii: "\"")
        quoted.hasHeader = false
        quoted.lossyEncoding = true
        let reader = try CSVReader(source: MemoryByteSource(try read(path).sample), dialect: quoted)
        do {
            _ = try reader.next()
        } catch let error as ReaderError where error.kind == .unterminatedQuote {
            guard let position = error.position, position.line == 1 else { return nil }
            return (position.line, position.column)
        }
        return nil
    }

    /// Where the first bytes of `path` (the sample `sniff` reads) stop being valid UTF-8, as line and
    /// byte column; `nil` when they are valid.
    public static func firstInvalidUTF8(inSampleOf path: String) throws -> (line: Int, column: Int)? {
        let source = try Input.open(path)
        var sample = [UInt8](repeating: 0, count: 1 << 16)
        let count = try sample.withUnsafeMutableBytes { try source.read(into: $0) }
        let bytes = sample[..<count]
        guard let offset = bytes.withUnsafeBytes({ UTF8Validation.firstInvalidByte($0) }) else { return nil }
        let before = bytes[..<offset]
        let lineStart = (before.lastIndex(of: 10).map { $0 + 1 }) ?? 0
        return (before.count { $0 == 10 } + 1, offset - lineStart + 1)
    }

    /// Sniffs `sample`; when it is not the whole input, its last, possibly cut, line is ignored.
    public static func sniff(sample: [UInt8], isComplete: Bool = true) -> CSVDialect {
        var bytes = sample
        var dialect = CSVDialect()
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
            dialect.encoding = .utf16
            return dialect  // the delimiter search below works on UTF-8 bytes; keep the defaults
        }
        if !isComplete, let lastBreak = bytes.lastIndex(of: 10) { bytes = Array(bytes[...lastBreak]) }
        // Not UTF-8: Windows-1252, unless it is UTF-8 with a few bad bytes (then those rows are
        // rejected with their places, and the rest keeps its characters).
        if bytes.withUnsafeBytes({ UTF8Validation.firstInvalidByte($0) != nil && !UTF8Validation.isMostlyUTF8($0) }) {
            dialect.encoding = .windows1252
        }

        var best: (score: Double, dialect: CSVDialect, rows: [[String?]])?
        for quote in [UInt8(ascii: "\""), UInt8(ascii: "'")] {
            for delimiter in [UInt8(ascii: ","), UInt8(ascii: ";"), 9, UInt8(ascii: "|")] {
                var candidate = dialect
                candidate.delimiter = delimiter
                candidate.quote = quote
                candidate.hasHeader = false
                candidate.lossyEncoding = true
                let rows = records(bytes, candidate)
                guard rows.count > 0 else { continue }
                var counts: [Int: Int] = [:]
                for row in rows { counts[row.count, default: 0] += 1 }
                let (width, frequency) = counts.max {
                    $0.value < $1.value || ($0.value == $1.value && $0.key < $1.key)
                }!
                guard width > 1 else { continue }
                // Consistency first; among equals, more fields; the double quote is preferred.
                let score =
                    Double(frequency) / Double(rows.count) + Double(width) * 1e-4
                    + (quote == UInt8(ascii: "\"") ? 1e-6 : 0)
                if best == nil || score > best!.score { best = (score, candidate, rows) }
            }
        }
        guard var chosen = best else {
            dialect.hasHeader = true
            return dialect
        }
        chosen.dialect.lossyEncoding = false
        chosen.dialect.hasHeader = hasHeader(chosen.rows)
        return chosen.dialect
    }

    private static func records(_ bytes: [UInt8], _ dialect: CSVDialect) -> [[String?]] {
        guard let reader = try? CSVReader(source: MemoryByteSource(bytes), dialect: dialect) else { return [] }
        var rows: [[String?]] = []
        while rows.count < 200 {
            do {
                guard let record = try reader.next() else { break }
                rows.append(record.strings)
            } catch let error as ReaderError where error.isRecoverable {
                rows.append([])  // an inconsistent row counts against this dialect
            } catch {
                break
            }
        }
        return rows
    }

    private enum Kind { case integer, number, text }

    private static func kind(_ value: String) -> Kind {
        if Int64(value) != nil { return .integer }
        if Double(value) != nil { return .number }
        return .text
    }

    private static func hasHeader(_ rows: [[String?]]) -> Bool {
        guard rows.count > 1, let first = rows.first else { return true }
        let body = rows.dropFirst().filter { $0.count == first.count }
        guard !body.isEmpty else { return true }
        var votes = 0
        for column in first.indices {
            let values = body.compactMap { $0[column] }.filter { !$0.isEmpty }
            guard let head = first[column], !values.isEmpty else { continue }
            let kinds = Set(values.map(kind))
            if !kinds.contains(.text) {
                votes += kind(head) == .text ? 1 : -1
            } else if values.contains(head) {
                votes -= 1
            }
        }
        if votes != 0 { return votes > 0 }
        // All text: a header's values rarely repeat in the data and are rarely empty.
        return first.allSatisfy { $0.map { !$0.isEmpty } ?? false }
    }
}
