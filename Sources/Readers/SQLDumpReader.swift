import Foundation

/// Reads a SQL dump as `sqlite3 .dump` writes it (PRAGMA, BEGIN/COMMIT, CREATE TABLE/INDEX/VIEW/
/// TRIGGER, INSERT INTO … VALUES with one or many rows) without executing it: tables' schemas from
/// their CREATE TABLE statements, rows from INSERTs as records (`kind` = the table, fields named by the
/// columns).
///
/// Values: integers and reals as written, NULL, 'strings' with '' escapes and raw line breaks, X'…' blobs
/// (as lowercase hex), and the `replace(…, '\n', char(10))`, `char(…)` and `unistr('…')` forms newer
/// versions emit. A statement the reader cannot parse is an error naming the statement number and
/// line; the next call goes on with the following statement.
///
/// ```swift
/// let dump = try SQLDumpReader(path: "legacy.sql.gz", tables: ["products"])
/// while let record = try dump.next() { print(record.kind!, record.strings) }
/// ```
public final class SQLDumpReader: RecordReader {
    /// Tables seen so far, in the order the dump creates them.
    public private(set) var tables: [TableSchema] = []
    public var name: String { splitter.name }
    private let only: Set<String>?
    // `@exclusivity(unchecked)` here and below: every value of every row touches this state; the reader
    // is used by one thread at a time (it is not Sendable) and hands none of it out.
    @exclusivity(unchecked) private var splitter: StatementSplitter
    @exclusivity(unchecked) private var contexts: [String: Record.Context] = [:]
    @exclusivity(unchecked) private var pending: [Record] = []
    @exclusivity(unchecked) private var pendingIndex = 0
    @exclusivity(unchecked) private var recordNumber = 0
    @exclusivity(unchecked) private var builder = RecordBuilder.forReader()
    /// The table of the last INSERT (dumps insert into one table many times in a row).
    @exclusivity(unchecked) private var lastTable = ""
    /// What is known about `lastTable`: its context and whether its rows are wanted.
    @exclusivity(unchecked) private var lastTableInfo: (context: Record.Context?, wanted: Bool)?

    /// - Parameter tables: only yield rows of these tables (all when `nil`); schemas are kept for all.
    public convenience init(path: String, tables: Set<String>? = nil) throws {
        try self.init(source: try Input.open(path), tables: tables)
    }

    public init(source: ByteSource, tables: Set<String>? = nil) throws {
        only = tables
        splitter = StatementSplitter(source: try Input.decodingText(source, encoding: .utf8))
    }

    deinit { splitter.deallocate() }

