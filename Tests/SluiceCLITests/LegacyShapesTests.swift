import Drivers
import Foundation
import TestSupport
import Testing

/// Legacy databases of shapes real ones have, imported with no flags from the database file and
/// from a script of the same data: link tables (with and without columns of their own), two
/// foreign keys to one table, NULL ids, a table without a key holding identical rows.
@Suite struct LegacyShapesTests {
    static let script = """
        CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
        CREATE TABLE book(id INTEGER PRIMARY KEY, title TEXT NOT NULL);
        CREATE TABLE book_author(
          book_id INTEGER NOT NULL REFERENCES book(id), author_id INTEGER NOT NULL REFERENCES person(id),
          PRIMARY KEY(book_id, author_id));
        CREATE TABLE review(
          book_id INTEGER NOT NULL REFERENCES book(id), reviewer_id INTEGER NOT NULL REFERENCES person(id),
          stars INTEGER, PRIMARY KEY(book_id, reviewer_id));
        CREATE TABLE task(
          id INTEGER PRIMARY KEY, title TEXT, owner_id INTEGER REFERENCES person(id),
          reviewer_id INTEGER REFERENCES person(id));
        INSERT INTO person VALUES(1,'Ada'),(2,'Boris'),(3,'Cleo');
        INSERT INTO book VALUES(NULL,'Dune'),(NULL,'Emma');
        INSERT INTO book_author VALUES(1,1),(1,2),(2,3);
        INSERT INTO review VALUES(1,3,5),(2,1,4);
        INSERT INTO task(title, owner_id, reviewer_id) VALUES('write',1,2),('edit',2,NULL),('print',NULL,NULL);
        CREATE TABLE event_log(at TEXT, msg TEXT);
        INSERT INTO event_log VALUES('10:00','start'),('10:00','start'),('10:05','stop');
        CREATE VIEW reading AS SELECT book.title, person.name FROM book_author JOIN book ON book.id = book_id
          JOIN person ON person.id = author_id;
        """

    static func contents(_ store: String) throws -> [[[SQLiteValue]]] {
        [
            try sqliteRows(store, "SELECT id, name FROM person ORDER BY id"),
            try sqliteRows(store, "SELECT id, title FROM book ORDER BY id"),
            try sqliteRows(store, "SELECT book_id, author_id FROM book_author ORDER BY 1, 2"),
            try sqliteRows(store, "SELECT book_id, reviewer_id, stars FROM review ORDER BY 1, 2"),
            try sqliteRows(store, "SELECT id, title, owner_id, reviewer_id FROM task ORDER BY id"),
            try sqliteRows(store, "SELECT at, msg FROM event_log ORDER BY at, msg"),
        ]
    }

