import Readers
import Testing

func readDump(_ text: String, tables: Set<String>? = nil) throws -> (records: [Record], tables: [TableSchema]) {
    var results: [([Record], [TableSchema])] = []
    for chunk in [Int.max, 1, 5] {
        let reader = try SQLDumpReader(
            source: MemoryByteSource(Array(text.utf8), name: "d.sql", chunkSize: chunk), tables: tables)
        var records: [Record] = []
        while let record = try reader.next() { records.append(record) }
        results.append((records, reader.tables))
    }
    #expect(
        results.allSatisfy { $0.0.map(\.strings) == results[0].0.map(\.strings) && $0.1 == results[0].1 },
        "chunked reads must agree")
    return results[0]
}

@Suite struct SQLDumpReaderTests {
    static let dump = """
        PRAGMA foreign_keys=OFF;
        BEGIN TRANSACTION;
        CREATE TABLE "Customer Table"(
          id INTEGER PRIMARY KEY,
          [full name] VARCHAR(40) NOT NULL,
          `email` TEXT UNIQUE,
          balance DECIMAL(10, 2) DEFAULT 0.0 -- trailing comment; with a semicolon
        );
        CREATE TABLE orders(id INTEGER NOT NULL, customer INTEGER REFERENCES "Customer Table"(id), note TEXT, photo \
        BLOB,
          PRIMARY KEY(id), FOREIGN KEY(customer) REFERENCES "Customer Table"(id)) WITHOUT ROWID;
        INSERT INTO "Customer Table" VALUES(1,'O''Brien','ob@example.com',12.5),(2,'Line
        break',NULL,-3e-2);
        INSERT INTO orders VALUES(10,1,replace('a\\nb','\\n',char(10)),X'00FF');
        INSERT INTO orders VALUES(11,2,unistr('tab\\0009end \\u00e9\\+01F600'),NULL);
        CREATE INDEX orders_customer ON orders(customer);
        /* a block comment ; */
        INSERT INTO orders(id, note) VALUES(12,'only two columns');
        CREATE VIEW v AS SELECT * FROM orders;
        CREATE TRIGGER t AFTER INSERT ON orders BEGIN UPDATE orders SET note = 'x;y' WHERE id = new.id; SELECT 1; END;
        COMMIT;
        """

