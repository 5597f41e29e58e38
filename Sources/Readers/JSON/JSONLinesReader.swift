import Foundation

/// Streams JSON Lines (`.jsonl`, `.ndjson`, plain or gzipped): one JSON object per line, each a
/// record whose fields are its members — what `sluice export --format jsonl` writes.
///
/// Values are kept as written: a number is its digits (never a double on the way), a string its
/// decoded text (every escape and surrogate pair; a lone surrogate, a raw control character or
/// invalid UTF-8 is refused at its column), `true`/`false` their words, `null` a null field. The
/// first object's members name the fields; a later object may give them in any order, and one it
/// leaves out is null. A member the first object did not have, a member given twice, a nested
/// object or array, or a line that is not one object is an error in that record only: the reader
/// goes on with the next line. Blank lines are skipped; memory is bounded by one line
/// (`ReaderLimits.recordBytes`).
///
/// ```swift
/// let reader = try JSONLinesReader(path: "orders.jsonl.gz")
/// while let record = try reader.next() { print(record["order_id"] ?? "null") }
/// ```
public final class JSONLinesReader: RecordReader {
    public let name: String
    /// The first object's member names (`nil` before it is read).
    public private(set) var schema: RecordSchema?
    private let source: ByteSource
    private let limits: ReaderLimits
    private var buffer: [UInt8] = []
    private var start = 0
    /// Up to where the buffer is known to hold no line break: a long line is searched once, not
    /// again from its start after each read.
    private var scanned = 0
    private var atEnd = false
    private var lineNumber = 0
    private var recordNumber = 0
    private var context: Record.Context?

    public convenience init(path: String, limits: ReaderLimits = .standard) throws {
        try self.init(source: try Input.open(path), limits: limits)
    }

    /// Reads from `source` (already decompressed).
    public init(source: ByteSource, limits: ReaderLimits = .standard) throws {
        self.source = source
        self.limits = limits
        name = source.name
        buffer.reserveCapacity(1 << 16)
    }

    public func next() throws -> Record? {
        while let line = try nextLine() {
            let blank = line.bytes.allSatisfy { $0 == 32 || $0 == 9 || $0 == 13 }
            if blank { continue }
            recordNumber += 1
            return try record(from: line.bytes, line: line.number)
        }
        return nil
    }

    /// The next line's bytes (without its line break) and number; `nil` at the end of the input.
    private func nextLine() throws -> (bytes: ArraySlice<UInt8>, number: Int)? {
        while true {
            if let newline = buffer[max(start, scanned)...].firstIndex(of: 10) {
                let line = buffer[start..<newline]
                start = newline + 1
                lineNumber += 1
                return (lineNumber == 1 ? Self.droppingBOM(line) : line, lineNumber)
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                let line = buffer[start...]
                start = buffer.count
                lineNumber += 1
                return (lineNumber == 1 ? Self.droppingBOM(line) : line, lineNumber)
            }
            if buffer.count - start > limits.recordBytes {
                // Too long a line: passed over to its end, then refused.
                let position = SourcePosition(file: name, line: lineNumber + 1, column: 1, record: recordNumber + 1)
                try skipRestOfLine()
                lineNumber += 1
                recordNumber += 1
                throw limits.tooLarge("the line", at: position)
            }
            scanned = buffer.count
            try fill()
        }
    }

    private static func droppingBOM(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        line.starts(with: [0xEF, 0xBB, 0xBF]) ? line.dropFirst(3) : line
    }

    /// Reads more of the input into the buffer (dropping what was consumed).
    private func fill() throws {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            scanned = max(0, scanned - start)
            start = 0
        }
        let chunk = 1 << 16
        let old = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: chunk))
        let read = try buffer.withUnsafeMutableBytes { raw in
            try source.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[old...]))
        }
        buffer.removeLast(chunk - read)
        if read == 0 { atEnd = true }
    }

    private func skipRestOfLine() throws {
        while true {
            if let newline = buffer[start...].firstIndex(of: 10) {
                start = newline + 1
                return
            }
            start = buffer.count
            if atEnd { return }
            try fill()
        }
    }

    /// The record of one line's object.
    private func record(from line: ArraySlice<UInt8>, line number: Int) throws -> Record {
        var parser = JSONLineParser(bytes: Array(line))
        let members: [(name: String, value: [UInt8]?)]
        do {
            members = try parser.object()
        } catch let failure as JSONLineParser.Failure {
            throw ReaderError(
                .malformedJSON, failure.message,
                at: SourcePosition(file: name, line: number, column: failure.offset + 1, record: recordNumber))
        }
        let position = SourcePosition(file: name, line: number, column: 1, record: recordNumber)
        if schema == nil {
            schema = RecordSchema(names: members.map(\.name))
            context = Record.Context(file: name, schema: schema)
        }
        guard let schema, let context else { return Record(fields: [], context: Record.Context(file: name)) }
        var fields = [[UInt8]?](repeating: nil, count: schema.names.count)
        var given = Set<Int>()
        for member in members {
            guard let index = schema.index(of: member.name) else {
                throw ReaderError(
                    .malformedJSON,
                    "member \(member.name.debugDescription) is not one of the first line's "
                        + "(\(schema.names.joined(separator: ", ")))",
                    at: position)
            }
            guard given.insert(index).inserted else {
                throw ReaderError(.malformedJSON, "member \(member.name.debugDescription) is given twice", at: position)
            }
            fields[index] = member.value
        }
        return Record(byteFields: fields, context: context, line: number, column: 1, number: recordNumber)
    }
}

