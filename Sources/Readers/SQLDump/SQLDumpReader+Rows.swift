extension SQLDumpReader {
    // MARK: Rows (INSERT … VALUES)

    /// Whether the INSERT is a full-text table's command (`INSERT INTO t(t) VALUES('optimize')`),
    /// which works on its index, not a row.
    private func isFullTextCommand(_ named: [String]?, into table: String) -> Bool {
        guard let named, named.count == 1 else { return false }
        let key = TableSchema.sqlName(table)
        return TableSchema.sqlName(named[0]) == key && fullTextTables.contains(key)
    }

    /// Whether the rows of table `key` are read: not a virtual table's storage nor (but for a
    /// full-text table's documents) its rows, and among the tables asked for.
    private func isWanted(_ key: String, _ state: TableState?) -> Bool {
        state?.isShadow != true && (!virtualTables.contains(key) || fullTextTables.contains(key))
            && (only.map { $0.contains(state.map { TableSchema.sqlName($0.schema.name) } ?? key) }
                ?? !key.hasPrefix("sqlite_"))
    }

    /// `INSERT [OR REPLACE | OR IGNORE] INTO table [(columns)] VALUES (…), …` (or `REPLACE INTO`, or
    /// `DEFAULT VALUES`): the rows of a wanted table as records in `pending`.
    func insert(_ parser: inout SQLParser, replacing: Bool) throws {
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
            if let trigger = insertTriggers[key] {
                throw unsupported(
                    "the INSERT into \(table.debugDescription) would run its trigger \(trigger.debugDescription), "
                        + "whose changes Sluice cannot make")
            }
            lastTableInfo = (states[key], isWanted(key, states[key]))
        }
        let state = lastTableInfo!.state
        let named = parser.peek() == UInt8(ascii: "(") ? try parser.identifierList() : nil
        if isFullTextCommand(named, into: table) { return }
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
        let skipsFirst = state?.skipsFirstValue == true
        repeat {
            try parser.expect(UInt8(ascii: "("))
            builder.begin()
            if skipsFirst {
                _ = try parser.value()
                guard parser.consume(UInt8(ascii: ",")) else {
                    throw SQLParser.Failure("expected a document's columns")
                }
            }
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
        // `rowid` (or `oid`, `_rowid_`, a full-text table's `docid`) names the row's id: not a column.
        let positions = try named.map { name -> Int in
            if let index = schema.columnIndex(named: name) { return index }
            if ["rowid", "oid", "_rowid_", "docid"].contains(TableSchema.sqlName(name)) {
                return state.rowidColumn ?? -1
            }
            throw SQLParser.Failure("table \(schema.name) has no column \(name.debugDescription)")
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
