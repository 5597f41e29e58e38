import Foundation

/// Splits the input into statements at `;` outside strings, quoted identifiers and comments (a CREATE
/// TRIGGER runs to its END).
struct StatementSplitter {
    let source: ByteSource
    let name: String
    let capacity = 1 << 20
    let buffer: UnsafeMutablePointer<UInt8>
    /// The largest value (a quoted string, a comment kept inside a statement) a statement may hold
    /// (`ReaderLimits.recordBytes`): a quote never closed fails there.
    let maxBytes: Int
    /// The largest statement kept: SQLite's own limit on a statement's length (a multi-row INSERT of
    /// tiny rows may be far longer than one record), or `maxBytes` when that is larger.
    var maxStatementBytes: Int { max(maxBytes, 1_000_000_000) }
    var pos = 0, end = 0
    var atEOF = false
    var line = 1
    /// The current statement's text (when copied, see `withStatement`), its first line, and offsets
    /// of line starts inside it.
    var statement: [UInt8] = []
    /// The current statement when it lies in `buffer` as it is (the fast path): no copy was made.
    var inPlace: UnsafeBufferPointer<UInt8>?
    var statementLine = 1
    var lineStarts: [Int] = []
    var statementNumber = 0
    /// Whether the input ended inside the current statement (no `;` closed it): a cut dump.
    var isCut = false

    /// Bytes that end a run of ordinary statement text.
    let special: UnsafeMutablePointer<Bool>

    init(source: ByteSource, maxBytes: Int = ReaderLimits.defaultRecordBytes) {
        self.source = source
        self.maxBytes = maxBytes
        name = source.name
        buffer = .allocate(capacity: capacity)
        special = .allocate(capacity: 256)
        special.initialize(repeating: false, count: 256)
        for c in "'\"`[\n;-/".utf8 { special[Int(c)] = true }
    }

    func deallocate() {
        buffer.deallocate()
        special.deallocate()
    }

