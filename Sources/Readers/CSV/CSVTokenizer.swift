import Foundation

/// The CSV state machine over a buffer of the input.
struct CSVTokenizer {
    let dialect: CSVDialect
    let source: ByteSource
    let capacity = 1 << 20
    let buffer: UnsafeMutablePointer<UInt8>
    var pos = 0, end = 0
    /// Offset in the (decoded) input of `buffer[0]`.
    var base = 0
    var atEOF = false
    var line = 1
    var lineStart = 0
    var pendingCR = false
    var recordNumber = 0
    var expectedFields: Int?
    var schema: RecordSchema? { didSet { context = Record.Context(file: fileName, schema: schema) } }
    let fileName: String
    var context: Record.Context
    var builder = RecordBuilder.forReader()
    /// Where the record being read starts.
    var recordLine = 1
    /// Bytes that end an unquoted run: delimiter, CR, LF, quote, escape.
    let special: UnsafeMutablePointer<Bool>
    let nullMarkers: [[UInt8]]
    let hasNullMarkers: Bool
    /// Offsets in the record of bytes that followed an escape character in the current unquoted field.
    var escapedAt: [Int] = []

    init(source: ByteSource, dialect: CSVDialect) {
        self.source = source
        self.dialect = dialect
        buffer = .allocate(capacity: capacity)
        special = .allocate(capacity: 256)
        special.initialize(repeating: false, count: 256)
        for byte in [dialect.delimiter, 10, 13] + [dialect.quote, dialect.escape].compactMap({ $0 }) {
            special[Int(byte)] = true
        }
        nullMarkers = dialect.nullMarkers.map { Array($0.utf8) }
        hasNullMarkers = !nullMarkers.isEmpty
        fileName = source.name
        context = Record.Context(file: fileName)
    }

    func deallocate() {
        buffer.deallocate()
        special.deallocate()
    }

