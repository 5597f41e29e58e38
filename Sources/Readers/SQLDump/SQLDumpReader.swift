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
