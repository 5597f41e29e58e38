import Foundation

/// Reads JSON text a chunk at a time and turns values into tapes (`JSONTape`), keeping the line and
/// column of every byte. Nothing recurses: a value nested a million deep costs what a flat one of
/// that size does, and nesting deeper than `ReaderLimits.depth` is refused.
///
/// Errors are of two sorts. A `Syntax` error leaves the text unreadable from there (a document
/// ends; in JSON Lines the rest of the line is passed over). A value's own fault — a lone
/// surrogate, invalid UTF-8 or a raw control character inside a string, an unknown escape, a number
/// longer than the limit, a member given twice — is noted in `valueError` and the value read on, so
/// that only its record is refused.
struct JSONScanner {
    struct Syntax: Error {
        let message: String
        let line: Int
        let column: Int
    }

    struct ValueError {
        let message: String
        let line: Int
        let column: Int
    }

    let source: ByteSource
    /// JSON Lines: a value must end on its line (a line break inside one is an error).
    let lines: Bool
    let limits: ReaderLimits
    /// `last-wins`: a member given twice is no error (the later one counts when fields are read).
    let allowsRepeatedMembers: Bool

    private let storage = InputBuffer(capacity: 1 << 16)
    var buffer: UnsafeMutablePointer<UInt8> { storage.base }
    var capacity: Int { storage.capacity }
    private var numberLength = 0
    var position = 0
    var end = 0
    private(set) var atEnd = false
    /// The input offset of `buffer[0]`.
    var offset = 0
    private(set) var line = 1
    var lineStart = 0
    /// The value being read, and where it started.
    var tape = JSONTape()
    var valueLine = 1
    private(set) var valueError: ValueError?
    /// The containers open while reading a value.
    private var open: [Int32] = []
    /// The name of the member whose value comes next.
    private var pendingName: (start: Int32, end: Int32, hash: UInt32)?

    init(source: ByteSource, lines: Bool, limits: ReaderLimits, allowsRepeatedMembers: Bool) {
        self.source = source
        self.lines = lines
        self.limits = limits
        self.allowsRepeatedMembers = allowsRepeatedMembers
    }

    /// The bytes read from the input (a class: they are freed with the reader).
    final class InputBuffer {
        let base: UnsafeMutablePointer<UInt8>
        let capacity: Int
        init(capacity: Int) {
            self.capacity = capacity
            base = .allocate(capacity: capacity)
        }
        deinit { base.deallocate() }
    }

    /// A value grew larger than `ReaderLimits.recordBytes` (the reader gives the record's position).
    struct TooLarge: Error {}

    var column: Int { offset + position - lineStart + 1 }

    func syntax(_ message: String) -> Syntax { Syntax(message: message, line: line, column: column) }

    // MARK: Bytes

    /// The next byte without taking it; `nil` at the end of the input.
    @inline(__always) mutating func peek() throws -> UInt8? {
        if position == end, try !refill() { return nil }
        return buffer[position]
    }

