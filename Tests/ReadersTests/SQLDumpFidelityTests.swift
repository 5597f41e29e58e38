import Drivers
import Foundation
import Readers
import TestSupport
import Testing

/// A dump's rows are what SQLite would store running it, and what the reader cannot apply stops it:
/// each script here also runs in a real SQLite database, whose rows are the expected ones.
@Suite struct SQLDumpFidelityTests {
    /// The rows SQLite keeps after running `script`, table by table, as the readers spell values.
    static func sqliteRows(_ script: String, table: String) throws -> [[String?]] {
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent("x.db").path
        let connection = try SQLiteConnection(path: path, mode: .readWriteCreate)
        try connection.execute(script)
        let reader = try SQLiteFileReader(path: path, tables: [table])
        var rows: [[String?]] = []
        while let record = try reader.next() { rows.append(record.strings) }
        return rows
    }

    static func dumpRows(_ script: String, table: String? = nil) throws -> [[String?]] {
        try readDump(script, tables: table.map { [$0] }).records.map(\.strings)
    }

    @Test func nullAndLeftOutIntegerPrimaryKeysGetTheRowidSQLiteGives() throws {
        let script = """
            CREATE TABLE people(id INTEGER PRIMARY KEY, name TEXT DEFAULT 'anon', n INT DEFAULT -1, at TEXT);
            INSERT INTO people VALUES(NULL,'a',1,NULL);
            INSERT INTO people VALUES(5,'b',2,'x'),(NULL,'c',3,'y');
            INSERT INTO people(name) VALUES('d');
            INSERT INTO people(at, name) VALUES('z', 'e'), ('w', NULL);
            INSERT INTO people DEFAULT VALUES;
            CREATE TABLE plain(id INT PRIMARY KEY, v TEXT);
            INSERT INTO plain VALUES(NULL, 'no alias: stays NULL');
            """
        let expected = try Self.sqliteRows(script, table: "people")
        #expect(expected.map { $0[0] } == ["1", "5", "6", "7", "8", "9", "10"])
        #expect(try Self.dumpRows(script, table: "people") == expected)
        #expect(try Self.dumpRows(script, table: "plain") == Self.sqliteRows(script, table: "plain"))
    }

    @Test func tableNamesMatchInAnyCaseAsInSQLite() throws {
        let script = """
            CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT);
            INSERT INTO ITEMS VALUES(1,'a');
            INSERT INTO Items VALUES(2,'b');
            insert into "items" values(3,'c');
            """
        let (records, _) = try readDump(script, tables: ["ITEMS"])
        #expect(try records.map(\.strings) == Self.sqliteRows(script, table: "items"))
        #expect(records.allSatisfy { $0.kind == "items" })
    }

