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
/// Rows are what SQLite would store: a NULL (or no value) for an INTEGER PRIMARY KEY gets the next
/// rowid, columns an INSERT leaves out get their DEFAULT, table names match in any ASCII case. What
/// the reader cannot apply is refused, never skipped: a statement that changes rows otherwise
/// (UPDATE, DELETE, ALTER TABLE, ROLLBACK) is an `.unsupportedStatement` error, a dump cut inside a
/// statement or whose transaction never commits a `.truncated` one — neither can be read past.
/// Views, triggers and virtual tables (with their shadow tables) are listed in `notImported`.
///
/// ```swift
/// let dump = try SQLDumpReader(path: "legacy.sql.gz", tables: ["products"])
/// while let record = try dump.next() { print(record.kind!, record.strings) }
/// ```
public final class SQLDumpReader: RecordReader {
    /// Tables seen so far, in the order the dump creates them.
    public private(set) var tables: [TableSchema] = []
    /// What the dump defines but holds no rows of to read: views, triggers, virtual tables (their
    /// shadow tables are the virtual table's own storage, never read), e.g. `view "recent_orders"`.
    public private(set) var notImported: [String] = []
    public var name: String { splitter.name }
    /// The tables asked for, by `TableSchema.sqlName`.
    private let only: Set<String>?
    // `@exclusivity(unchecked)` here and below: every value of every row touches this state; the reader
    // is used by one thread at a time (it is not Sendable) and hands none of it out.
    @exclusivity(unchecked) private var splitter: StatementSplitter
    /// What is known of each table created so far, by `TableSchema.sqlName`.
    @exclusivity(unchecked) private var states: [String: TableState] = [:]
    /// Virtual tables (by `sqlName`): tables named `<virtual table>_…` are their storage.
    private var virtualTables: [String] = []
    /// Tables (by `sqlName`) with an INSERT trigger, and the trigger: SQLite would run it for each row.
    private var insertTriggers: [String: String] = [:]
    /// The line of a BEGIN whose COMMIT is still to come.
    private var openTransaction: Int?
    private var ended = false
    @exclusivity(unchecked) private var pending: [Record] = []
    @exclusivity(unchecked) private var pendingIndex = 0
    @exclusivity(unchecked) private var recordNumber = 0
    @exclusivity(unchecked) private var builder = RecordBuilder.forReader()
    /// The table of the last INSERT (dumps insert into one table many times in a row).
    @exclusivity(unchecked) private var lastTable = ""
    /// What is known about `lastTable`: its state (`nil` for a table no CREATE TABLE declared)
    /// and whether its rows are wanted.
    @exclusivity(unchecked) private var lastTableInfo: (state: TableState?, wanted: Bool)?

    /// A table as the reader keeps it: schema, the records' context, and the largest rowid so far.
    private final class TableState {
        let schema: TableSchema
        let context: Record.Context
        /// `context` for rows of INSERT OR REPLACE and OR IGNORE (made when first needed).
        private var conflictContexts: [Record.Conflict: Record.Context] = [:]
        let rowidColumn: Int?
        var maxRowid: Int64 = 0
        /// Rows read so far (the next row's `Record.ordinal` is one more).
        var rows = 0
        /// A virtual table's storage: never read.
        let isShadow: Bool

        init(schema: TableSchema, file: String, isShadow: Bool) {
            self.schema = schema
            context = Record.Context(
                file: file, schema: RecordSchema(names: schema.columns.map(\.name)), kind: schema.name)
            rowidColumn = schema.rowidColumn
            self.isShadow = isShadow
        }

        func context(for conflict: Record.Conflict?) -> Record.Context {
            guard let conflict else { return context }
            if let known = conflictContexts[conflict] { return known }
            let made = context.with(conflict: conflict)
            conflictContexts[conflict] = made
            return made
        }
    }

    /// - Parameter tables: only yield rows of these tables (all when `nil`); schemas are kept for all.
    public convenience init(path: String, tables: Set<String>? = nil, limits: ReaderLimits = .standard) throws {
        try self.init(source: try Input.open(path), tables: tables, limits: limits)
    }

    public init(source: ByteSource, tables: Set<String>? = nil, limits: ReaderLimits = .standard) throws {
        only = tables.map { Set($0.map(TableSchema.sqlName)) }
        splitter = StatementSplitter(
            source: try Input.decodingText(source, encoding: .utf8), maxBytes: limits.recordBytes)
    }

    deinit { splitter.deallocate() }

