import Drivers
import Foundation
import TestSupport
import Testing

/// Issue 33, points 2 and 3 from the outside: a primary key that is also a reference (declared, or
/// joined by name) imports as a to-one that is the entity's key; an empty table is created with its
/// columns, and what refers to it is a relationship whose dangling values are rejected records.
@Suite struct KeyShapesTests {
    @Test func aKeyThatIsAlsoAReferenceIsTheRelationship() throws {
        let directory = try TemporaryDirectory()
        let database = directory.url.appendingPathComponent("pk.db").path
        try SQLiteConnection(path: database, mode: .readWriteCreate).execute(
            """
            CREATE TABLE person(person_id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE person_detail(person_id INTEGER PRIMARY KEY, bio TEXT);
            CREATE TABLE badge(person_id INTEGER PRIMARY KEY REFERENCES person(person_id), level INTEGER);
            CREATE TABLE pair(a_id INTEGER REFERENCES person(person_id), b_id INTEGER REFERENCES person(person_id),
              since TEXT, PRIMARY KEY(a_id, b_id));
            INSERT INTO person VALUES(1,'a'),(2,'b');
            INSERT INTO person_detail VALUES(1,'x'),(2,'y');
            INSERT INTO badge VALUES(2,5);
            INSERT INTO pair VALUES(1,2,'2020'),(2,1,'2021');
            """)
        let model = try runSluice(["infer", database]).stdout
        for line in [
            "person: {destination: Person, inverse: personDetails, optional: false}", "unique: [[person]]",
            "unique: [[a, b]]",
        ] {
            #expect(model.contains(line), "\(line)\n\(model)")
        }
        let store = directory.url.appendingPathComponent("s.db").path
        let first = try runSluice(["import", database, "--to", store])
        #expect(first.status == 0, "\(first.stderr)")
        for table in ["person_detail", "badge", "pair"] {
            let all = "SELECT * FROM \(table) ORDER BY 1, 2"
            #expect(try sqliteRows(store, all) == (try sqliteRows(database, all)), "\(table)")
            // The key column keeps its name, holds the person's key and refers to it.
            let references = "SELECT \"from\", \"table\", \"to\" FROM pragma_foreign_key_list('\(table)') ORDER BY 1"
            #expect(
                try sqliteRows(store, references).allSatisfy {
                    $0[1] == .text("person") && $0[2] == .text("person_id")
                },
                "\(table)")
        }
        #expect(
            try sqliteRows(store, "SELECT \"unique\" FROM pragma_index_list('person_detail')") == [[.integer(1)]],
            "one detail per person")
        // `inspect` lists the columns as the table has them: the key that is a reference first.
        let inspect = try runSluice(["inspect", store])
        #expect(inspect.stdout.contains("columns: person_id -> person, bio string?"), "\(inspect.stdout)")
        let again = try runSluice(["import", database, "--to", store])
        for (entity, count) in [("PersonDetail", 2), ("Badge", 1), ("Pair", 2)] {
            #expect(again.stdout.contains("\(entity): \(count) read, 0 inserted, 0 updated, \(count) unchanged"))
        }
    }

    /// Issue 33, point 4: no column the source lacked — a keyless table's rows are kept under
    /// SQLite's rowid (found again by their places on a re-run), a header-only CSV adds none.
    @Test func keylessInputsKeepExactlyTheirColumns() throws {
        let directory = try TemporaryDirectory()
        let store = directory.url.appendingPathComponent("s.db").path
        let empty = try directory.file("headeronly.csv", contents: "a,b\n")
        let twins = try directory.file("twins.csv", contents: "at,msg\n10:00,start\n10:00,start\n10:05,stop\n")
        #expect(try runSluice(["import", empty.path, "--to", store]).status == 0)
        #expect(try runSluice(["import", twins.path, "--to", store, "--mode", "append"]).status == 0)
        for (table, columns) in [("headeronly", ["a", "b"]), ("twins", ["at", "msg"])] {
            #expect(
                try sqliteRows(store, "SELECT name FROM pragma_table_info('\(table)')") == columns.map { [.text($0)] })
        }
        #expect(try sqliteRows(store, "SELECT count(*) FROM twins") == [[.integer(3)]])
        let database = directory.url.appendingPathComponent("log.db").path
        try SQLiteConnection(path: database, mode: .readWriteCreate).execute(
            "CREATE TABLE log(at TEXT, msg TEXT); INSERT INTO log VALUES('10:00','start'),('10:00','start');")
        let copy = directory.url.appendingPathComponent("c.db").path
        #expect(try runSluice(["import", database, "--to", copy]).status == 0)
        #expect(try sqliteRows(copy, "SELECT name FROM pragma_table_info('log')") == [[.text("at")], [.text("msg")]])
        #expect(
            try sqliteRows(copy, "SELECT rowid, at, msg FROM log ORDER BY rowid") == [
                [.integer(1), .text("10:00"), .text("start")], [.integer(2), .text("10:00"), .text("start")],
            ])
        let again = try runSluice(["import", database, "--to", copy])
        #expect(again.stdout.contains("Log: 2 read, 0 inserted, 0 updated, 2 unchanged, 0 rejected"), "\(again.stdout)")
        // A row is known by its rowid, not its place: the rows after one that went are unchanged.
        try SQLiteConnection(path: database, mode: .readWrite).execute(
            "INSERT INTO log VALUES('10:05','stop'); DELETE FROM log WHERE rowid = 1;")
        let third = try runSluice(["import", database, "--to", copy])
        #expect(third.stdout.contains("Log: 2 read, 1 inserted, 0 updated, 1 unchanged, 0 rejected"), "\(third.stdout)")
        #expect(
            try sqliteRows(copy, "SELECT rowid, msg FROM log ORDER BY rowid") == [
                [.integer(1), .text("start")], [.integer(2), .text("start")], [.integer(3), .text("stop")],
            ])
    }

    /// A column that names a table only by its name (`visit.person_id`, no REFERENCES) in a
    /// database that declares no reference is a relationship only when every value is a key of that
    /// table: a database consistent under its own schema imports whole.
    @Test func aReferenceGuessedByNameIsMadeOnlyWhenEveryValueIsAKey() throws {
        let directory = try TemporaryDirectory()
        let database = directory.url.appendingPathComponent("g.db").path
        try SQLiteConnection(path: database, mode: .readWriteCreate).execute(
            """
            CREATE TABLE person(person_id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE person_extra(person_id INTEGER PRIMARY KEY, note TEXT);
            CREATE TABLE visit(id INTEGER PRIMARY KEY, person_id INTEGER);
            CREATE TABLE badge(person_id INTEGER PRIMARY KEY, b TEXT);
            INSERT INTO person VALUES(1,'a'),(2,'b');
            INSERT INTO person_extra VALUES(1,'x'),(99,'y');
            INSERT INTO visit VALUES(1,1),(2,77),(3,NULL);
            INSERT INTO badge VALUES(2,'g');
            """)
        let store = directory.url.appendingPathComponent("s.db").path
        let result = try runSluice(["import", database, "--to", store])
        #expect(result.status == 0, "\(result.stderr)")
        for table in ["person_extra", "visit", "badge"] {
            let all = "SELECT * FROM \(table) ORDER BY 1"
            #expect(try sqliteRows(store, all) == (try sqliteRows(database, all)), "\(table)")
        }
        let references = "SELECT m.name FROM sqlite_master m, pragma_foreign_key_list(m.name) k WHERE m.type = 'table'"
        #expect(try sqliteRows(store, references) == [[.text("badge")]])
    }

    @Test func anEmptyTableIsMadeAndWhatRefersToItIsChecked() throws {
        let directory = try TemporaryDirectory()
        let database = directory.url.appendingPathComponent("e.db").path
        try SQLiteConnection(path: database, mode: .readWriteCreate).execute(
            """
            CREATE TABLE region(id INTEGER PRIMARY KEY, name TEXT NOT NULL, since DATE, price NUMERIC(10,2));
            CREATE TABLE shop(id INTEGER PRIMARY KEY, name TEXT, region_id INTEGER REFERENCES region(id));
            INSERT INTO shop VALUES(1,'a',NULL),(2,'b',7),(3,'c',NULL);
            """)
        let script = try directory.file("e.sql", contents: try sqliteDump(database))
        for input in [database, script.path] {
            let store = directory.url.appendingPathComponent("s-\(input.hasSuffix(".db") ? "db" : "sql").db").path
            let result = try runSluice(["import", input, "--to", store, "--max-errors", "5"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("Shop: 3 read, 2 inserted, 0 updated, 0 unchanged, 1 rejected"))
            let rejects = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
                .filter { $0.hasPrefix(URL(fileURLWithPath: store).lastPathComponent + ".rejects") }
            #expect(rejects.count == 1)
            let text = try String(contentsOf: directory.url.appendingPathComponent(rejects[0]), encoding: .utf8)
            #expect(text.contains("no Region with id = 7"), "\(text)")
            let columns = "SELECT name, type FROM pragma_table_info('region')"
            #expect(
                try sqliteRows(store, columns) == [
                    [.text("id"), .text("INTEGER")], [.text("name"), .text("TEXT")], [.text("since"), .text("DATE")],
                    [.text("price"), .text("NUMERIC")],
                ])
            #expect(
                try sqliteRows(store, "SELECT \"table\" FROM pragma_foreign_key_list('shop')") == [[.text("region")]])
        }
    }
}
