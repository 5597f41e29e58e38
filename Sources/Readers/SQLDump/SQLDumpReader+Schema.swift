extension SQLDumpReader {
    // MARK: Tables and the rest of the schema (CREATE TABLE, INDEX, VIEW, TRIGGER, virtual tables)

    /// `CREATE [TEMP] [UNIQUE] TABLE | VIRTUAL TABLE | VIEW | TRIGGER | INDEX …`: tables' schemas and keys, and
    /// what the dump defines but holds no rows of.
    func create(_ parser: inout SQLParser) throws {
        var next = parser.keyword()
        if next == "TEMP" || next == "TEMPORARY" { next = parser.keyword() }
        let unique = next == "UNIQUE"
        if unique { next = parser.keyword() }
        switch next {
        case "TABLE": try createTable(&parser)
        case "VIRTUAL":
            _ = parser.keyword()
            skipIfNotExists(&parser)
            let name = try qualifiedName(&parser)
            noteVirtualTable(name, sql: String(decoding: parser.bytes[parser.pos...], as: UTF8.self))
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

    func skipIfNotExists(_ parser: inout SQLParser) {
        if parser.isKeyword("IF") {
            _ = parser.keyword()
            _ = parser.keyword()
        }
    }

    func skipIfExists(_ parser: inout SQLParser) {
        if parser.isKeyword("IF") { _ = parser.keyword() }
    }

    /// `name` or `schema.name`: the name.
    func qualifiedName(_ parser: inout SQLParser) throws -> String {
        let name = try parser.identifier()
        return parser.consume(UInt8(ascii: ".")) ? try parser.identifier() : name
    }

    /// A virtual table: its shadow tables are never read. A full-text table with its own documents
    /// is read as a table of its columns: from its INSERTs (a script), or from its `_content`
    /// shadow table (a dump: the row's id first, then the columns in order).
    private func noteVirtualTable(_ name: String, sql: String) {
        let key = TableSchema.sqlName(name)
        virtualTables.append(key)
        guard let fullText = FullTextTable(name: name, sql: sql), fullText.hasOwnContent, states[key] == nil else {
            notImported.append(FullTextTable(name: name, sql: sql)?.note ?? "virtual table \(name.debugDescription)")
            return
        }
        notImported.append(fullText.note)
        let schema = TableSchema(
            name: name, columns: fullText.columns.map { TableSchema.Column(name: $0, declaredType: "") },
            primaryKey: [], foreignKeys: [], uniqueKeys: [], isWithoutRowid: false)
        fullTextTables.insert(key)
        tables.append(schema)
        states[key] = TableState(schema: schema, file: splitter.name, isShadow: false)
        lastTableInfo = nil
    }

    /// `sqlite3 .dump` writes a virtual table as a row of sqlite_schema (with writable_schema on).
    func schemaRows(_ parser: inout SQLParser) throws {
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
                noteVirtualTable(String(decoding: name, as: UTF8.self), sql: String(decoding: sql, as: UTF8.self))
            }
        } while parser.consume(UInt8(ascii: ","))
    }

    /// `CREATE TABLE name (column definitions and table constraints) [options]`: the table's schema,
    /// kept unless the table exists already.
    private func createTable(_ parser: inout SQLParser) throws {
        skipIfNotExists(&parser)
        let name = try qualifiedName(&parser)
        try parser.expect(UInt8(ascii: "("))
        var table = TableDefinition()
        repeat {
            let word = parser.peekKeyword()
            if ["CONSTRAINT", "PRIMARY", "UNIQUE", "FOREIGN", "CHECK"].contains(word) {
                try tableConstraint(&parser, startingWith: word, into: &table)
                try parser.skipToCommaOrClose()
            } else {
                try columnDefinition(&parser, into: &table)
            }
        } while parser.consume(UInt8(ascii: ","))
        try parser.expect(UInt8(ascii: ")"))
        let withoutRowid = isWithoutRowid(&parser)
        var schema = TableSchema(
            name: name, columns: table.columns, primaryKey: table.primaryKey, foreignKeys: table.foreign,
            uniqueKeys: table.unique, isWithoutRowid: withoutRowid)
        schema.leaveOut(generated: table.generated)
        addTable(schema, named: name, generated: table.generated)
    }

    /// What the definitions of a CREATE TABLE declare, as they are read.
    private struct TableDefinition {
        var columns: [TableSchema.Column] = []
        var primaryKey: [String] = []
        var foreign: [TableSchema.ForeignKey] = []
        var unique: [[String]] = []
        var generated: [String] = []
    }

    /// A table constraint, `word` its first keyword: `[CONSTRAINT name]` then `PRIMARY KEY (…)`,
    /// `UNIQUE (…)`, `FOREIGN KEY (…) REFERENCES table [(…)]` or `CHECK (…)`.
    private func tableConstraint(
        _ parser: inout SQLParser, startingWith word: String?, into table: inout TableDefinition
    ) throws {
        if word == "CONSTRAINT" {
            _ = parser.keyword()
            _ = try parser.identifier()
        }
        switch parser.keyword() {
        case "PRIMARY":
            _ = parser.keyword()
            table.primaryKey = try parser.identifierList()
        case "UNIQUE":
            table.unique.append(try parser.identifierList())
        case "FOREIGN":
            _ = parser.keyword()
            let columns = try parser.identifierList()
            guard parser.keyword() == "REFERENCES" else {
                throw SQLParser.Failure("expected REFERENCES in a foreign key")
            }
            let referenced = try parser.identifier()
            let referencedColumns = parser.peek() == UInt8(ascii: "(") ? try parser.identifierList() : []
            table.foreign.append(.init(columns: columns, table: referenced, referencedColumns: referencedColumns))
        default:
            try parser.skipBalanced()
        }
    }

    /// A column definition: its name, the words of its type, then its constraints (`NOT NULL`,
    /// `DEFAULT …`, `PRIMARY KEY`, `UNIQUE`, `REFERENCES …`, `[GENERATED ALWAYS] AS (…)`, …).
    private func columnDefinition(_ parser: inout SQLParser, into table: inout TableDefinition) throws {
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
                table.primaryKey = [column]
            case "NOT":
                _ = parser.keyword()
                _ = parser.keyword()
                notNull = true
            case "UNIQUE":
                _ = parser.keyword()
                table.unique.append([column])
            case "REFERENCES":
                _ = parser.keyword()
                let referenced = try parser.identifier()
                let referencedColumns = parser.peek() == UInt8(ascii: "(") ? try parser.identifierList() : []
                table.foreign.append(
                    .init(columns: [column], table: referenced, referencedColumns: referencedColumns))
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
        if isGenerated { table.generated.append(column) }
        table.columns.append(
            .init(
                name: column, declaredType: type.joined(separator: " "), isNotNull: notNull,
                defaultValue: defaultValue))
    }

    /// The options after a table's definitions (`WITHOUT ROWID`, `STRICT`): whether it is WITHOUT ROWID.
    private func isWithoutRowid(_ parser: inout SQLParser) -> Bool {
        var withoutRowid = false
        while let word = parser.keyword() {
            if word == "WITHOUT", parser.keyword() == "ROWID" { withoutRowid = true }
            _ = parser.consume(UInt8(ascii: ","))
        }
        return withoutRowid
    }

    /// Keeps a created table: its schema among `tables` (unless it is a virtual table's storage) and
    /// its state for the rows to come.
    private func addTable(_ schema: TableSchema, named name: String, generated: [String]) {
        let key = TableSchema.sqlName(name)
        // Created again (IF NOT EXISTS, or a script repeating itself): SQLite keeps the table it has.
        if states[key] != nil {
            lastTableInfo = nil
            return
        }
        let isShadow = TableSchema.isShadow(key, of: virtualTables)
        // A full-text table's documents (`doc_fts_content`): rows of that table, their id left out.
        if isShadow, key.hasSuffix("_content"), fullTextTables.contains(String(key.dropLast(8))),
            let documents = states[String(key.dropLast(8))]
        {
            states[key] = TableState(
                schema: documents.schema, file: splitter.name, isShadow: false, skipsFirstValue: true)
            lastTableInfo = nil
            return
        }
        if !isShadow {
            tables.removeAll { TableSchema.sqlName($0.name) == key }
            tables.append(schema)
            notImported += generated.map { TableSchema.generatedColumnNote($0, of: name) }
        }
        states[key] = TableState(schema: schema, file: splitter.name, isShadow: isShadow)
        lastTableInfo = nil
    }
}