    private mutating func refill() throws -> Bool {
        if atEnd { return false }
        offset += end
        position = 0
        end = try source.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: capacity))
        if end == 0 { atEnd = true }
        return end > 0
    }

    /// Skips a byte order mark at the start of the input.
    mutating func skipByteOrderMark() throws {
        if let first = try peek(), first == 0xFF || first == 0xFE {
            throw syntax(
                "the input starts with a UTF-16 byte order mark: JSON is read as UTF-8 (convert it first, e.g. "
                    + "iconv -f UTF-16 -t UTF-8)")
        }
        guard try peek() == 0xEF else { return }
        for expected: UInt8 in [0xEF, 0xBB, 0xBF] {
            guard try peek() == expected else { throw syntax("invalid UTF-8 (a broken byte order mark)") }
            position += 1
        }
    }

    /// The next byte that is not a blank, not taken; line breaks are blanks in a document, and
    /// stop a JSON Lines reader (which takes them itself, `takeLineBreak`). `nil` at the end.
    @inline(__always) mutating func nonBlank() throws -> UInt8? {
        while true {
            guard let byte = try peek() else { return nil }
            switch byte {
            case 32, 9, 13: position += 1
            case 10:
                if lines { return byte }
                takeLineBreak()
            default: return byte
            }
        }
    }

    /// Takes the line break at the current position.
    mutating func takeLineBreak() {
        position += 1
        line += 1
        lineStart = offset + position
    }

    /// Passes over the rest of the line, its line break included (JSON Lines, after an error).
    mutating func skipLine() throws {
        while let byte = try peek() {
            if byte == 10 {
                takeLineBreak()
                return
            }
            position += 1
        }
    }

    /// Takes the byte at the current position.
    @inline(__always) mutating func advance() { position += 1 }

    /// The next non-blank byte inside a value, which must be there.
    @inline(__always) mutating func required(_ what: String) throws -> UInt8 {
        guard let byte = try nonBlank() else { throw syntax("the input ends inside a value (expected \(what))") }
        if byte == 10 {
            throw syntax("the line ends inside a value (expected \(what)); JSON Lines holds one value a line")
        }
        return byte
    }

    mutating func noteValueError(_ message: String, column: Int? = nil) {
        if valueError == nil { valueError = ValueError(message: message, line: line, column: column ?? self.column) }
    }

    // MARK: Values

    /// Reads the value at the current position (after `nonBlank`) into `tape`, from empty.
    mutating func readValue() throws {
        tape.removeAll()
        valueError = nil
        open.removeAll(keepingCapacity: true)
        pendingName = nil
        valueLine = line
        var byte = try required("a value")
        while true {
            // A value starts at `byte`.
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard open.count < limits.depth else {
                    throw syntax("the value nests deeper than \(limits.depth) levels (the depth limit)")
                }
                let isObject = byte == UInt8(ascii: "{")
                addNode(isObject ? .object : .array)
                open.append(Int32(tape.nodes.count - 1))
                position += 1
                byte = try required(isObject ? "a member or }" : "a value or ]")
                if byte == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    position += 1
                    close()
                } else {
                    if isObject { try memberName(at: byte) }
                    byte = try required("a value")
                    continue
                }
            case UInt8(ascii: "\""):
                addNode(.string)
                try string()
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                addNode(.number)
                try number()
            case UInt8(ascii: "t"): try literal("true", .literal)
            case UInt8(ascii: "f"): try literal("false", .literal)
            case UInt8(ascii: "n"): try literal("null", .null)
            default: throw syntax(unexpected(byte, expected: "a value"))
            }
            if tape.size > limits.recordBytes { throw TooLarge() }
            // After a value: the end, or what its container says next.
            while let container = open.last {
                let isObject = tape.nodes[Int(container)].kind == .object
                byte = try required(isObject ? ", or }" : ", or ]")
                if byte == UInt8(ascii: ",") {
                    position += 1
                    byte = try required(isObject ? "a member name" : "a value")
                    if isObject {
                        try memberName(at: byte)
                        byte = try required("a value")
                    }
                    break
                }
                guard byte == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else {
                    throw syntax(unexpected(byte, expected: isObject ? ", or }" : ", or ]"))
                }
                position += 1
                close()
            }
            if open.isEmpty { return }
        }
    }

    func unexpected(_ byte: UInt8, expected: String) -> String {
        let shown =
            byte >= 0x20 && byte < 0x7F
            ? "'\(String(UnicodeScalar(byte)))'" : "the byte 0x\(String(byte, radix: 16, uppercase: true))"
        return "\(shown) where \(expected) should be"
    }

    @inline(__always) private mutating func addNode(_ kind: JSONTape.Kind) {
        let name = pendingName
        pendingName = nil
        let count = Int32(tape.bytes.count)
        tape.nodes.append(
            JSONTape.Node(
                lineDelta: Int32(truncatingIfNeeded: line - valueLine), column: column, start: count, end: count,
                next: Int32(tape.nodes.count + 1), nameStart: name?.start ?? -1, nameEnd: name?.end ?? -1,
                nameHash: name?.hash ?? 0, kind: kind))
    }

    /// The container on top of `open` ends here.
    private mutating func close() {
        let index = Int(open.removeLast())
        tape.nodes[index].next = Int32(tape.nodes.count)
        if tape.nodes[index].kind == .object, !allowsRepeatedMembers, valueError == nil,
            let repeated = tape.repeatedMember(in: index)
        {
            let node = tape.nodes[repeated]
            valueError = ValueError(
                message: "the member \(tape.name(of: repeated).debugDescription) is given twice in one object",
                line: valueLine + Int(node.lineDelta), column: node.column)
        }
    }

    /// `"name"` and its `:`; `byte` is the first byte.
    private mutating func memberName(at byte: UInt8) throws {
        guard byte == UInt8(ascii: "\"") else { throw syntax(unexpected(byte, expected: "a member name")) }
        let start = tape.bytes.count
        try stringBytes()
        let hash = tape.bytes.withUnsafeBufferPointer { JSONTape.hash(UnsafeBufferPointer(rebasing: $0[start...])) }
        pendingName = (Int32(start), Int32(tape.bytes.count), hash)
        let colon = try required(":")
        guard colon == UInt8(ascii: ":") else { throw syntax(unexpected(colon, expected: ":")) }
        position += 1
    }

    /// A member name and its `:` outside the records (`byte`, its first byte, at the current position).
    mutating func memberNameBytes(at byte: UInt8) throws -> [UInt8] {
        guard byte == UInt8(ascii: "\"") else { throw syntax(unexpected(byte, expected: "a member name")) }
        let start = tape.bytes.count
        valueError = nil
        try stringBytes()
        if let fault = valueError { throw Syntax(message: fault.message, line: fault.line, column: fault.column) }
        let name = Array(tape.bytes[start...])
        tape.bytes.removeLast(tape.bytes.count - start)
        let colon = try required(":")
        guard colon == UInt8(ascii: ":") else { throw syntax(unexpected(colon, expected: ":")) }
        position += 1
        return name
    }

    private mutating func literal(_ word: StaticString, _ kind: JSONTape.Kind) throws {
        addNode(kind)
        let start = tape.bytes.count
        for index in 0..<word.utf8CodeUnitCount {
            guard let byte = try peek(), byte == word.utf8Start[index] else {
                throw syntax("expected \(word) (an unquoted word other than true, false or null is no JSON value)")
            }
            if kind == .literal { tape.bytes.append(byte) }
            position += 1
        }
        tape.nodes[tape.nodes.count - 1].start = Int32(start)
        tape.nodes[tape.nodes.count - 1].end = Int32(tape.bytes.count)
    }

    /// A number as written: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, followed by no letter or digit.
    private mutating func number() throws {
        let start = tape.bytes.count
        let first = column
        numberLength = 0
        if try peek() == UInt8(ascii: "-") { take(UInt8(ascii: "-")) }
        let leading = try peek()
        let whole = try digits()
        guard whole > 0 else { throw Syntax(message: "a number needs digits", line: line, column: first) }
        if leading == UInt8(ascii: "0"), whole > 1 {
            throw Syntax(message: "a number has a leading zero", line: line, column: first)
        }
        if try peek() == UInt8(ascii: ".") {
            take(UInt8(ascii: "."))
            guard try digits() > 0 else {
                throw Syntax(message: "a number needs digits after its point", line: line, column: first)
            }
        }
        if let byte = try peek(), byte | 0x20 == UInt8(ascii: "e") {
            take(byte)
            if let sign = try peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { take(sign) }
            guard try digits() > 0 else {
                throw Syntax(message: "a number needs digits in its exponent", line: line, column: first)
            }
        }
        if let byte = try peek(), byte >= 48 && byte <= 57 || byte | 0x20 >= 97 && byte | 0x20 <= 122 || byte == 46 {
            throw syntax(unexpected(byte, expected: "the end of the number"))
        }
        if numberLength > limits.numberCharacters {
            noteValueError(
                "a number of \(numberLength) characters, more than the number limit (\(limits.numberCharacters))",
                column: first)
            tape.bytes.removeLast(tape.bytes.count - start)
        }
        tape.nodes[tape.nodes.count - 1].start = Int32(start)
        tape.nodes[tape.nodes.count - 1].end = Int32(tape.bytes.count)
    }

    /// Takes a byte of a number (kept while the number is within the limit).
    @inline(__always) private mutating func take(_ byte: UInt8) {
        if numberLength < limits.numberCharacters { tape.bytes.append(byte) }
        numberLength += 1
        position += 1
    }

    /// Takes a number's digits (a run of them at a time); how many there were.
    @inline(__always) private mutating func digits() throws -> Int {
        var count = 0
        while try peek() != nil {
            var run = position
            while run < end, buffer[run] >= 48, buffer[run] <= 57 { run += 1 }
            let length = run - position
            if length == 0 { break }
            let kept = min(length, max(0, limits.numberCharacters - numberLength))
            if kept > 0 { tape.bytes.append(contentsOf: UnsafeBufferPointer(start: buffer + position, count: kept)) }
            numberLength += length
            count += length
            position = run
            if run < end { break }
        }
        return count
    }
}