    /// Makes `buffer[pos]` readable; `false` at the end of the input.
    @inline(__always) mutating func fill() throws -> Bool {
        if pos < end { return true }
        if atEOF { return false }
        // Read first: after a failed read the buffer's old bytes must not look unread.
        let n = try source.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: capacity))
        base += end
        pos = 0
        end = n
        if end == 0 { atEOF = true }
        return end > 0
    }

    @inline(__always) var offset: Int { base + pos }

    func position(line: Int, column: Int) -> SourcePosition {
        SourcePosition(file: fileName, line: line, column: column, record: recordNumber > 0 ? recordNumber : nil)
    }

    /// Appends `buffer[start..<pos]` to the record's bytes.
    @inline(__always) mutating func take(from start: Int) throws {
        let count = pos - start
        guard count > 0 else { return }
        if builder.length + count > dialect.maxRecordBytes {
            throw ReaderLimits(recordBytes: dialect.maxRecordBytes).tooLarge(
                "the record", at: position(line: recordLine, column: 1), hint: "; is a quote never closed?")
        }
        builder.append(buffer + start, count)
    }

    mutating func newLine() {
        line += 1
        lineStart = offset
    }

    /// Skips blank and comment lines; `false` at the end of the input.
    mutating func skipToRecord() throws -> Bool {
        while try fill() {
            let c = buffer[pos]
            if c == 10, pendingCR {
                pos += 1
                pendingCR = false
                lineStart = offset
                continue
            }
            pendingCR = false
            // A blank line is skipped, except where it is a record: a one-field record whose field is empty.
            if c == 10 || c == 13, expectedFields != 1 {
                pos += 1
                newLine()
                if c == 13 { pendingCR = true }
                continue
            }
            if let comment = dialect.comment, c == comment, offset == lineStart {
                try skipLine()
                continue
            }
            return true
        }
        return false
    }

    /// Skips to just past the end of the current line (for comments and error recovery).
    mutating func skipLine() throws {
        while try fill() {
            let c = buffer[pos]
            pos += 1
            if c == 10 {
                newLine()
                return
            }
            if c == 13 {
                newLine()
                pendingCR = true
                return
            }
        }
    }

    mutating func readRecord(countingRecord: Bool) throws -> Record? {
        guard try skipToRecord() else { return nil }
        if countingRecord { recordNumber += 1 }
        let firstLine = line
        recordLine = line
        builder.begin()
        let fast = fastRecord()
        if !fast {
            builder.begin()
            try slowRecord(firstLine: firstLine)
        }
        var record = Record(
            context: context, line: recordLine, column: 1, number: countingRecord ? recordNumber : nil,
            storage: builder.finish())
        try checkText(&record, wholeSpan: fast)
        try checkFieldCount(record)
        return record
    }

    /// The common case in one pass over the buffer: a record on one line, inside the buffer, whose
    /// quoted fields (if any) hold no quote, escape or line break. Its bytes are copied once and the
    /// fields point into them. Returns `false`, having changed nothing, for any other record.
    mutating func fastRecord() -> Bool {
        guard !dialect.trimsWhitespace, dialect.escape == nil else { return false }
        let delimiter = dialect.delimiter, hasQuote = dialect.quote != nil, quote = dialect.quote ?? delimiter
        let recordStart = pos
        let columnBase = base + recordStart - lineStart + 1
        // Eight bytes at a time: a byte equal to a sought one becomes zero after XOR, and the
        // has-zero-byte test flags it (and, past a true hit, maybe a neighbour: each hit is checked).
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let d = ones &* UInt64(delimiter), q = ones &* UInt64(quote), lf = ones &* 10, cr = ones &* 13
        var i = pos
        var fieldStart = i

        scan: while end - i >= 8 {
            let w = UnsafeRawPointer(buffer + i).loadUnaligned(as: UInt64.self)
            let x1 = w ^ d, x2 = w ^ q, x3 = w ^ lf, x4 = w ^ cr
            var hit = ((x1 &- ones) & ~x1 | (x2 &- ones) & ~x2 | (x3 &- ones) & ~x3 | (x4 &- ones) & ~x4) & highs
            while hit != 0 {
                let j = i + hit.trailingZeroBitCount >> 3
                hit &= hit &- 1
                let c = buffer[j]
                if c == delimiter {
                    addFastField(from: fieldStart, to: j, recordStart: recordStart, columnBase: columnBase)
                    fieldStart = j + 1
                } else if c == 10 || c == 13 {
                    addFastField(from: fieldStart, to: j, recordStart: recordStart, columnBase: columnBase)
                    builder.append(buffer + recordStart, j - recordStart)
                    pos = j + 1
                    newLine()
                    if c == 13 { pendingCR = true }
                    return true
                } else if hasQuote, c == quote {
                    // Only a field that starts with the quote, and holds no quote or line break, stays
                    // on this path; its closing quote must be followed by a delimiter or a line break.
                    guard j == fieldStart,
                        let close = memchr(buffer + j + 1, Int32(quote), end - j - 1)
                    else { return false }
                    let closing = close.assumingMemoryBound(to: UInt8.self) - buffer
                    guard closing + 1 < end else { return false }
                    let after = buffer[closing + 1]
                    guard after == delimiter || after == 10 || after == 13,
                        memchr(buffer + j + 1, 10, closing - j - 1) == nil,
                        memchr(buffer + j + 1, 13, closing - j - 1) == nil
                    else { return false }
                    builder.addField(
                        start: j + 1 - recordStart, end: closing - recordStart,
                        column: columnBase + fieldStart - recordStart, lineDelta: 0, isNull: false)
                    if after == delimiter {
                        fieldStart = closing + 2
                        i = fieldStart
                        continue scan
                    }
                    builder.append(buffer + recordStart, closing + 1 - recordStart)
                    pos = closing + 2
                    newLine()
                    if after == 13 { pendingCR = true }
                    return true
                }
                // Otherwise a neighbour flagged by the borrow of a true hit: not special.
            }
            i += 8
        }
        return false  // near the end of the buffer: the byte-by-byte path handles refills
    }

    /// An unquoted field of the fast path: `buffer[start..<end]`, null when it equals a null marker.
    @inline(__always) mutating func addFastField(from start: Int, to end: Int, recordStart: Int, columnBase: Int) {
        var isNull = false
        if hasNullMarkers {
            for marker in nullMarkers where marker.count == end - start {
                if marker.isEmpty || memcmp(marker, buffer + start, marker.count) == 0 {
                    isNull = true
                    break
                }
            }
        }
        builder.addField(
            start: start - recordStart, end: end - recordStart, column: columnBase + start - recordStart, lineDelta: 0,
            isNull: isNull)
    }

    /// Any record: byte by byte through quotes, escapes, line breaks inside quotes and buffer refills.
    mutating func slowRecord(firstLine: Int) throws {
        let delimiter = dialect.delimiter, quote = dialect.quote ?? 0, hasQuote = dialect.quote != nil
        let escape = dialect.escape ?? 0, hasEscape = dialect.escape != nil
        let trims = dialect.trimsWhitespace
        while true {
            // One field.
            if trims { while try fill(), buffer[pos] == 32 || buffer[pos] == 9 { pos += 1 } }
            let column = offset - lineStart + 1, fieldLine = line
            let start = builder.length
            var quoted = false
            if hasQuote, try fill(), buffer[pos] == quote {
                quoted = true
                pos += 1
                try readQuoted(quote: quote, escape: hasEscape ? escape : nil, column: column, fieldLine: fieldLine)
                if trims { while try fill(), buffer[pos] == 32 || buffer[pos] == 9 { pos += 1 } }
                if try fill() {
                    let c = buffer[pos]
                    if c != delimiter && c != 10 && c != 13 {
                        let at = position(line: line, column: offset - lineStart + 1)
                        try skipLine()
                        throw ReaderError(
                            .misplacedQuote,
                            "text after the closing quote of a field (a quote inside a quoted field must be doubled)",
                            at: at)
                    }
                }
            } else {
                try readUnquoted(delimiter: delimiter, quote: hasQuote ? quote : nil, escape: hasEscape ? escape : nil)
                if trims {
                    while builder.length > start, builder[builder.length - 1] == 32 || builder[builder.length - 1] == 9
                    { builder.truncate(to: builder.length - 1) }
                }
            }
            var isNull = false
            if !quoted, hasNullMarkers {
                if escapedAt.isEmpty {
                    for marker in nullMarkers where builder.currentField(from: start, equals: marker) {
                        isNull = true
                        break
                    }
                } else {
                    // Null markers are compared with the field as written (MySQL's `\N`), escapes included.
                    var raw: [UInt8] = []
                    for index in start..<builder.length {
                        if escapedAt.contains(index) { raw.append(dialect.escape!) }
                        raw.append(builder[index])
                    }
                    isNull = nullMarkers.contains(raw)
                }
            }
            escapedAt.removeAll(keepingCapacity: true)
            builder.endField(start: start, column: column, lineDelta: fieldLine - firstLine, isNull: isNull)
            // What ends the field.
            guard try fill() else { break }
            let c = buffer[pos]
            pos += 1
            if c == delimiter { continue }
            newLine()
            if c == 13 { pendingCR = true }
            break
        }
    }

    /// Reads an unquoted run up to a delimiter, line break or end of input (not consumed).
    @inline(__always) mutating func readUnquoted(delimiter: UInt8, quote: UInt8?, escape: UInt8?) throws {
        while try fill() {
            var i = pos
            while i < end && !special[Int(buffer[i])] { i += 1 }
            let start = pos
            pos = i
            try take(from: start)
            guard i < end else { continue }
            let c = buffer[i]
            if c == delimiter || c == 10 || c == 13 { return }
            if let escape, c == escape {
                let at = position(line: line, column: offset - lineStart + 1)
                pos += 1
                guard try fill() else {
                    // Nothing left for it to escape: the input was cut (a lost character), never dropped silently.
                    throw ReaderError(
                        .unterminatedQuote, "the escape character at the end of the input escapes nothing (cut input?)",
                        at: at)
                }
                let literal = pos
                pos += 1
                escapedAt.append(builder.length)
                try take(from: literal)
                if buffer[literal] == 10 { newLine() }
                continue
            }
            // A quote inside an unquoted field.
            guard dialect.lenientQuotes else {
                let at = position(line: line, column: offset - lineStart + 1)
                try skipLine()
                throw ReaderError(
                    .misplacedQuote,
                    "a quote inside an unquoted field (quote the whole field and double the quote, or read with "
                        + "lenient quotes)",
                    at: at)
            }
            let literal = pos
            pos += 1
            try take(from: literal)
        }
    }

    /// Reads a quoted field's contents after its opening quote, up to and including the closing quote.
    mutating func readQuoted(quote: UInt8, escape: UInt8?, column: Int, fieldLine: Int) throws {
        while true {
            guard try fill() else {
                throw ReaderError(
                    .unterminatedQuote, "the quoted field that starts here is never closed (the input ends inside it)",
                    at: position(line: fieldLine, column: column))
            }
            var i = pos
            while i < end {
                let c = buffer[i]
                if c == quote || c == escape { break }
                if c == 10 {
                    line += 1
                    lineStart = base + i + 1
                }
                i += 1
            }
            let start = pos
            pos = i
            try take(from: start)
            guard i < end else { continue }
            let c = buffer[i]
            pos += 1
            if let escape, c == escape, escape != quote {
                guard try fill() else { continue }
                let literal = pos
                pos += 1
                try take(from: literal)
                if buffer[literal] == 10 { newLine() }
                continue
            }
            // A quote: doubled means a literal quote, otherwise the field ends.
            if escape == nil || escape == quote, try fill(), buffer[pos] == quote {
                let literal = pos
                pos += 1
                try take(from: literal)
                continue
            }
            return
        }
    }

    /// Checks the record's text is valid UTF-8; repairs it in lossy mode.
    ///
    /// - Parameter wholeSpan: the bytes are the record as written (fields with delimiters between them),
    ///   so checking them at once is the same as checking each field: a sequence cannot run across an
    ///   ASCII delimiter or quote.
    func checkText(_ record: inout Record, wholeSpan: Bool) throws {
        let valid = record.withAllBytes { bytes in
            UTF8Validation.isASCII(bytes) || wholeSpan && UTF8Validation.firstInvalidByte(bytes) == nil
        }
        if valid { return }
        for index in 0..<record.count {
            let bad = record.withBytes(index) { UTF8Validation.firstInvalidByte($0) }
            guard let bad else { continue }
            if dialect.lossyEncoding {
                let repaired = record.withBytes(index) { Array(String(decoding: $0, as: UTF8.self).utf8) }
                record.replaceBytes(ofField: index, with: repaired)
                continue
            }
            let byte = record.bytes(index)[bad]
            throw ReaderError(
                .encoding,
                "invalid UTF-8: byte 0x\(String(byte, radix: 16, uppercase: true)) at byte \(bad + 1) of field "
                    + "\(index + 1); the file is not \(dialect.encoding.rawValue) — set the encoding, or read lossy "
                    + "to replace bad bytes",
                at: record.position(ofField: index))
        }
    }

    mutating func checkFieldCount(_ record: Record) throws {
        guard let expected = expectedFields else {
            if dialect.hasHeader == false { expectedFields = record.count }
            return
        }
        guard record.count != expected else { return }
        let what = schema != nil ? "the header has \(expected)" : "the first record has \(expected)"
        if record.count > expected {
            throw ReaderError(
                .raggedRow, "the record has \(record.count) fields, \(what) (field \(expected + 1) starts here)",
                at: record.position(ofField: expected))
        }
        var at = record.position(ofField: record.count - 1)
        at.column += record.byteCount(record.count - 1)
        throw ReaderError(.raggedRow, "the record has \(record.count) fields, \(what) (the line ends here)", at: at)
    }
}