    @Test func theFileAndItsScriptImportWholeAndAgainUnchanged() throws {
        let directory = try TemporaryDirectory()
        let database = directory.url.appendingPathComponent("legacy.db").path
        try SQLiteConnection(path: database, mode: .readWriteCreate).execute(Self.script)
        let script = try directory.file("legacy.sql", contents: "BEGIN TRANSACTION;\n\(Self.script)\nCOMMIT;\n")
        let source = try Self.contents(database)
        #expect(source[4][2] == [.integer(3), .text("print"), .null, .null])

        for (input, name) in [(database, "from-db.sqlite"), (script.path, "from-script.sqlite")] {
            let store = directory.url.appendingPathComponent(name).path
            let result = try runSluice(["import", input, "--to", store])
            #expect(result.status == 0, "\(input): \(result.stdout)\(result.stderr)")
            #expect(try Self.contents(store) == source, "\(input)")
            let model = try runSluice(["infer", input]).stdout
            #expect(model.contains("tasksAsOwner") && model.contains("tasksAsReviewer"), "\(model)")
            #expect(
                result.stderr.contains("sluice: warning: not imported: \(input): view \"reading\""))
            let again = try runSluice(["import", input, "--to", store])
            #expect(again.status == 0, "\(again.stderr)")
            // A table without a key keeps every row, identical ones too, and finds them again.
            for (entity, count) in [
                ("Person", 3), ("Book", 2), ("Book.authors", 3), ("Review", 2), ("Task", 3), ("EventLog", 3),
            ] {
                #expect(
                    again.stdout.contains("\(entity): \(count) read, 0 inserted, 0 updated, \(count) unchanged"),
                    "\(input): \(again.stdout)")
            }
        }
    }

    /// Tables that reference each other (a team's lead is a person of a team) and a person's mentor
    /// who comes later: every row is imported, every link set, from the file and from its script.
    /// A key nobody holds rejects its row, and the rows that point at that row in turn.
    @Test func cyclesOfForeignKeysImportWhole() throws {
        let script = """
            CREATE TABLE team(id INTEGER PRIMARY KEY, name TEXT NOT NULL, lead_id INTEGER REFERENCES person(id));
            CREATE TABLE person(
              id INTEGER PRIMARY KEY, name TEXT NOT NULL, team_id INTEGER NOT NULL REFERENCES team(id),
              mentor_id INTEGER REFERENCES person(id));
            INSERT INTO team VALUES(1,'red',2),(2,'blue',3),(3,'green',NULL);
            INSERT INTO person VALUES(1,'Ada',1,2),(2,'Boris',1,3),(3,'Cleo',2,NULL),(4,'Dan',3,1);
            """
        let directory = try TemporaryDirectory()
        let database = directory.url.appendingPathComponent("teams.db").path
        try SQLiteConnection(path: database, mode: .readWriteCreate).execute(script)
        let dump = try directory.file("teams.sql", contents: script)
        let tables = [
            "SELECT id, name, lead_id FROM team ORDER BY id",
            "SELECT id, name, team_id, mentor_id FROM person ORDER BY id",
        ]
        let source = try tables.map { try sqliteRows(database, $0) }
        for (input, name) in [(database, "a.sqlite"), (dump.path, "b.sqlite")] {
            let store = directory.url.appendingPathComponent(name).path
            let result = try runSluice(["import", input, "--to", store])
            #expect(result.status == 0, "\(input): \(result.stdout)\(result.stderr)")
            #expect(try tables.map { try sqliteRows(store, $0) } == source, "\(input)")
            // Again: nothing changes, and nothing is said to.
            let again = try runSluice(["import", input, "--to", store])
            #expect(
                again.status == 0 && again.stdout.contains("Person: 4 read, 0 inserted, 0 updated, 4 unchanged"),
                "\(again.stdout)")
            #expect(again.stdout.contains("Team: 3 read, 0 inserted, 0 updated, 3 unchanged"), "\(again.stdout)")
            #expect(try tables.map { try sqliteRows(store, $0) } == source, "\(input)")
        }

        // Team 4's lead is nobody: team 4 is rejected, then Eve of team 4, then Finn whose mentor is Eve.
        let broken = try directory.file(
            "broken.sql",
            contents: script
                + "\nINSERT INTO team VALUES(4,'gray',99);\nINSERT INTO person VALUES(6,'Finn',1,5),(5,'Eve',4,NULL);\n"
        )
        let store = directory.url.appendingPathComponent("c.sqlite").path
        let rejects = directory.url.appendingPathComponent("c.rejects.jsonl").path
        let result = try runSluice([
            "import", broken.path, "--to", store, "--max-errors", "3", "--rejects", rejects,
        ])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(
            result.stdout.contains("Team: 4 read, 3 inserted, 0 updated, 0 unchanged, 1 rejected"), "\(result.stdout)")
        #expect(
            result.stdout.contains("Person: 6 read, 4 inserted, 0 updated, 0 unchanged, 2 rejected"), "\(result.stdout)"
        )
        let lines = try String(contentsOfFile: rejects, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.contains { $0.contains("no Person with id = 99") }, "\(lines)")
        #expect(try sqliteRows(store, "SELECT count(*) FROM person") == [[.integer(4)]])
    }

    /// Values keep what SQLite stores, type and all: BLOBs as bytes (an empty one too), TEXT digits
    /// with their leading zeros, 64-bit extremes, NUMERIC and DECIMAL, REAL, DOUBLE and FLOAT.
    @Test func valuesKeepTheirDeclaredTypes() throws {
        let script = """
            CREATE TABLE sample(
              id INTEGER PRIMARY KEY, code TEXT, big INTEGER, price NUMERIC(10,2), amount DECIMAL(12,4),
              ratio REAL, weight DOUBLE, size FLOAT, data BLOB, huge INTEGER);
            INSERT INTO sample VALUES(1,'007',9223372036854775807,19.99,1234.5678,1.98,0.1,1e300,X'00FF',1);
            INSERT INTO sample VALUES(2,'0001234',-9223372036854775808,100,3,0.30000000000000004,-2.5e-7,1.5,X'',
              99999999999999999999);
            INSERT INTO sample VALUES(3,'000',0,0.5,0,3.0,1e-300,2,X'FF00FF000A0D',NULL);
            """
        let directory = try TemporaryDirectory()
        let database = directory.url.appendingPathComponent("values.db").path
        try SQLiteConnection(path: database, mode: .readWriteCreate).execute(script)
        let dump = try directory.file("values.sql", contents: script)
        let query = """
            SELECT id, code, typeof(code), big, price, typeof(price), amount, ratio, weight, size, typeof(size),
              hex(data), typeof(data), huge, typeof(huge) FROM sample ORDER BY id
            """
        let source = try sqliteRows(database, query)
        #expect(source[1][11] == .text("") && source[1][12] == .text("blob"))
        for (input, name) in [(database, "a.sqlite"), (dump.path, "b.sqlite")] {
            let store = directory.url.appendingPathComponent(name).path
            let result = try runSluice(["import", input, "--to", store])
            #expect(result.status == 0, "\(input): \(result.stdout)\(result.stderr)")
            #expect(try sqliteRows(store, query) == source, "\(input)")
            let model = try runSluice(["infer", input]).stdout
            #expect(model.contains("data: {type: binary"), "\(model)")
            #expect(model.contains("code: {type: string"), "\(model)")
        }
    }

    /// Text keys that differ only in Unicode normalisation (`é` as one code point, or `e` and a
    /// combining accent) are two keys, as SQLite keeps them: both rows stored, each reference on its
    /// own row, and a re-import unchanged.
    @Test func keysDifferingOnlyInNormalisationAreTwoKeys() throws {
        let directory = try TemporaryDirectory()
        let (composed, decomposed) = ("\u{E9}", "e\u{301}")
        let database = directory.url.appendingPathComponent("n.db").path
        try SQLiteConnection(path: database, mode: .readWriteCreate).execute(
            """
            CREATE TABLE k(n TEXT PRIMARY KEY, note TEXT);
            CREATE TABLE use(id INTEGER PRIMARY KEY, k_n TEXT REFERENCES k(n));
            INSERT INTO k VALUES('\(composed)', 'composed'), ('\(decomposed)', 'decomposed');
            INSERT INTO use VALUES(1, '\(decomposed)'), (2, '\(composed)');
            """)
        let store = directory.url.appendingPathComponent("n.sqlite").path
        #expect(try runSluice(["import", database, "--to", store]).status == 0)
        let joined = "SELECT use.id, k.note FROM use JOIN k ON k.n = use.k_n ORDER BY 1"
        #expect(
            try sqliteRows(store, joined) == [[.integer(1), .text("decomposed")], [.integer(2), .text("composed")]])
        #expect(try sqliteRows(store, "SELECT count(*) FROM k") == [[.integer(2)]])
        let again = try runSluice(["import", database, "--to", store])
        #expect(again.stdout.contains("K: 2 read, 0 inserted, 0 updated, 2 unchanged"), "\(again.stdout)")
        #expect(
            try sqliteRows(store, joined) == [[.integer(1), .text("decomposed")], [.integer(2), .text("composed")]])
    }

    /// A SQL table's schema decides which values are required, not the rows one database happens to
    /// hold: a later database with NULLs where the first had none imports into the same store.
    @Test func theSchemaDecidesWhatIsRequired() throws {
        let directory = try TemporaryDirectory()
        let schema = "CREATE TABLE agent(id INTEGER PRIMARY KEY, name TEXT, code TEXT NOT NULL);\n"
        let first = directory.url.appendingPathComponent("first.db").path
        try SQLiteConnection(path: first, mode: .readWriteCreate).execute(
            schema + "INSERT INTO agent VALUES(1, 'Ann', 'a');")
        let model = try runSluice(["infer", first]).stdout
        #expect(model.contains("name: {type: string}"), "\(model)")
        #expect(model.contains("code: {type: string, optional: false}"), "\(model)")
        let second = directory.url.appendingPathComponent("second.db").path
        try SQLiteConnection(path: second, mode: .readWriteCreate).execute(
            schema + "INSERT INTO agent VALUES(1, 'Ann', 'a'), (2, NULL, 'b');")
        let store = directory.url.appendingPathComponent("agents.sqlite").path
        #expect(try runSluice(["import", first, "--to", store]).status == 0)
        let again = try runSluice(["import", second, "--to", store])
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(
            try sqliteRows(store, "SELECT id, name FROM agent ORDER BY 1") == [
                [.integer(1), .text("Ann")], [.integer(2), .null],
            ])
    }
}