    mutating func fill() throws -> Bool {
        if pos < end { return true }
        if atEOF { return false }
        // Read first: after a failed read the buffer's old bytes must not look unread.
        let n = try source.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: capacity))
        pos = 0
        end = n
        if end == 0 { atEOF = true }
        return end > 0
    }

    /// Line and column of `offset` in the current statement.
    func lineAndColumn(at offset: Int) -> (line: Int, column: Int) {
        var index = 0
        while index + 1 < lineStarts.count, lineStarts[index + 1] <= offset { index += 1 }
        let start = lineStarts.isEmpty ? 0 : lineStarts[index]
        return (statementLine + index, offset - start + 1)
    }

    /// Calls `body` with the current statement's bytes, valid only inside `body`.
    func withStatement<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        if let inPlace { return try body(inPlace) }
        return try statement.withUnsafeBufferPointer(body)
    }

    /// Reads the next statement (without its `;`, see `withStatement`); `false` at the end of the input.
    mutating func nextStatement() throws -> Bool {
        statement.removeAll(keepingCapacity: true)
        lineStarts.removeAll(keepingCapacity: true)
        inPlace = nil
        isCut = false
        // Skip blanks and comments between statements.
        while try fill() {
            let c = buffer[pos]
            if c == 10 {
                line += 1
                pos += 1
                continue
            }
            if c == 32 || c == 9 || c == 13 {
                pos += 1
                continue
            }
            if c == UInt8(ascii: "-"), try peekNext() == UInt8(ascii: "-") {
                try skipLineComment()
                continue
            }
            if c == UInt8(ascii: "/"), try peekNext() == UInt8(ascii: "*") {
                try skipBlockComment(keep: false)
                continue
            }
            break
        }
        guard try fill() else { return false }
        statementNumber += 1
        statementLine = line
        lineStarts.append(0)
        if let length = statementInPlace() {
            inPlace = UnsafeBufferPointer(start: buffer + pos, count: length)
            pos += length + 1
            return true
        }
        var trigger: Bool?
        while true {
            try checkSize()
            guard try fill() else {
                if statement.allSatisfy({ $0 == 32 || $0 == 10 || $0 == 9 || $0 == 13 }) { return !statement.isEmpty }
                isCut = true  // a last statement without `;`: SQLite would not run it either
                return true
            }
            let c = buffer[pos]
            switch c {
            case UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "`"):
                try copyQuoted(until: c)
            case UInt8(ascii: "["):
                try copyQuoted(until: UInt8(ascii: "]"))
            case 10:
                append(c)
                line += 1
                lineStarts.append(statement.count)
            case UInt8(ascii: ";"):
                pos += 1
                if trigger == nil { trigger = isCreateTrigger() }
                if trigger == true && !endsWithEND() {
                    statement.append(c)
                    continue
                }
                return true
            case UInt8(ascii: "-") where try peekNext() == UInt8(ascii: "-"):
                try skipLineComment()
                statement.append(10)
                lineStarts.append(statement.count)
            case UInt8(ascii: "/") where try peekNext() == UInt8(ascii: "*"):
                try skipBlockComment(keep: true)
            default:
                // Copy a run of ordinary bytes at once.
                var i = pos + 1  // the first byte is ordinary, or a lone `-` or `/`
                while i < end, !special[Int(buffer[i])] { i += 1 }
                statement.append(contentsOf: UnsafeBufferPointer(start: buffer + pos, count: i - pos))
                pos = i
            }
        }
    }

    /// The length of the statement at `pos` when it ends with a `;` inside the buffer, on the same
    /// line, with no comment or `[identifier]` and not a CREATE (a trigger runs past its first `;`):
    /// the usual INSERT of a dump, read where it is. `nil` sends the statement the general way.
    private func statementInPlace() -> Int? {
        guard buffer[pos] | 0x20 != UInt8(ascii: "c") else { return nil }
        var i = pos
        while i < end {
            let c = buffer[i]
            guard special[Int(c)] else {
                i += 1
                continue
            }
            switch c {
            case UInt8(ascii: ";"):
                return i - pos
            case UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "`"):
                // A quoted run, its quote doubled inside; a line break or the buffer's end sends
                // the statement the general way.
                i += 1
                while true {
                    while i < end, buffer[i] != c, buffer[i] != 10 { i += 1 }
                    guard i + 1 < end, buffer[i] == c else { return nil }
                    i += 1
                    guard buffer[i] == c else { break }
                    i += 1
                }
            case UInt8(ascii: "-"), UInt8(ascii: "/"):
                // A minus sign or a division, unless a comment starts here.
                guard i + 1 < end, buffer[i + 1] != (c == UInt8(ascii: "-") ? c : UInt8(ascii: "*")) else { return nil }
                i += 1
            default:
                return nil  // a line break or `[`
            }
        }
        return nil
    }

    /// - Throws: `recordTooLarge` once the statement — its text and its lines' starts — outgrew
    /// `maxStatementBytes`, or the part of it from `value` on (a quoted value, with its line starts
    /// from `lines` on) outgrew `maxBytes` (checked a buffer or a line at a time).
    private func checkSize(value: Int = .max, lines: Int = .max) throws {
        let cost = MemoryLayout<Int>.stride
        let whole = statement.count + lineStarts.count * cost
        let part = value > statement.count ? 0 : statement.count - value + max(0, lineStarts.count - lines) * cost
        guard whole > maxStatementBytes || part > maxBytes else { return }
        throw ReaderLimits(recordBytes: whole > maxStatementBytes ? maxStatementBytes : maxBytes).tooLarge(
            "the statement", at: SourcePosition(file: name, line: statementLine, column: 1),
            hint: "; is a quote never closed?")
    }

    private mutating func append(_ c: UInt8) {
        statement.append(c)
        pos += 1
    }

    private mutating func peekNext() throws -> UInt8? {
        if pos + 1 < end { return buffer[pos + 1] }
        // The byte after `pos` is in the next chunk: keep the current byte by moving it to the front.
        let current = buffer[pos]
        let n = try source.read(into: UnsafeMutableRawBufferPointer(start: buffer + 1, count: capacity - 1))
        buffer[0] = current
        pos = 0
        end = n + 1
        if n == 0 { atEOF = true }
        return n > 0 ? buffer[1] : nil
    }

    /// Copies a quoted run (string or identifier, closing quote doubled inside) including its quotes.
    private mutating func copyQuoted(until close: UInt8) throws {
        let value = statement.count, lines = lineStarts.count
        append(buffer[pos])
        while try fill() {
            try checkSize(value: value, lines: lines)
            var i = pos
            while i < end, buffer[i] != close, buffer[i] != 10 { i += 1 }
            statement.append(contentsOf: UnsafeBufferPointer(start: buffer + pos, count: i - pos))
            pos = i
            guard i < end else { continue }
            if buffer[i] == 10 {
                append(10)
                line += 1
                lineStarts.append(statement.count)
                continue
            }
            append(close)
            if close != UInt8(ascii: "]"), try fill(), buffer[pos] == close {
                append(close)
                continue
            }
            return
        }
    }

    private mutating func skipLineComment() throws {
        while try fill() {
            if buffer[pos] == 10 {
                pos += 1
                line += 1
                return
            }
            pos += 1
        }
    }

    private mutating func skipBlockComment(keep: Bool) throws {
        let value = statement.count, lines = lineStarts.count
        pos += 2
        var previous: UInt8 = 0
        while try fill() {
            let c = buffer[pos]
            pos += 1
            if c == 10 {
                line += 1
                if keep {
                    statement.append(10)
                    lineStarts.append(statement.count)
                    try checkSize(value: value, lines: lines)
                }
            }
            if previous == UInt8(ascii: "*"), c == UInt8(ascii: "/") {
                if keep { statement.append(32) }
                return
            }
            previous = c
        }
    }

    private func isCreateTrigger() -> Bool {
        statement.withUnsafeBufferPointer { bytes in
            var parser = SQLParser(bytes: bytes)
            guard parser.isKeyword("CREATE") else { return false }
            var word = parser.keyword()
            if word == "TEMP" || word == "TEMPORARY" { word = parser.keyword() }
            return word == "TRIGGER"
        }
    }

    /// Whether a trigger's text ends its body: `END` right after a `;` of the body (blanks and block
    /// comments between), as SQLite reads it — the `END` of a `CASE` follows an expression instead.
    private func endsWithEND() -> Bool {
        func droppingBlanks(_ text: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
            var tail = text
            while true {
                while let last = tail.last, last == 32 || last == 10 || last == 9 || last == 13 {
                    tail = tail.dropLast()
                }
                guard tail.count >= 4, tail.last == UInt8(ascii: "/"), tail[tail.endIndex - 2] == UInt8(ascii: "*"),
                    let open = tail.dropLast(2).indices.reversed().first(where: { index in
                        index > tail.startIndex && tail[index] == UInt8(ascii: "*")
                            && tail[index - 1] == UInt8(ascii: "/")
                    })
                else { return tail }
                tail = tail[..<(open - 1)]
            }
        }
        let tail = droppingBlanks(statement[...])
        guard tail.count >= 3, String(decoding: tail.suffix(3), as: UTF8.self).uppercased() == "END" else {
            return false
        }
        let before = tail.dropLast(3)
        if let last = before.last, Self.isWordByte(last) { return false }
        return droppingBlanks(before).last == UInt8(ascii: ";")
    }

    static func isWordByte(_ c: UInt8) -> Bool {
        (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 95 || c >= 0x80
    }
}