    public func next() throws -> Record? {
        while pendingIndex == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingIndex = 0
            guard !ended, try splitter.nextStatement() else {
                try finish()
                return nil
            }
            if splitter.isCut {
                ended = true
                throw failure(
                    .truncated,
                    "statement \(splitter.statementNumber) has no end (no \";\"): the dump was cut; nothing from "
                        + "here on is read")
            }
            try handleStatement()
        }
        defer { pendingIndex += 1 }
        return pending[pendingIndex]
    }

    /// At the end of the input: a transaction still open means the dump was cut or never finished
    /// (SQLite would roll its rows back).
    private func finish() throws {
        guard !ended else { return }
        ended = true
        if let line = openTransaction {
            throw ReaderError(
                .truncated,
                "the transaction begun at line \(line) never commits (the dump ends without COMMIT): it was cut or "
                    + "is unfinished, and SQLite would keep none of its rows",
                at: SourcePosition(file: splitter.name, line: splitter.line, column: 1))
        }
    }

    /// An error at the start of the current statement, which nothing after can be read past.
    private func failure(_ kind: ReaderError.Kind, _ message: String) -> ReaderError {
        ReaderError(
            kind, message, at: SourcePosition(file: splitter.name, line: splitter.statementLine, column: 1),
            recoverable: false)
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
                    try create(&parser)
                } else if let word = parser.keyword() {
                    try other(word, &parser)
                } else if !parser.atEnd {
                    throw SQLParser.Failure("expected a statement keyword")
                }
            } catch let failure as SQLParser.Failure {
                throw syntaxError(failure.message, parser)
            }
        }
    }

    private func create(_ parser: inout SQLParser) throws {
        var next = parser.keyword()
        if next == "TEMP" || next == "TEMPORARY" { next = parser.keyword() }
        let unique = next == "UNIQUE"
        if unique { next = parser.keyword() }
        switch next {
        case "TABLE": try createTable(&parser)
        case "VIRTUAL":
            _ = parser.keyword()
            skipIfNotExists(&parser)
            noteVirtualTable(try qualifiedName(&parser))
        case "VIEW":
            skipIfNotExists(&parser)
            notImported.append("view \(try qualifiedName(&parser).debugDescription)")
        case "TRIGGER":
            skipIfNotExists(&parser)
            let name = try qualifiedName(&parser)
            notImported.append("trigger \(name.debugDescription)")
            // [BEFORE | AFTER | INSTEAD OF] INSERT | UPDATE [OF a, b] | DELETE ON table
            var fires = false
            while !parser.atEnd {
                if let word = parser.keyword() {
                    if word == "ON" { break }
                    if word == "INSERT" { fires = true }
                } else if (try? parser.skipColumnConstraintToken()) == nil {
                    parser.pos += 1  // a comma between the columns of UPDATE OF
                }
            }
            if fires, let table = try? qualifiedName(&parser) {
                insertTriggers[TableSchema.sqlName(table)] = name
                lastTableInfo = nil
            }
        case "INDEX": try createIndex(&parser, unique: unique)
        default: break
        }
    }

    /// `CREATE [UNIQUE] INDEX name ON table (column, …)`: a unique key or a fetch index of the
    /// table (not a partial one, nor one on expressions).
    private func createIndex(_ parser: inout SQLParser, unique: Bool) throws {
        skipIfNotExists(&parser)
        _ = try qualifiedName(&parser)
        guard parser.keyword() == "ON" else { return }
        let table = try qualifiedName(&parser)
        guard let columns = try? parser.identifierList(), parser.keyword() != "WHERE" else { return }
        let key = TableSchema.sqlName(table)
        guard let index = tables.firstIndex(where: { TableSchema.sqlName($0.name) == key }),
            columns.allSatisfy({ tables[index].columnIndex(named: $0) != nil })
        else { return }
        if unique { tables[index].uniqueKeys.append(columns) } else { tables[index].indexes.append(columns) }
    }

    /// Statements other than INSERT and CREATE: those that change nothing are passed over; those
    /// that change rows or tables in a way the reader cannot apply end the reading.
    private func other(_ word: String, _ parser: inout SQLParser) throws {
        switch word {
        case "BEGIN":
            openTransaction = openTransaction ?? splitter.statementLine
        case "COMMIT", "END":
            openTransaction = nil
        case "PRAGMA", "SAVEPOINT", "RELEASE", "ANALYZE", "VACUUM", "REINDEX", "SELECT", "EXPLAIN", "ATTACH",
            "DETACH":
            break  // nothing that changes this database's rows (an attached one is never read)
        case "DELETE", "UPDATE":
            if word == "DELETE" { _ = parser.keyword() }  // FROM
            if word == "UPDATE", parser.isKeyword("OR") { _ = parser.keyword() }
            let table = try qualifiedName(&parser)
            // `sqlite3 .dump` empties sqlite_sequence before refilling it: SQLite's own bookkeeping.
            guard !TableSchema.sqlName(table).hasPrefix("sqlite_") else { return }
            throw unsupported("\(word) of \(table.debugDescription) changes rows already read")
        case "DROP":
            let kind = parser.keyword()
            skipIfExists(&parser)
            let name = try qualifiedName(&parser)
            if kind == "TRIGGER" { insertTriggers = insertTriggers.filter { $0.value != name } }
            guard kind == "TABLE", let state = states[TableSchema.sqlName(name)], !state.isShadow else { return }
            throw unsupported("DROP TABLE \(name.debugDescription) drops a table whose rows were read")
        case "ALTER":
            _ = parser.keyword()
            throw unsupported("ALTER TABLE \(try qualifiedName(&parser).debugDescription) changes a table")
        case "ROLLBACK":
            throw unsupported("ROLLBACK undoes rows the dump inserted before it")
        default:
            throw unsupported("\(word) is not a statement of a dump")
        }
    }

    private func unsupported(_ what: String) -> ReaderError {
        failure(
            .unsupportedStatement,
            "statement \(splitter.statementNumber): \(what); Sluice reads a dump's tables and rows without running "
                + "it — load it into SQLite (sqlite3 new.db < dump.sql) and import the database file instead")
    }

    private func skipIfNotExists(_ parser: inout SQLParser) {
        if parser.isKeyword("IF") {
            _ = parser.keyword()
            _ = parser.keyword()
        }
    }

    private func skipIfExists(_ parser: inout SQLParser) {
        if parser.isKeyword("IF") { _ = parser.keyword() }
    }

    /// `name` or `schema.name`: the name.
    private func qualifiedName(_ parser: inout SQLParser) throws -> String {
        let name = try parser.identifier()
        return parser.consume(UInt8(ascii: ".")) ? try parser.identifier() : name
    }

    private func noteVirtualTable(_ name: String) {
        virtualTables.append(TableSchema.sqlName(name))
        notImported.append("virtual table \(name.debugDescription)")
    }

    /// `sqlite3 .dump` writes a virtual table as a row of sqlite_schema (with writable_schema on).
    private func schemaRows(_ parser: inout SQLParser) throws {
        let columns = parser.peek() == UInt8(ascii: "(") ? try parser.identifierList() : []
        guard parser.isKeyword("VALUES") else { return }
        let nameIndex = columns.firstIndex { $0.lowercased() == "name" } ?? 1
        let sqlIndex = columns.firstIndex { $0.lowercased() == "sql" } ?? 4
        repeat {
            try parser.expect(UInt8(ascii: "("))
            var values: [[UInt8]?] = []
            repeat { values.append(try parser.value()) } while parser.consume(UInt8(ascii: ","))
            try parser.expect(UInt8(ascii: ")"))
            guard nameIndex < values.count, sqlIndex < values.count, let name = values[nameIndex],
                let sql = values[sqlIndex]
            else { continue }
            let words = String(decoding: sql, as: UTF8.self).uppercased().split { $0 == " " || $0 == "\n" }
            if words.starts(with: ["CREATE", "VIRTUAL", "TABLE"]) {
                noteVirtualTable(String(decoding: name, as: UTF8.self))
            }
        } while parser.consume(UInt8(ascii: ","))
    }

    private func createTable(_ parser: inout SQLParser) throws {
        skipIfNotExists(&parser)
        let name = try qualifiedName(&parser)
        try parser.expect(UInt8(ascii: "("))
        var columns: [TableSchema.Column] = [], primaryKey: [String] = [], foreign: [TableSchema.ForeignKey] = [],
            unique: [[String]] = [], generated: [String] = []
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
            var defaultValue = TableSchema.Default.null
            var isGenerated = false
            // The type's words come first; once a constraint begins, other words are its own
            // (`ON DELETE CASCADE`, `DEFERRABLE INITIALLY DEFERRED`, a collation's name).
            var inConstraints = false
            while let c = parser.peek(), c != UInt8(ascii: ","), c != UInt8(ascii: ")") {
                let word = parser.peekKeyword()
                if let word, SQLParser.columnConstraintWords.contains(word) { inConstraints = true }
                switch word {
                case "GENERATED", "AS":
                    // [GENERATED ALWAYS] AS (expression) [STORED | VIRTUAL]
                    _ = parser.keyword()
                    if word == "GENERATED" { _ = parser.keywordIf("ALWAYS") }
                    if word == "AS" {
                        isGenerated = true
                        if parser.peek() == UInt8(ascii: "(") { try parser.skipBalanced() }
                    }
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
                case "DEFAULT":
                    _ = parser.keyword()
                    defaultValue = try parser.defaultClause()
                case "CONSTRAINT", "COLLATE":
                    _ = parser.keyword()
                    _ = try parser.identifier()  // the constraint's or the collation's name
                case "CHECK":
                    _ = parser.keyword()
                    if parser.peek() == UInt8(ascii: "(") { try parser.skipBalanced() }
                default:
                    if !inConstraints, type.isEmpty || !type.last!.hasSuffix(")") {
                        type.append(try parser.typeWord())
                    } else {
                        try parser.skipColumnConstraintToken()
                    }
                }
            }
            if isGenerated { generated.append(column) }
            columns.append(
                .init(
                    name: column, declaredType: type.joined(separator: " "), isNotNull: notNull,
                    defaultValue: defaultValue))
        } while parser.consume(UInt8(ascii: ","))
        try parser.expect(UInt8(ascii: ")"))
        var withoutRowid = false
        while let word = parser.keyword() {  // table options: WITHOUT ROWID, STRICT
            if word == "WITHOUT", parser.keyword() == "ROWID" { withoutRowid = true }
            _ = parser.consume(UInt8(ascii: ","))
        }
        var schema = TableSchema(
            name: name, columns: columns, primaryKey: primaryKey, foreignKeys: foreign, uniqueKeys: unique,
            isWithoutRowid: withoutRowid)
        schema.leaveOut(generated: generated)
        let key = TableSchema.sqlName(name)
        // Created again (IF NOT EXISTS, or a script repeating itself): SQLite keeps the table it has.
        if states[key] != nil {
            lastTableInfo = nil
            return
        }
        let isShadow = TableSchema.isShadow(key, of: virtualTables)
        if !isShadow {
            tables.removeAll { TableSchema.sqlName($0.name) == key }
            tables.append(schema)
            notImported += generated.map { TableSchema.generatedColumnNote($0, of: name) }
        }
        states[key] = TableState(schema: schema, file: splitter.name, isShadow: isShadow)
        lastTableInfo = nil
    }

    private func insert(_ parser: inout SQLParser, replacing: Bool) throws {
        var conflict: Record.Conflict? = replacing ? .replace : nil
        if !replacing, parser.isKeyword("OR") {
            switch parser.keyword() {
            case "REPLACE": conflict = .replace
            case "IGNORE": conflict = .ignore
            default: break  // ABORT, FAIL, ROLLBACK: a repeated key is an error, as without a clause
            }
        }
        guard parser.isKeyword("INTO") else { throw SQLParser.Failure("expected INTO") }
        let previous = lastTable
        var table = try parser.identifier(reusing: previous)
        if parser.consume(UInt8(ascii: ".")) { table = try parser.identifier() }
        let sameTable = table == previous  // the same string object when reused: a cheap comparison
        if !sameTable || lastTableInfo == nil {
            lastTable = table
            let key = TableSchema.sqlName(table)
            if key == "sqlite_schema" || key == "sqlite_master" {
                lastTableInfo = nil
                return try schemaRows(&parser)
            }
            let state = states[key]
            if let trigger = insertTriggers[key] {
                throw unsupported(
                    "the INSERT into \(table.debugDescription) would run its trigger \(trigger.debugDescription), "
                        + "whose changes Sluice cannot make")
            }
            // A virtual table's rows (a script filling an FTS table) are its module's, like its shadow tables.
            let wanted =
                state?.isShadow != true && !virtualTables.contains(key)
                && (only.map { $0.contains(key) } ?? !key.hasPrefix("sqlite_"))
            lastTableInfo = (state, wanted)
        }
        let state = lastTableInfo!.state
        let named = parser.peek() == UInt8(ascii: "(") ? try parser.identifierList() : nil
        let defaults = parser.isKeyword("DEFAULT")
        guard parser.isKeyword("VALUES") else {
            throw SQLParser.Failure("expected VALUES (only INSERT … VALUES is supported)")
        }
        // Rows of tables not asked for are passed over unread (their syntax is checked by whoever reads them).
        guard lastTableInfo!.wanted else { return }
        let line = splitter.lineAndColumn(at: 0).line
        if let state, named != nil || defaults {
            return try insertNamed(
                named ?? [], defaults: defaults, into: state, &parser, line: line, conflict: conflict)
        }
        let context =
            state?.context(for: conflict)
            ?? Record.Context(
                file: splitter.name, schema: named.map { RecordSchema(names: $0) }, kind: table, conflict: conflict)
        let expected = context.schema?.names.count
        let rowid = state?.rowidColumn ?? -1
        repeat {
            try parser.expect(UInt8(ascii: "("))
            builder.begin()
            repeat {
                let start = builder.length
                var isNull = try parser.value(into: &builder)
                if builder.count == rowid { isNull = assignRowid(state!, start: start, isNull: isNull) }
                builder.endField(start: start, column: 1, lineDelta: 0, isNull: isNull, isBlob: parser.lastValueIsBlob)
            } while parser.consume(UInt8(ascii: ","))
            try parser.expect(UInt8(ascii: ")"))
            if let expected, builder.count != expected {
                throw SQLParser.Failure(
                    "a row of \(table) has \(builder.count) values, the table has \(expected) columns")
            }
            recordNumber += 1
            var record = Record(
                context: context, line: line, column: 1, number: recordNumber, storage: builder.finish())
            if let state {
                state.rows += 1
                record.ordinal = state.rows
            }
            pending.append(record)
        } while parser.consume(UInt8(ascii: ","))
        try expectEnd(&parser)
    }

    private func expectEnd(_ parser: inout SQLParser) throws {
        parser.skipSpace()
        guard parser.atEnd else { throw SQLParser.Failure("unexpected text after the VALUES list") }
    }

    /// The rowid column's value just written from `start`: a NULL becomes the next rowid (the
    /// largest so far plus one, as SQLite picks it); an integer raises the largest. Returns whether
    /// the field is still NULL.
    private func assignRowid(_ state: TableState, start: Int, isNull: Bool) -> Bool {
        if isNull {
            guard state.maxRowid < Int64.max else { return true }
            state.maxRowid += 1
            let digits = Array(String(state.maxRowid).utf8)
            builder.truncate(to: start)
            digits.withUnsafeBufferPointer { builder.append($0.baseAddress!, $0.count) }
            return false
        }
        if let value = builder.withField(from: start, IntegerText.value) { state.maxRowid = max(state.maxRowid, value) }
        return false
    }

    /// `INSERT INTO t (b, a) VALUES …` or `… DEFAULT VALUES`: rows in the table's column order, the
    /// columns left out holding their defaults.
    private func insertNamed(
        _ named: [String], defaults: Bool, into state: TableState, _ parser: inout SQLParser, line: Int,
        conflict: Record.Conflict?
    ) throws {
        let schema = state.schema
        let positions = try named.map { name in
            guard let index = schema.columnIndex(named: name) else {
                throw SQLParser.Failure("table \(schema.name) has no column \(name.debugDescription)")
            }
            return index
        }
        repeat {
            var given: [[UInt8]?] = [], blobs = Set<Int>()
            if !defaults {
                try parser.expect(UInt8(ascii: "("))
                repeat {
                    given.append(try parser.value())
                    if parser.lastValueIsBlob { blobs.insert(given.count - 1) }
                } while parser.consume(UInt8(ascii: ","))
                try parser.expect(UInt8(ascii: ")"))
                guard given.count == named.count else {
                    throw SQLParser.Failure(
                        "a row of \(schema.name) has \(given.count) values for \(named.count) columns")
                }
            }
            builder.begin()
            for (index, column) in schema.columns.enumerated() {
                let start = builder.length
                var value: [UInt8]?, isBlob = false
                if let place = positions.firstIndex(of: index) {
                    value = given[place]
                    isBlob = blobs.contains(place)
                } else {
                    switch column.defaultValue {
                    case .null: value = nil
                    case .literal(let bytes): value = bytes
                    case .blob(let hex):
                        value = hex
                        isBlob = true
                    case .expression(let text):
                        guard index == state.rowidColumn else {
                            throw SQLParser.Failure(
                                "the row leaves out column \(column.name) of \(schema.name), whose default \(text) "
                                    + "only SQLite can compute; name the column and its value")
                        }
                    }
                }
                if let value, !value.isEmpty {
                    value.withUnsafeBufferPointer { builder.append($0.baseAddress!, $0.count) }
                }
                var isNull = value == nil
                if index == state.rowidColumn { isNull = assignRowid(state, start: start, isNull: isNull) }
                builder.endField(start: start, column: 1, lineDelta: 0, isNull: isNull, isBlob: isBlob)
            }
            recordNumber += 1
            state.rows += 1
            var record = Record(
                context: state.context(for: conflict), line: line, column: 1, number: recordNumber,
                storage: builder.finish())
            record.ordinal = state.rows
            pending.append(record)
        } while !defaults && parser.consume(UInt8(ascii: ","))
        try expectEnd(&parser)
    }
}