    /// `sqlite3 .dump` prints a REAL with 20 significant digits; the reader gives the value SQLite
    /// stores — the double — as its shortest text, and whole numbers without a point. Integer
    /// literals stay as written, unless beyond 64 bits (SQLite reads those as REALs).
    @Test func realLiteralsAreTheDoublesSQLiteStores() throws {
        let (records, _) = try readDump(
            """
            CREATE TABLE t(id INTEGER PRIMARY KEY, x NUMERIC, y);
            INSERT INTO t VALUES(1,1.9799999999999999822,611.66999999999995905);
            INSERT INTO t VALUES(2,3.0,-2.5e-3),(3,1e300,12345678901234567890123),(4,0.1,.5);
            """)
        #expect(
            records.map(\.strings) == [
                ["1", "1.98", "611.67"], ["2", "3", "-0.0025"], ["3", "1e+300", "1.2345678901234568e+22"],
                ["4", "0.1", "0.5"],
            ])
    }

    @Test func schemasAndRowsFollowTheDump() throws {
        let (records, tables) = try readDump(Self.dump)
        #expect(tables.map(\.name) == ["Customer Table", "orders"])
        let customer = tables[0]
        #expect(customer.columns.map(\.name) == ["id", "full name", "email", "balance"])
        #expect(customer.columns.map(\.declaredType) == ["INTEGER", "VARCHAR(40)", "TEXT", "DECIMAL(10,2)"])
        #expect(customer.primaryKey == ["id"] && customer.uniqueKeys == [["email"]] && customer.columns[1].isNotNull)
        #expect(tables[1].primaryKey == ["id"])
        #expect(
            tables[1].foreignKeys.first
                == TableSchema.ForeignKey(columns: ["customer"], table: "Customer Table", referencedColumns: ["id"]))
        #expect(records.map(\.kind) == ["Customer Table", "Customer Table", "orders", "orders", "orders"])
        #expect(records[0].strings == ["1", "O'Brien", "ob@example.com", "12.5"])
        // A REAL literal is the double SQLite stores for it, in its shortest spelling.
        #expect(records[1].strings == ["2", "Line\nbreak", nil, "-0.03"])
        #expect(records[2].strings == ["10", "1", "a\nb", "00ff"])
        #expect(records[3].strings == ["11", "2", "tab\tend é😀", nil])
        // An INSERT naming some columns: the table's row, the others at their defaults.
        #expect(records[4].strings == ["12", nil, "only two columns", nil])
        #expect(records[4].schema?.names == ["id", "customer", "note", "photo"])
        #expect(tables[1].isWithoutRowid && tables[0].columns[3].defaultValue == .literal(Array("0".utf8)))
        #expect(records[1].position.line == 11 && records[1].number == 2)
    }

    @Test func onlyTheChosenTablesYieldRows() throws {
        let (records, tables) = try readDump(Self.dump, tables: ["orders"])
        #expect(records.count == 3 && tables.count == 2)
    }

    @Test func aBadStatementIsAnErrorWithNumberAndLineAndReadingGoesOn() throws {
        let text =
            "CREATE TABLE t(a, b);\nINSERT INTO t VALUES(1,2);\nINSERT INTO t VALUES(3,\n  oops);\nINSERT INTO t "
            + "VALUES(5,6);\nINSERT INTO t VALUES(7);\n"
        let reader = try SQLDumpReader(source: MemoryByteSource(text, name: "d.sql"))
        #expect(try reader.next()?.strings == ["1", "2"])
        do {
            _ = try reader.next()
            Issue.record("expected an error")
        } catch let error as ReaderError {
            #expect(error.kind == .sqlSyntax && error.isRecoverable)
            #expect(error.message.hasPrefix("statement 3:") && error.position?.line == 4 && error.position?.column == 7)
        }
        #expect(try reader.next()?.strings == ["5", "6"])
        #expect { _ = try reader.next() } throws: { error in
            (error as? ReaderError).map { $0.message.contains("has 1 values, the table has 2 columns") } ?? false
        }
        #expect(try reader.next() == nil)
    }

    @Test func statementsReadInPlaceAndCopiedAgree() throws {
        // One-line statements are read where they lie in the input buffer unless a quote, comment or
        // `[name]` needs the general way; a 1-byte chunk always takes the general way.
        let text = #"""
            CREATE TABLE t(a, b, c);
            INSERT INTO t VALUES(-1,'x;y','it''s'); INSERT INTO t VALUES(2/1,"q",NULL);
            INSERT INTO t VALUES(3,'a -- b','/* c */'); -- a comment; with a semicolon
            INSERT INTO t VALUES(4,'x','y') /* block; */ ;
            INSERT INTO [t] VALUES(5,'','''');
            INSERT INTO t VALUES(6, nULl, 'end');
            INSERT INTO t VALUES(7, 'bad' 'two', 1);
            INSERT INTO t VALUES(8,'z','w');
            """#
        var outcomes: [[String]] = []
        for chunk in [Int.max, 1] {
            let reader = try SQLDumpReader(source: MemoryByteSource(Array(text.utf8), name: "d.sql", chunkSize: chunk))
            var outcome: [String] = []
            while true {
                do {
                    guard let record = try reader.next() else { break }
                    outcome.append(record.strings.map { $0 ?? "NULL" }.joined(separator: "|"))
                } catch let error as ReaderError {
                    outcome.append("\(error.position?.line ?? 0):\(error.position?.column ?? 0) \(error.message)")
                }
            }
            outcomes.append(outcome)
        }
        #expect(outcomes[0] == outcomes[1])
        #expect(
            outcomes[0] == [
                "-1|x;y|it's", "2:23 statement 3: expected \")\"", "3|a -- b|/* c */", "4|x|y", "5||'", "6|NULL|end",
                "7:31 statement 8: expected \")\"", "8|z|w",
            ])
    }

    @Test func aBrokenTextStreamEndsTheDump() throws {
        // UTF-16 (by its byte order mark) cut inside a character: the error ends the input, and later
        // calls fail again instead of re-reading old bytes (found by fuzzing).
        let text = "CREATE TABLE t(a);\nINSERT INTO t VALUES(1);\n"
        let bytes: [UInt8] = [0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] } + [0x41]
        let reader = try SQLDumpReader(source: MemoryByteSource(bytes, chunkSize: 7))
        #expect(try reader.next()?.strings == ["1"])
        #expect { _ = try reader.next() } throws: {
            ($0 as? ReaderError).map { $0.kind == .encoding && !$0.isRecoverable } ?? false
        }
        #expect(throws: ReaderError.self) { _ = try reader.next() }
    }

    @Test func unclosedStringsAndBadLiteralsAreErrors() throws {
        for bad in [
            "INSERT INTO t VALUES('open);", "INSERT INTO t VALUES(X'ABC');", "INSERT INTO t VALUES(1e);",
            "INSERT INTO t VALUES(1 2);", "INSERT INTO t SELECT 1;",
        ] {
            let reader = try SQLDumpReader(source: MemoryByteSource(bad))
            #expect(throws: ReaderError.self, "\(bad)") { _ = try reader.next() }
        }
    }
}