    public func next() throws -> Record? {
        while pendingIndex == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingIndex = 0
            guard try splitter.nextStatement() else { return nil }
            try handleStatement()
        }
        defer { pendingIndex += 1 }
        return pending[pendingIndex]
    }

    private func syntaxError(_ message: String, _ parser: SQLParser) -> ReaderError {
        let (line, column) = splitter.lineAndColumn(at: parser.pos)
        return ReaderError(
            .sqlSyntax, "statement \(splitter.statementNumber): \(message)",
            at: SourcePosition(file: splitter.name, line: line, column: column))
    }

    private func handleStatement() throws {
        try splitter.withStatement { bytes in
            var parser = SQLParser(bytes: bytes)
            do {
                if parser.isKeyword("INSERT") {
                    try insert(&parser, replacing: false)
                } else if parser.isKeyword("REPLACE") {
                    try insert(&parser, replacing: true)
                } else if parser.isKeyword("CREATE") {
                    var next = parser.keyword()
                    if next == "TEMP" || next == "TEMPORARY" { next = parser.keyword() }
                    if next == "TABLE" { try createTable(&parser) }
                } else if parser.keyword() == nil, !parser.atEnd {
                    throw SQLParser.Failure("expected a statement keyword")
                }
                // PRAGMA, BEGIN, COMMIT, CREATE INDEX/VIEW/TRIGGER, DELETE, ANALYZE: nothing to yield.
            } catch let failure as SQLParser.Failure {
                throw syntaxError(failure.message, parser)
            }
        }
    }

    private func createTable(_ parser: inout SQLParser) throws {
        if parser.keywordIf("IF") {
            _ = parser.keyword()
            _ = parser.keyword()
        }  // IF NOT EXISTS
        var name = try parser.identifier()
        if parser.consume(UInt8(ascii: ".")) { name = try parser.identifier() }  // schema.table
        try parser.expect(UInt8(ascii: "("))
        var columns: [TableSchema.Column] = [], primaryKey: [String] = [], foreign: [TableSchema.ForeignKey] = [],
            unique: [[String]] = []
        repeat {
            let word = parser.peekKeyword()
            if ["CONSTRAINT", "PRIMARY", "UNIQUE", "FOREIGN", "CHECK"].contains(word) {
                if word == "CONSTRAINT" {
                    _ = parser.keyword()
                    _ = try parser.identifier()
                }
                switch parser.keyword() {
                case "PRIMARY":
                    _ = parser.keyword()
                    primaryKey = try parser.identifierList()
                case "UNIQUE":
                    unique.append(try parser.identifierList())
                case "FOREIGN":
                    _ = parser.keyword()
                    let columns = try parser.identifierList()
                    guard parser.keyword() == "REFERENCES" else {
                        throw SQLParser.Failure("expected REFERENCES in a foreign key")
                    }
                    let table = try parser.identifier()
                    let referenced = parser.peek() == UInt8(ascii: "(") ? try parser.identifierList() : []
                    foreign.append(.init(columns: columns, table: table, referencedColumns: referenced))
                default:
                    try parser.skipBalanced()
                }
                try parser.skipToCommaOrClose()
                continue
            }
            let column = try parser.identifier()
            var type: [String] = []
            var notNull = false
            while let c = parser.peek(), c != UInt8(ascii: ","), c != UInt8(ascii: ")") {
                let word = parser.peekKeyword()
                switch word {
                case "PRIMARY":
                    _ = parser.keyword()
                    _ = parser.keyword()
                    primaryKey = [column]
                case "NOT":
                    _ = parser.keyword()
                    _ = parser.keyword()
                    notNull = true
                case "UNIQUE":
                    _ = parser.keyword()
                    unique.append([column])
                case "REFERENCES":
                    _ = parser.keyword()
                    let table = try parser.identifier()
                    let referenced = parser.peek() == UInt8(ascii: "(") ? try parser.identifierList() : []
                    foreign.append(.init(columns: [column], table: table, referencedColumns: referenced))
                case "CONSTRAINT", "NULL", "CHECK", "DEFAULT", "COLLATE", "GENERATED", "AS", "ASC", "DESC",
                    "AUTOINCREMENT", "ON", "CONFLICT":
                    try parser.skipColumnConstraintToken()
                default:
                    if type.isEmpty || !type.last!.hasSuffix(")") {
                        type.append(try parser.typeWord())
                    } else {
                        try parser.skipColumnConstraintToken()
                    }
                }
            }
            columns.append(.init(name: column, declaredType: type.joined(separator: " "), isNotNull: notNull))
        } while parser.consume(UInt8(ascii: ","))
        try parser.expect(UInt8(ascii: ")"))
        let schema = TableSchema(
            name: name, columns: columns, primaryKey: primaryKey, foreignKeys: foreign, uniqueKeys: unique)
        tables.removeAll { $0.name == name }
        tables.append(schema)
        contexts[name] = Record.Context(
            file: splitter.name, schema: RecordSchema(names: columns.map(\.name)), kind: name)
        lastTableInfo = nil
    }

    private func insert(_ parser: inout SQLParser, replacing: Bool) throws {
        if !replacing, parser.isKeyword("OR") { _ = parser.keyword() }
        guard parser.isKeyword("INTO") else { throw SQLParser.Failure("expected INTO") }
        let previous = lastTable
        var table = try parser.identifier(reusing: previous)
        if parser.consume(UInt8(ascii: ".")) { table = try parser.identifier() }
        let sameTable = table == previous  // the same string object when reused: a cheap comparison
        if !sameTable || lastTableInfo == nil {
            lastTable = table
            lastTableInfo = (contexts[table], only.map { $0.contains(table) } ?? !table.hasPrefix("sqlite_"))
        }
        var context = lastTableInfo!.context
        if parser.peek() == UInt8(ascii: "(") {
            let columns = try parser.identifierList()
            context = Record.Context(file: splitter.name, schema: RecordSchema(names: columns), kind: table)
        }
        guard parser.isKeyword("VALUES") else {
            throw SQLParser.Failure("expected VALUES (only INSERT … VALUES is supported)")
        }
        // Rows of tables not asked for are passed over unread (their syntax is checked by whoever reads them).
        guard lastTableInfo!.wanted else { return }
        let expected = context?.schema?.names.count
        let line = splitter.lineAndColumn(at: 0).line
        repeat {
            try parser.expect(UInt8(ascii: "("))
            builder.begin()
            repeat {
                let start = builder.length
                let isNull = try parser.value(into: &builder)
                builder.endField(start: start, column: 1, lineDelta: 0, isNull: isNull)
            } while parser.consume(UInt8(ascii: ","))
            try parser.expect(UInt8(ascii: ")"))
            if let expected, builder.count != expected {
                throw SQLParser.Failure(
                    "a row of \(table) has \(builder.count) values, the table has \(expected) columns")
            }
            let rowContext = context ?? Record.Context(file: splitter.name, schema: nil, kind: table)
            recordNumber += 1
            pending.append(
                Record(context: rowContext, line: line, column: 1, number: recordNumber, storage: builder.finish()))
        } while parser.consume(UInt8(ascii: ","))
        parser.skipSpace()
        guard parser.atEnd else { throw SQLParser.Failure("unexpected text after the VALUES list") }
    }
}