/// One JSON object of scalar members, parsed from a line's bytes.
struct JSONLineParser {
    struct Failure: Error {
        let message: String
        let offset: Int
    }

    let bytes: [UInt8]
    var index = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    private func fail(_ message: String, at offset: Int? = nil) -> Failure {
        Failure(message: message, offset: offset ?? index)
    }

    private mutating func skipSpace() {
        while index < bytes.count, bytes[index] == 32 || bytes[index] == 9 || bytes[index] == 13 { index += 1 }
    }

    /// `{ "name": value, … }` and nothing after it but blanks.
    mutating func object() throws -> [(name: String, value: [UInt8]?)] {
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else {
            throw fail("the line is not a JSON object (JSON Lines holds one object per line)")
        }
        index += 1
        var members: [(name: String, value: [UInt8]?)] = []
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                    throw fail("expected a member name")
                }
                let name = String(decoding: try string(), as: UTF8.self)
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                index += 1
                skipSpace()
                members.append((name, try value(of: name)))
                skipSpace()
                guard index < bytes.count else { throw fail("the object does not end on its line") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                guard bytes[index] == UInt8(ascii: "}") else { throw fail("expected ',' or '}'") }
                index += 1
                break
            }
        }
        skipSpace()
        guard index == bytes.count else { throw fail("text after the object") }
        return members
    }

    /// A scalar value's bytes (`nil` for null).
    private mutating func value(of member: String) throws -> [UInt8]? {
        guard index < bytes.count else { throw fail("expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "\""): return try string()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        case UInt8(ascii: "t"): return try literal("true")
        case UInt8(ascii: "f"): return try literal("false")
        case UInt8(ascii: "n"):
            _ = try literal("null")
            return nil
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            throw fail(
                "member \(member.debugDescription) holds a nested value, which JSON Lines inputs cannot hold yet")
        default: throw fail("expected a value")
        }
    }

    private mutating func literal(_ word: String) throws -> [UInt8] {
        let expected = Array(word.utf8)
        guard bytes[index...].starts(with: expected) else { throw fail("expected a value") }
        index += expected.count
        return expected
    }

    /// A number as written: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    private mutating func number() throws -> [UInt8] {
        let first = index
        func digits() -> Int {
            let from = index
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 { index += 1 }
            return index - from
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        let whole = index
        guard digits() > 0 else { throw fail("a number needs digits", at: first) }
        if bytes[whole] == UInt8(ascii: "0"), index - whole > 1 { throw fail("a number has a leading zero", at: first) }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw fail("a number needs digits after its point", at: first) }
        }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard digits() > 0 else { throw fail("a number needs digits in its exponent", at: first) }
        }
        return Array(bytes[first..<index])
    }

    /// A string's decoded UTF-8 bytes (`index` at its opening quote).
    mutating func string() throws -> [UInt8] {
        index += 1
        var out: [UInt8] = []
        while true {
            guard index < bytes.count else { throw fail("a string does not end on its line") }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return out
            case UInt8(ascii: "\\"):
                try escape(into: &out)
            case 0..<0x20:
                throw fail("a control character inside a string (write it as an escape)")
            case 0x80...:
                let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2
                let end = min(index + length, bytes.count)
                let valid = bytes[index..<end].withUnsafeBytes { UTF8Validation.firstInvalidByte($0) == nil }
                guard byte >= 0xC2, byte <= 0xF4, end - index == length, valid else { throw fail("invalid UTF-8") }
                out.append(contentsOf: bytes[index..<end])
                index = end
            default:
                out.append(byte)
                index += 1
            }
        }
    }

    private mutating func escape(into out: inout [UInt8]) throws {
        let at = index
        index += 1
        guard index < bytes.count else { throw fail("a string does not end on its line") }
        let letter = bytes[index]
        index += 1
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(letter)
        case UInt8(ascii: "b"): out.append(8)
        case UInt8(ascii: "f"): out.append(12)
        case UInt8(ascii: "n"): out.append(10)
        case UInt8(ascii: "r"): out.append(13)
        case UInt8(ascii: "t"): out.append(9)
        case UInt8(ascii: "u"):
            var scalar = try hex4(at: at)
            if (0xD800..<0xDC00).contains(scalar) {
                // A high surrogate: a low one must follow.
                guard bytes[index...].starts(with: [UInt8(ascii: "\\"), UInt8(ascii: "u")]) else {
                    throw fail("a lone surrogate \\u\(String(scalar, radix: 16, uppercase: true))", at: at)
                }
                index += 2
                let low = try hex4(at: at)
                guard (0xDC00..<0xE000).contains(low) else {
                    throw fail("a lone surrogate \\u\(String(scalar, radix: 16, uppercase: true))", at: at)
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw fail("a lone surrogate \\u\(String(scalar, radix: 16, uppercase: true))", at: at)
            }
            out.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar)!)).utf8))
        default:
            throw fail("an unknown escape \\\(String(decoding: [letter], as: UTF8.self))", at: at)
        }
    }

    private mutating func hex4(at escape: Int) throws -> UInt32 {
        let digits = index + 4 <= bytes.count ? bytes[index..<index + 4] : []
        guard digits.count == 4, digits.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 | 0x20 >= 97 && $0 | 0x20 <= 102) }),
            let value = UInt32(String(decoding: digits, as: UTF8.self), radix: 16)
        else { throw fail("\\u needs four hexadecimal digits", at: escape) }
        index += 4
        return value
    }
}
