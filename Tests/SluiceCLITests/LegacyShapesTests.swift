import Drivers
import Foundation
import TestSupport
import Testing

/// Legacy databases of shapes real ones have, imported with no flags from the database file and
/// from a script of the same data: link tables (with and without columns of their own), two
/// foreign keys to one table, NULL ids.
@Suite struct LegacyShapesTests {
    typealias R = RunCommandTests

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
        """

    static func contents(_ store: String) throws -> [[[SQLiteValue]]] {
        [
            try R.query(store, "SELECT id, name FROM person ORDER BY id"),
            try R.query(store, "SELECT id, title FROM book ORDER BY id"),
            try R.query(store, "SELECT book_id, author_id FROM book_author ORDER BY 1, 2"),
            try R.query(store, "SELECT book_id, reviewer_id, stars FROM review ORDER BY 1, 2"),
            try R.query(store, "SELECT id, title, owner_id, reviewer_id FROM task ORDER BY id"),
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
            let again = try runSluice(["import", input, "--to", store])
            #expect(again.status == 0, "\(again.stderr)")
            for (entity, count) in [("Person", 3), ("Book", 2), ("BookAuthor", 3), ("Review", 2), ("Task", 3)] {
                #expect(
                    again.stdout.contains("\(entity): \(count) read, 0 inserted, 0 updated, \(count) unchanged"),
                    "\(input): \(again.stdout)")
            }
        }
    }
}