/// Splits the input into statements at `;` outside strings, quoted identifiers and comments (a CREATE
/// TRIGGER runs to its END).
struct StatementSplitter {
    let source: ByteSource
    let name: String
    let capacity = 1 << 20
    let buffer: UnsafeMutablePointer<UInt8>
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

    /// Bytes that end a run of ordinary statement text.
    let special: UnsafeMutablePointer<Bool>

    init(source: ByteSource) {
        self.source = source
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
            guard try fill() else {
                if statement.allSatisfy({ $0 == 32 || $0 == 10 || $0 == 9 || $0 == 13 }) { return !statement.isEmpty }
                return true  // a last statement without `;`
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
        append(buffer[pos])
        while try fill() {
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

    private func endsWithEND() -> Bool {
        var tail = statement[...]
        while let last = tail.last, last == 32 || last == 10 || last == 9 || last == 13 { tail = tail.dropLast() }
        return tail.count >= 3 && String(decoding: tail.suffix(3), as: UTF8.self).uppercased() == "END"
            && (tail.count == 3 || !Self.isWordByte(tail[tail.index(tail.endIndex, offsetBy: -4)]))
    }

    static func isWordByte(_ c: UInt8) -> Bool {
        (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 95 || c >= 0x80
    }
}

/// A small recursive-descent parser over one statement's bytes.
struct SQLParser {
    struct Failure: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    let bytes: UnsafeBufferPointer<UInt8>
    var pos = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    var atEnd: Bool { pos >= bytes.count }

    /// The next byte after blanks (which are skipped).
    mutating func peek() -> UInt8? {
        skipSpace()
        return pos < bytes.count ? bytes[pos] : nil
    }

    mutating func skipSpace() {
        while pos < bytes.count {
            let c = bytes[pos]
            guard c == 32 || c == 10 || c == 9 || c == 13 else { return }
            pos += 1
        }
    }

    mutating func consume(_ c: UInt8) -> Bool {
        skipSpace()
        guard pos < bytes.count, bytes[pos] == c else { return false }
        pos += 1
        return true
    }

    mutating func expect(_ c: UInt8) throws {
        guard consume(c) else {
            throw Failure(
                "expected \"\(Character(Unicode.Scalar(c)))\"" + (atEnd ? " before the end of the statement" : ""))
        }
    }

    /// The next bare word, upper-cased (`nil` when the next token is not a word).
    mutating func keyword() -> String? {
        skipSpace()
        let start = pos
        while pos < bytes.count, StatementSplitter.isWordByte(bytes[pos]) { pos += 1 }
        guard pos > start else { return nil }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<pos]), as: UTF8.self).uppercased()
    }

    /// Consumes the next word if it is `word` (given in upper case), comparing without allocating.
    mutating func isKeyword(_ word: StaticString) -> Bool {
        skipSpace()
        let n = word.utf8CodeUnitCount
        guard pos + n <= bytes.count else { return false }
        let expected = word.utf8Start
        for i in 0..<n where bytes[pos + i] & 0xDF != expected[i] { return false }
        if pos + n < bytes.count, StatementSplitter.isWordByte(bytes[pos + n]) { return false }
        pos += n
        return true
    }

    mutating func peekKeyword() -> String? {
        let saved = pos
        defer { pos = saved }
        return keyword()
    }

    mutating func keywordIf(_ word: String) -> Bool {
        let saved = pos
        if keyword() == word { return true }
        pos = saved
        return false
    }

    /// An identifier, returning `known` (no new string) when the name is the same.
    mutating func identifier(reusing known: String) throws -> String {
        skipSpace()
        let start = pos
        var copy = known
        let same = copy.withUTF8 { name -> Bool in
            for quoteBytes in [(0, 0), (1, 1)] {
                let open = quoteBytes.0
                guard start + open + name.count + quoteBytes.1 <= bytes.count else { continue }
                if open == 1, bytes[start] != UInt8(ascii: "\"") { continue }
                guard memcmp(bytes.baseAddress! + start + open, name.baseAddress!, name.count) == 0 else { continue }
                let after = start + open + name.count
                if open == 1 {
                    guard bytes[after] == UInt8(ascii: "\""),
                        after + 1 >= bytes.count || bytes[after + 1] != UInt8(ascii: "\"")
                    else { continue }
                    pos = after + 1
                } else {
                    guard after >= bytes.count || !StatementSplitter.isWordByte(bytes[after]) else { continue }
                    pos = after
                }
                return true
            }
            return false
        }
        return same && !known.isEmpty ? known : try identifier()
    }

    /// An identifier: bare, "quoted", [bracketed] or `backticked`.
    mutating func identifier() throws -> String {
        skipSpace()
        guard pos < bytes.count else { throw Failure("expected a name before the end of the statement") }
        let open = bytes[pos]
        let close: UInt8? =
            switch open {
            case UInt8(ascii: "\""), UInt8(ascii: "`"), UInt8(ascii: "'"): open
            case UInt8(ascii: "["): UInt8(ascii: "]")
            default: nil
            }
        guard let close else {
            let start = pos
            while pos < bytes.count, StatementSplitter.isWordByte(bytes[pos]) { pos += 1 }
            guard pos > start else { throw Failure("expected a name, found \"\(Character(Unicode.Scalar(open)))\"") }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<pos]), as: UTF8.self)
        }
        pos += 1
        var name: [UInt8] = []
        while pos < bytes.count {
            let c = bytes[pos]
            pos += 1
            if c == close {
                if close != UInt8(ascii: "]"), pos < bytes.count, bytes[pos] == close {
                    name.append(c)
                    pos += 1
                    continue
                }
                return String(decoding: name, as: UTF8.self)
            }
            name.append(c)
        }
        throw Failure("a quoted name is not closed")
    }

    mutating func identifierList() throws -> [String] {
        try expect(UInt8(ascii: "("))
        var names: [String] = []
        repeat {
            names.append(try identifier())
            _ = keywordIf("ASC") || keywordIf("DESC")
            if keywordIf("COLLATE") { _ = try identifier() }
        } while consume(UInt8(ascii: ","))
        try expect(UInt8(ascii: ")"))
        return names
    }

    /// A word of a column type with its size, e.g. `VARCHAR(20)` or `DECIMAL(10, 2)`.
    mutating func typeWord() throws -> String {
        var word = try identifier()
        skipSpace()
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "(") {
            let start = pos
            try skipBalanced()
            word += String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<pos]), as: UTF8.self).filter {
                $0 != " "
            }
        }
        return word
    }

    /// Skips a parenthesised group (strings inside respected).
    mutating func skipBalanced() throws {
        skipSpace()
        guard consume(UInt8(ascii: "(")) else { return }
        var depth = 1
        while pos < bytes.count, depth > 0 {
            let c = bytes[pos]
            if c == UInt8(ascii: "'") || c == UInt8(ascii: "\"") {
                _ = try identifier()
                continue
            }
            if c == UInt8(ascii: "(") { depth += 1 }
            if c == UInt8(ascii: ")") { depth -= 1 }
            pos += 1
        }
        if depth > 0 { throw Failure("unbalanced parentheses") }
    }

    /// Skips one token of a column constraint (a word, a literal, or a parenthesised group).
    mutating func skipColumnConstraintToken() throws {
        skipSpace()
        guard pos < bytes.count else { return }
        let c = bytes[pos]
        if c == UInt8(ascii: "(") {
            try skipBalanced()
            return
        }
        if c == UInt8(ascii: "'") || c == UInt8(ascii: "\"") || c == UInt8(ascii: "[") || c == UInt8(ascii: "`") {
            _ = try identifier()
            return
        }
        if (c >= 48 && c <= 57) || c == UInt8(ascii: ".") || c == UInt8(ascii: "-") || c == UInt8(ascii: "+") {
            _ = try number()
            return
        }
        if StatementSplitter.isWordByte(c) {
            _ = keyword()
            return
        }
        throw Failure("unexpected \"\(Character(Unicode.Scalar(c)))\" in a column definition")
    }

    mutating func skipToCommaOrClose() throws {
        while let c = peek(), c != UInt8(ascii: ","), c != UInt8(ascii: ")") { try skipColumnConstraintToken() }
    }

    // MARK: Values

    /// One value of a VALUES list written into `builder`; returns whether it is NULL. Plain numbers and
    /// strings without escapes are copied straight from the statement.
    mutating func value(into builder: inout RecordBuilder) throws -> Bool {
        skipSpace()
        guard pos < bytes.count else { throw Failure("expected a value before the end of the statement") }
        let c = bytes[pos]
        if c == UInt8(ascii: "'") {
            let start = pos + 1
            if let close = memchr(bytes.baseAddress! + start, Int32(c), bytes.count - start) {
                let end = UnsafePointer(close.assumingMemoryBound(to: UInt8.self)) - bytes.baseAddress!
                if end + 1 >= bytes.count || bytes[end + 1] != c {
                    builder.append(bytes.baseAddress! + start, end - start)
                    pos = end + 1
                    return false
                }
            }
        } else if (c >= 48 && c <= 57) || c == UInt8(ascii: "-") {
            let range = try numberRange()
            builder.append(bytes.baseAddress! + range.lowerBound, range.count)
            return false
        } else if c | 0x20 == UInt8(ascii: "n"), isKeyword("NULL") {
            return true
        }
        guard let bytes = try value() else { return true }
        bytes.withUnsafeBufferPointer { if $0.count > 0 { builder.append($0.baseAddress!, $0.count) } }
        return false
    }

    /// One value of a VALUES list: bytes of its text form, `nil` for NULL.
    mutating func value() throws -> [UInt8]? {
        skipSpace()
        guard pos < bytes.count else { throw Failure("expected a value before the end of the statement") }
        let c = bytes[pos]
        if c == UInt8(ascii: "'") { return try string() }
        if c == UInt8(ascii: "-") || c == UInt8(ascii: "+") || c == UInt8(ascii: ".") || (c >= 48 && c <= 57) {
            return try number()
        }
        if c == UInt8(ascii: "X") || c == UInt8(ascii: "x"), pos + 1 < bytes.count, bytes[pos + 1] == UInt8(ascii: "'")
        {
            pos += 1
            let hex = try string()
            guard hex.count % 2 == 0,
                hex.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 | 0x20 >= 97 && $0 | 0x20 <= 102) })
            else {
                throw Failure("a blob literal X'…' must hold an even number of hexadecimal digits")
            }
            return hex.map { $0 >= 65 && $0 <= 70 ? $0 | 0x20 : $0 }
        }
        guard let word = keyword() else {
            throw Failure("unexpected \"\(Character(Unicode.Scalar(c)))\" where a value was expected")
        }
        switch word {
        case "NULL": return nil
        case "TRUE": return Array("1".utf8)
        case "FALSE": return Array("0".utf8)
        case "REPLACE":
            try expect(UInt8(ascii: "("))
            let text = try value(), pattern = try (expectComma(), value()).1,
                replacement = try (expectComma(), value()).1
            try expect(UInt8(ascii: ")"))
            guard let text else { return nil }
            guard let pattern, let replacement, !pattern.isEmpty else { return text }
            return Self.replacing(pattern, with: replacement, in: text)
        case "CHAR":
            try expect(UInt8(ascii: "("))
            var out: [UInt8] = []
            repeat {
                guard let digits = try value(), let code = UInt32(String(decoding: digits, as: UTF8.self)),
                    let scalar = Unicode.Scalar(code)
                else {
                    throw Failure("char() takes code points")
                }
                out += Array(String(Character(scalar)).utf8)
            } while consume(UInt8(ascii: ","))
            try expect(UInt8(ascii: ")"))
            return out
        case "UNISTR":
            try expect(UInt8(ascii: "("))
            guard let text = try value() else {
                try expect(UInt8(ascii: ")"))
                return nil
            }
            try expect(UInt8(ascii: ")"))
            return try Self.unistr(text)
        default:
            throw Failure("the value \(word) is not supported (only literals, replace(), char() and unistr())")
        }
    }

    private mutating func expectComma() throws { try expect(UInt8(ascii: ",")) }

    /// A 'string' with '' escapes; raw line breaks are part of it.
    mutating func string() throws -> [UInt8] {
        pos += 1
        var out: [UInt8] = []
        while pos < bytes.count {
            let start = pos
            while pos < bytes.count, bytes[pos] != UInt8(ascii: "'") { pos += 1 }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<pos]))
            guard pos < bytes.count else { break }
            pos += 1
            if pos < bytes.count, bytes[pos] == UInt8(ascii: "'") {
                out.append(bytes[pos])
                pos += 1
                continue
            }
            return out
        }
        throw Failure("a string is not closed before the end of the statement")
    }

    mutating func number() throws -> [UInt8] {
        Array(UnsafeBufferPointer(rebasing: bytes[try numberRange()]))
    }

    /// The text of a numeric literal, without a leading `+`.
    mutating func numberRange() throws -> Range<Int> {
        let start = pos
        let n = bytes.count
        guard let p = bytes.baseAddress else { throw Failure("a number has no digits") }
        var i = pos
        @inline(__always) func isDigit(_ c: UInt8) -> Bool { c &- 48 < 10 }
        @inline(__always) func isHex(_ c: UInt8) -> Bool { isDigit(c) || (c | 0x20) &- 97 < 6 }
        if p[i] == UInt8(ascii: "-") || p[i] == UInt8(ascii: "+") { i += 1 }
        let digitsStart = i
        var digits = 0
        if i + 1 < n, p[i] == UInt8(ascii: "0"), p[i + 1] | 0x20 == UInt8(ascii: "x") {
            i += 2
            while i < n, isHex(p[i]) { i += 1 }
            digits = i - digitsStart - 2
        } else {
            while i < n, isDigit(p[i]) { i += 1 }
            digits = i - digitsStart
            if i < n, p[i] == UInt8(ascii: ".") {
                i += 1
                let fraction = i
                while i < n, isDigit(p[i]) { i += 1 }
                digits += i - fraction
            }
            if digits > 0, i < n, p[i] | 0x20 == UInt8(ascii: "e") {
                i += 1
                if i < n, p[i] == UInt8(ascii: "-") || p[i] == UInt8(ascii: "+") { i += 1 }
                let exponentStart = i
                while i < n, isDigit(p[i]) { i += 1 }
                if i == exponentStart {
                    pos = i
                    throw Failure("a number's exponent has no digits")
                }
            }
        }
        pos = i
        guard digits > 0 else { throw Failure("a number has no digits") }
        return (p[start] == UInt8(ascii: "+") ? start + 1 : start)..<i
    }

    static func replacing(_ pattern: [UInt8], with replacement: [UInt8], in text: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        var i = 0
        while i < text.count {
            if text[i] == pattern[0], i + pattern.count <= text.count,
                text[i..<i + pattern.count].elementsEqual(pattern)
            {
                out += replacement
                i += pattern.count
            } else {
                out.append(text[i])
                i += 1
            }
        }
        return out
    }

    /// unistr()'s escapes: `\\`, and a backslash followed by 4 hex digits, `u` + 4, `+` + 6 or `U` + 8.
    static func unistr(_ text: [UInt8]) throws -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < text.count {
            guard text[i] == UInt8(ascii: "\\") else {
                out.append(text[i])
                i += 1
                continue
            }
            guard i + 1 < text.count else { throw Failure("unistr() ends with a lone backslash") }
            var length = 4, skip = 1
            switch text[i + 1] {
            case UInt8(ascii: "\\"):
                out.append(text[i + 1])
                i += 2
                continue
            case UInt8(ascii: "u"): skip = 2
            case UInt8(ascii: "+"):
                skip = 2
                length = 6
            case UInt8(ascii: "U"):
                skip = 2
                length = 8
            default: break
            }
            guard i + skip + length <= text.count,
                let code = UInt32(String(decoding: text[i + skip..<i + skip + length], as: UTF8.self), radix: 16),
                let scalar = Unicode.Scalar(code)
            else {
                throw Failure("unistr() has an invalid escape")
            }
            out += Array(String(Character(scalar)).utf8)
            i += skip + length
        }
        return out
    }
}