    @Test func aDumpCutInsideAStatementIsRefusedWithItsPosition() throws {
        let text = "CREATE TABLE t(a, b);\nINSERT INTO t VALUES(1,2);\nINSERT INTO t VALUES(3,'cut he"
        let reader = try SQLDumpReader(source: MemoryByteSource(text, name: "d.sql"))
        #expect(try reader.next()?.strings == ["1", "2"])
        #expect {
            _ = try reader.next()
        } throws: { error in
            guard let error = error as? ReaderError else { return false }
            return error.kind == .truncated && !error.isRecoverable && error.position?.line == 3
                && error.description.contains("statement 3 has no end")
        }
        #expect(try reader.next() == nil)
    }

    @Test func aTransactionThatNeverCommitsIsRefusedAtTheEnd() throws {
        let text = "BEGIN TRANSACTION;\nCREATE TABLE t(a);\nINSERT INTO t VALUES(1);\n"
        let reader = try SQLDumpReader(source: MemoryByteSource(text, name: "d.sql"))
        #expect(try reader.next()?.strings == ["1"])
        #expect {
            _ = try reader.next()
        } throws: { error in
            (error as? ReaderError).map { $0.kind == .truncated && $0.message.contains("begun at line 1") } ?? false
        }
        let committed = try SQLDumpReader(source: MemoryByteSource(text + "COMMIT;\n"))
        #expect(try committed.next()?.strings == ["1"])
        #expect(try committed.next() == nil)
    }

    @Test func statementsThatChangeRowsAreRefusedNeverSkipped() throws {
        let start = "CREATE TABLE t(a INTEGER PRIMARY KEY, b);\nINSERT INTO t VALUES(1,2);\n"
        for statement in [
            "UPDATE t SET b = 3;", "DELETE FROM t WHERE a = 1;", "ALTER TABLE t ADD COLUMN c;", "ROLLBACK;",
            "DROP TABLE t;", "UPSERT t;",
            // SQLite would run the trigger for the row: its changes are not the reader's to make.
            "CREATE TRIGGER log AFTER INSERT ON T BEGIN UPDATE t SET b = 0; END;\nINSERT INTO t VALUES(2,3);",
        ] {
            let reader = try SQLDumpReader(source: MemoryByteSource(start + statement + "\n", name: "d.sql"))
            #expect(try reader.next()?.strings == ["1", "2"])
            #expect(throws: ReaderError.self, "\(statement)") { _ = try reader.next() }
            do {
                _ = try reader.next()
            } catch let error as ReaderError {
                Issue.record("read on past \(statement): \(error)")
            }
        }
        // What `sqlite3 .dump` itself writes, and a script's usual preamble, are fine.
        let fine = """
            DROP TABLE IF EXISTS t;
            CREATE TABLE t(a INTEGER PRIMARY KEY AUTOINCREMENT, b);
            INSERT INTO t VALUES(1,2);
            DELETE FROM sqlite_sequence;
            INSERT INTO sqlite_sequence VALUES('t',1);
            ANALYZE sqlite_schema;
            SELECT 1;
            """
        #expect(try Self.dumpRows(fine) == [["1", "2"]])
    }

    /// Generated columns are computed by SQLite, not data: a file's rows and a dump's rows leave them
    /// out alike (the dump has no values for them), and both readers name them.
    @Test func generatedColumnsAreNamedNotRead() throws {
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent("g.db").path
        try SQLiteConnection(path: path, mode: .readWriteCreate).execute(
            """
            CREATE TABLE t(a INTEGER PRIMARY KEY, b INT, c INT GENERATED ALWAYS AS (b * 2) STORED UNIQUE,
              d TEXT AS (upper(e)), e TEXT);
            CREATE INDEX t_d ON t(d);
            INSERT INTO t(a, b, e) VALUES (1, 2, 'x'), (2, NULL, 'y');
            """)
        let file = try SQLiteFileReader(path: path)
        var fileRows: [[String?]] = []
        while let record = try file.next() { fileRows.append(record.strings) }
        #expect(fileRows == [["1", "2", "x"], ["2", nil, "y"]])
        #expect(
            file.tables[0].columns.map(\.name) == ["a", "b", "e"] && file.tables[0].generatedColumns == ["c", "d"])
        #expect(
            file.notImported == [
                "generated column \"t\".\"c\" (SQLite computes it)",
                "generated column \"t\".\"d\" (SQLite computes it)",
            ])
        // As `sqlite3 .dump` writes it: values for the stored columns only.
        let dump = """
            BEGIN TRANSACTION;
            CREATE TABLE t(a INTEGER PRIMARY KEY, b INT, c INT GENERATED ALWAYS AS (b * 2) STORED UNIQUE,
              d TEXT AS (upper(e)), e TEXT);
            INSERT INTO t VALUES(1,2,'x');
            INSERT INTO t VALUES(2,NULL,'y');
            CREATE INDEX t_d ON t(d);
            COMMIT;
            """
        let reader = try SQLDumpReader(source: MemoryByteSource(dump, name: "d.sql"))
        var dumpRows: [[String?]] = []
        while let record = try reader.next() { dumpRows.append(record.strings) }
        #expect(dumpRows == fileRows)
        #expect(reader.tables[0].columns.map(\.name) == ["a", "b", "e"])
        // What is not read keys and indexes nothing.
        for table in [file.tables[0], reader.tables[0]] {
            #expect(table.uniqueKeys.isEmpty && table.indexes.isEmpty && table.primaryKey == ["a"], "\(table)")
        }
        #expect(reader.notImported == file.notImported)
    }

    /// A column an INSERT leaves out gets its DEFAULT as SQLite stores it: a BLOB default stays a BLOB.
    @Test func aLeftOutColumnGetsItsBlobDefaultAsABlob() throws {
        let dump = """
            CREATE TABLE b(id INTEGER PRIMARY KEY, data BLOB DEFAULT X'00FF', n TEXT DEFAULT 'x',
              p BLOB DEFAULT (x'CAFE'), q DEFAULT (-5), r DEFAULT (1 + 1));
            INSERT INTO b(id, r) VALUES(1, 2);
            """
        let reader = try SQLDumpReader(source: MemoryByteSource(dump, name: "d.sql"))
        let record = try #require(try reader.next())
        #expect(record.strings == ["1", "00ff", "x", "cafe", "-5", "2"])
        #expect(record.isBlob(1) && !record.isBlob(2) && record.isBlob(3))
    }

    /// Column constraints of every kind (CHECK, named constraints, collations, actions of a foreign
    /// key) are read past; the declared types are what SQLite reports for the database.
    @Test func columnConstraintsOfEveryKindAreReadPast() throws {
        let script = """
            CREATE TABLE t(a INTEGER PRIMARY KEY, z INTEGER CHECK (z > 0),
              w TEXT NOT NULL CHECK(length(w) > 0) COLLATE NOCASE,
              c INTEGER CONSTRAINT pos CHECK (c >= 0) REFERENCES t(a) ON DELETE CASCADE
                DEFERRABLE INITIALLY DEFERRED,
              u UNSIGNED BIG INT, d DOUBLE PRECISION DEFAULT 1.5,
              v VARCHAR(20) CONSTRAINT nn NOT NULL ON CONFLICT ABORT);
            INSERT INTO t VALUES(1, 2, 'x', NULL, 3, 4.5, 'v');
            """
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent("c.db").path
        try SQLiteConnection(path: path, mode: .readWriteCreate).execute(script)
        let file = try SQLiteFileReader(path: path)
        let reader = try SQLDumpReader(source: MemoryByteSource(script, name: "c.sql"))
        #expect(try reader.next()?.strings == ["1", "2", "x", nil, "3", "4.5", "v"])
        for (dump, database) in zip(reader.tables[0].columns, file.tables[0].columns) {
            #expect(dump.name == database.name && dump.declaredType == database.declaredType, "\(dump) \(database)")
            #expect(dump.isNotNull == database.isNotNull, "\(dump.name)")
        }
        #expect(reader.tables[0].foreignKeys == file.tables[0].foreignKeys)
    }

    /// Integer literals are the integers SQLite reads: leading zeros dropped, `-0` is 0, hexadecimal
    /// in 64-bit two's complement — as values and as defaults.
    @Test func integerLiteralsAreTheIntegersSQLiteReads() throws {
        let script = """
            CREATE TABLE n(a, b, c, d, e, f, g, h, i DEFAULT 0x10);
            INSERT INTO n(a, b, c, d, e, f, g, h) VALUES (007, 0x1F, -0x2, -0, 0000000000000000000000042, 00.5,
              0xFFFFFFFFFFFFFFFF, -000);
            INSERT INTO n VALUES (007, 0x1F, -0x2, -0, 0000000000000000000000042, 00.5, 0xFFFFFFFFFFFFFFFF, -000, 0x10);
            """
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent("n.db").path
        try SQLiteConnection(path: path, mode: .readWriteCreate).execute(script)
        let file = try SQLiteFileReader(path: path)
        let reader = try SQLDumpReader(source: MemoryByteSource(script, name: "n.sql"))
        let expected = try #require(try file.next()).strings
        #expect(expected == ["7", "31", "-2", "0", "42", "0.5", "-1", "0", "16"])
        #expect(try reader.next()?.strings == expected)
        #expect(try file.next()?.strings == expected)
        #expect(try reader.next()?.strings == expected, "a VALUES list without column names")
        let tooBig = try SQLDumpReader(
            source: MemoryByteSource("CREATE TABLE n(a);\nINSERT INTO n VALUES (0x1FFFFFFFFFFFFFFFF);\n", name: "b.sql")
        )
        #expect(throws: ReaderError.self) { _ = try tooBig.next() }
    }

    /// A trigger runs to the `END` that follows a `;` of its body: the `END` of a `CASE` (also one
    /// right before a `;`) and comments do not end it early.
    @Test func aTriggerWithCaseEndsAtItsOwnEnd() throws {
        let dump = """
            BEGIN TRANSACTION;
            CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT);
            CREATE TABLE audit(n INTEGER);
            CREATE TRIGGER tr AFTER INSERT ON audit BEGIN
              SELECT CASE WHEN new.n < 0 THEN RAISE(ABORT, 'negative; no') END;
              SELECT CASE new.n WHEN 1 THEN 'one' ELSE 'end' END /* a case; end */ ;
            /* the body ends here */ end;
            INSERT INTO t VALUES(1,'a');
            COMMIT;
            """
        let reader = try SQLDumpReader(source: MemoryByteSource(dump, name: "d.sql"))
        var rows: [[String?]] = []
        while let record = try reader.next() { rows.append(record.strings) }
        #expect(rows == [["1", "a"]])
        #expect(reader.notImported == ["trigger \"tr\""])
    }

    /// A virtual table's storage (FTS5 shadow tables) is never read as data, from a dump or a file;
    /// a full-text table's documents are read as a table of its columns (issue 33, point 5), and it,
    /// views and triggers are named.
    @Test func virtualTablesAndTheirShadowTablesAreNamedNotRead() throws {
        let script = """
            CREATE TABLE items(id INTEGER PRIMARY KEY AUTOINCREMENT, n TEXT);
            INSERT INTO items(n) VALUES('a');
            CREATE VIRTUAL TABLE docs USING fts5(title, body);
            INSERT INTO docs VALUES('t','b');
            CREATE VIEW v AS SELECT 1;
            CREATE TRIGGER tr AFTER INSERT ON items BEGIN SELECT 1; END;
            """
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent("x.db").path
        try SQLiteConnection(path: path, mode: .readWriteCreate).execute(script)
        let file = try SQLiteFileReader(path: path)
        #expect(file.tables.map(\.name) == ["items", "docs"])
        #expect(file.tables.last?.columns.map(\.name) == ["title", "body"])
        let note =
            "full-text index of \"docs\" (fts5): its documents are imported as the table \"docs\" of its columns "
            + "title, body, the index is not"
        #expect(Set(file.notImported) == [note, "view \"v\"", "trigger \"tr\""])
        var fileRows: [[String?]] = []
        while let record = try file.next() { fileRows.append(record.strings) }
        #expect(fileRows == [["1", "a"], ["t", "b"]])
        // As `sqlite3 .dump` writes that database.
        let dump = """
            PRAGMA foreign_keys=OFF;
            BEGIN TRANSACTION;
            CREATE TABLE items(id INTEGER PRIMARY KEY AUTOINCREMENT, n TEXT);
            INSERT INTO items VALUES(1,'a');
            PRAGMA writable_schema=ON;
            INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('table','docs','docs',0,\
            'CREATE VIRTUAL TABLE docs USING fts5(title, body)');
            CREATE TABLE IF NOT EXISTS 'docs_data'(id INTEGER PRIMARY KEY, block BLOB);
            INSERT INTO docs_data VALUES(1,X'010101');
            CREATE TABLE IF NOT EXISTS 'docs_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;
            INSERT INTO docs_idx VALUES(1,X'',2);
            CREATE TABLE IF NOT EXISTS 'docs_content'(id INTEGER PRIMARY KEY, c0, c1);
            INSERT INTO docs_content VALUES(1,'t','b');
            CREATE TABLE IF NOT EXISTS 'docs_config'(k PRIMARY KEY, v) WITHOUT ROWID;
            INSERT INTO docs_config VALUES('version',4);
            DELETE FROM sqlite_sequence;
            INSERT INTO sqlite_sequence VALUES('items',1);
            CREATE VIEW v AS SELECT 1;
            CREATE TRIGGER tr AFTER INSERT ON items BEGIN SELECT 1; END;
            PRAGMA writable_schema=OFF;
            COMMIT;
            """
        let reader = try SQLDumpReader(source: MemoryByteSource(dump, name: "d.sql"))
        var rows: [[String?]] = []
        while let record = try reader.next() { rows.append(record.strings) }
        #expect(rows == fileRows)
        #expect(reader.tables.map(\.name) == ["items", "docs"])
        #expect(reader.notImported == file.notImported)
        // The script itself: the INSERT into the full-text table is its document.
        let scripted = try SQLDumpReader(source: MemoryByteSource(script, name: "s.sql"))
        var scriptRows: [[String?]] = []
        while let record = try scripted.next() { scriptRows.append(record.strings) }
        #expect(scriptRows == fileRows)
    }

    /// REAL values read the same from a database file and from its dump: the shortest text of the
    /// double, whole numbers without a point.
    @Test func realsReadTheSameFromTheFileAndTheDump() throws {
        let values = ["1.98", "0.1", "1e300", "-2.5e-7", "3.0", "0.30000000000000004", "123456789.125"]
        let script =
            "CREATE TABLE r(v REAL);\n" + values.map { "INSERT INTO r VALUES(\($0));" }.joined(separator: "\n")
        // sqlite3 .dump prints each with %!.20g, e.g. 1.9799999999999999822.
        let printed =
            "CREATE TABLE r(v REAL);\n"
            + values.map { "INSERT INTO r VALUES(\(String(format: "%.20g", Double($0)!)));" }.joined(separator: "\n")
        let fromFile = try Self.sqliteRows(script, table: "r")
        #expect(try Self.dumpRows(printed) == fromFile)
        #expect(
            fromFile.map { $0[0] } == [
                "1.98", "0.1", "1e+300", "-2.5e-07", "3", "0.30000000000000004", "123456789.125",
            ])
    }

    /// What a dump's schema may hold beside its rows: defaults SQLite takes as text, a trigger on
    /// updates of some columns, a table created again, an ordinary table named like a virtual
    /// table's storage — read as SQLite reads them.
    @Test func schemaStatementsReadAsSQLiteReadsThem() throws {
        let script = """
            CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT DEFAULT "", b TEXT DEFAULT active, c REAL DEFAULT 1.5,
              d BLOB DEFAULT X'00', e TEXT);
            INSERT INTO t(e) VALUES('x');
            CREATE TRIGGER u AFTER UPDATE OF a, b ON t BEGIN SELECT 1; END;
            CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, a TEXT DEFAULT "", b TEXT DEFAULT active,
              c REAL DEFAULT 1.5, d BLOB DEFAULT X'00', e TEXT);
            INSERT INTO t(e) VALUES('y');
            CREATE VIRTUAL TABLE docs USING fts5(body);
            CREATE TABLE docs_tags(tag TEXT);
            INSERT INTO docs_tags VALUES('kept');
            """
        #expect(try Self.dumpRows(script, table: "t") == Self.sqliteRows(script, table: "t"))
        #expect(try Self.dumpRows(script, table: "t").map { $0[0] } == ["1", "2"])
        #expect(try Self.dumpRows(script, table: "docs_tags") == [["kept"]])
        #expect(try Self.sqliteRows(script, table: "docs_tags") == [["kept"]])
    }
}
