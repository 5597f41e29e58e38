import Drivers
import Foundation
import TestSupport
import Testing

/// Many-to-many relationships filled by pipelines: a source of link rows (`find` the owner by its
/// key, add the destinations found by theirs) and XML children naming no entity. Links already
/// stored are unchanged on a re-run; a link whose end is missing or empty is a rejected record
/// naming it; a pair twice in one input is a repeat.
@Suite struct ManyToManyTests {
    static let model = """
        version: 1
        entities:
          Book:
            table: book
            attributes:
              bookId: { type: integer64, optional: false, column: book_id }
              title: { type: string }
            relationships:
              authors: { destination: Author, toMany: true, inverse: books, joinTable: written_by, column: writer }
            unique: [[bookId]]
          Author:
            table: author
            attributes:
              authorId: { type: integer64, optional: false, column: author_id }
              name: { type: string }
            relationships:
              books: { destination: Book, toMany: true, inverse: authors, column: work }
            unique: [[authorId]]
        """

    /// The links first (they wait for both ends), then the books and authors; every record stored
    /// or rejected with its reason; the join table named as the model says.
    @Test func aCSVOfPairsFillsTheRelationshipAndAgainChangesNothing() throws {
        let directory = try TemporaryDirectory()
        let model = try directory.file("model.yaml", contents: Self.model)
        _ = try directory.file("books.csv", contents: "book_id,title\n1,A\n2,B\n3,C\n")
        _ = try directory.file("authors.csv", contents: "author_id,name\n1,X\n2,Y\n3,Z\n")
        _ = try directory.file(
            "links.csv", contents: "book_id,author_id\n1,1\n2,2\n2,3\n3,2\n9,1\n1,\n1,1\n2,8\n")
        let store = directory.url.appendingPathComponent("books.sqlite").path
        let rejects = directory.url.appendingPathComponent("rejects.jsonl").path
        let pipeline = try directory.file(
            "p.yaml",
            contents: """
                version: 1
                model: \(model.path)
                target: { store: sqlite, path: \(store) }
                merge: object-trumps
                errors: { max: 100, rejects: \(rejects) }
                sources:
                  - name: links
                    path: \(directory.url.appendingPathComponent("links.csv").path)
                    csv: { null: [""] }
                    entity: Book
                    find: { bookId: book_id }
                    relationships:
                      authors: { key: { authorId: author_id } }
                  - name: books
                    path: \(directory.url.appendingPathComponent("books.csv").path)
                    entity: Book
                    key: [bookId]
                    fields: { bookId: book_id, title: title }
                  - name: authors
                    path: \(directory.url.appendingPathComponent("authors.csv").path)
                    entity: Author
                    key: [authorId]
                    fields: { authorId: author_id, name: name }
                """)
        let first = try runSluice(["run", pipeline.path])
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        #expect(
            first.stdout.contains("Book.authors: 8 read, 4 inserted, 0 updated, 0 unchanged, 4 rejected"),
            "\(first.stdout)")
        #expect(
            try sqliteRows(store, "SELECT work, writer FROM written_by ORDER BY 1, 2") == [
                [.integer(1), .integer(1)], [.integer(2), .integer(2)], [.integer(2), .integer(3)],
                [.integer(3), .integer(2)],
            ])
        let lines = try String(contentsOfFile: rejects, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        func rejected(line: Int) -> String? { lines.first { $0.contains("\"line\":\(line),") } }
        #expect(rejected(line: 6)?.contains("no Book with bookId = 9") == true, "\(lines)")
        #expect(rejected(line: 7)?.contains("its key of Author (author_id) is empty") == true, "\(lines)")
        #expect(rejected(line: 8)?.contains("appeared before in this input") == true, "\(lines)")
        #expect(rejected(line: 9)?.contains("no Author with authorId = 8") == true, "\(lines)")

        let again = try runSluice(["run", pipeline.path])
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(
            again.stdout.contains("Book.authors: 8 read, 0 inserted, 0 updated, 4 unchanged, 4 rejected"),
            "\(again.stdout)")
        #expect(again.stdout.contains("Book: 3 read, 0 inserted, 0 updated, 3 unchanged"), "\(again.stdout)")
        #expect(try sqliteRows(store, "SELECT count(*) FROM written_by") == [[.integer(4)]])

        // A new pair is added to what is stored, nothing else changes.
        _ = try directory.file("links.csv", contents: "book_id,author_id\n1,1\n1,3\n")
        let more = try runSluice(["run", pipeline.path])
        #expect(
            more.stdout.contains("Book.authors: 2 read, 1 inserted, 0 updated, 1 unchanged, 0 rejected"),
            "\(more.stdout)")
        #expect(try sqliteRows(store, "SELECT count(*) FROM written_by") == [[.integer(5)]])
    }

    /// Repeated XML children holding keys add to the enclosing record's object; a child whose key
    /// finds nothing is rejected alone. A re-run (its books upserted) finds the links stored.
    @Test func repeatedXMLChildrenFillTheRelationship() throws {
        let directory = try TemporaryDirectory()
        let model = try directory.file("model.yaml", contents: Self.model)
        let xml = try directory.file(
            "books.xml",
            contents: """
                <library>
                  <book id="1"><title>A</title><authors><author ref="1"/></authors></book>
                  <book id="2"><title>B</title><authors><author ref="2"/><author ref="3"/></authors></book>
                  <book id="3"><title>C</title><authors><author ref="2"/><author ref="7"/></authors></book>
                </library>
                """)
        let authors = try directory.file("authors.csv", contents: "author_id,name\n1,X\n2,Y\n3,Z\n")
        let store = directory.url.appendingPathComponent("books.sqlite").path
        let pipeline = try directory.file(
            "p.yaml",
            contents: """
                version: 1
                model: \(model.path)
                target: { store: sqlite, path: \(store) }
                merge: object-trumps
                errors: { max: 10 }
                sources:
                  - name: books
                    path: \(xml.path)
                    record: /library/book
                    entity: Book
                    key: [bookId]
                    fields: { bookId: "@id", title: title }
                    children:
                      - record: authors/author
                        relationships:
                          authors: { key: { authorId: "@ref" } }
                  - name: authors
                    path: \(authors.path)
                    entity: Author
                    key: [authorId]
                    fields: { authorId: author_id, name: name }
                """)
        let first = try runSluice(["run", pipeline.path])
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        #expect(
            first.stdout.contains("Book.authors: 5 read, 4 inserted, 0 updated, 0 unchanged, 1 rejected"),
            "\(first.stdout)")
        #expect(first.stdout.contains("Book: 3 read, 3 inserted"), "\(first.stdout)")
        let pairs: [[SQLiteValue]] = [
            [.integer(1), .integer(1)], [.integer(2), .integer(2)], [.integer(2), .integer(3)],
            [.integer(3), .integer(2)],
        ]
        #expect(try sqliteRows(store, "SELECT work, writer FROM written_by ORDER BY 1, 2") == pairs)
        let again = try runSluice(["run", pipeline.path])
        #expect(
            again.stdout.contains("Book.authors: 5 read, 0 inserted, 0 updated, 4 unchanged, 1 rejected"),
            "\(again.stdout)")
        #expect(again.stdout.contains("Book: 3 read, 0 inserted, 0 updated, 3 unchanged"), "\(again.stdout)")
        #expect(try sqliteRows(store, "SELECT work, writer FROM written_by ORDER BY 1, 2") == pairs)
    }

    /// Mistakes in a pipeline's links are found before anything runs, each with its line.
    @Test func linkMistakesAreReportedWithTheirPlace() throws {
        let directory = try TemporaryDirectory()
        let model = try directory.file("model.yaml", contents: Self.model)
        let csv = try directory.file("links.csv", contents: "book_id,author_id\n1,1\n")
        let cases: [(String, String)] = [
            (
                "entity: Book\n    key: [bookId]\n    fields: { bookId: book_id }\n"
                    + "    relationships: { authors: { key: { authorId: author_id } } }",
                "authors is to-many"
            ),
            (
                "entity: Book\n    find: { bookId: book_id }\n    fields: { title: author_id }\n"
                    + "    relationships: { authors: { key: { authorId: author_id } } }",
                "makes no objects"
            ),
            ("entity: Book\n    find: { bookId: book_id }", "links need `relationships"),
            (
                "entity: Book\n    find: { nope: book_id }\n"
                    + "    relationships: { authors: { key: { authorId: author_id } } }",
                "Book has no attribute \"nope\""
            ),
        ]
        for (mapping, message) in cases {
            let pipeline = try directory.file(
                "p.yaml",
                contents: """
                    version: 1
                    model: \(model.path)
                    target: { store: sqlite, path: \(directory.url.appendingPathComponent("x.sqlite").path) }
                    sources:
                      - name: links
                        path: \(csv.path)
                        \(mapping)
                    """)
            let result = try runSluice(["check", pipeline.path])
            #expect(result.status == 2, "\(mapping): \(result.stdout)\(result.stderr)")
            #expect(result.stderr.contains(message) && result.stderr.contains("p.yaml:"), "\(result.stderr)")
        }
    }

    /// Pure link tables of a database become many-to-many relationships through tables and columns
    /// named as in the source: one between two tables, a self-link (a person's friends), two link
    /// tables between the same two tables; a pair table without a key (pairs may repeat) and one
    /// with payload stay entities. Every row lands; a re-import changes nothing.
    @Test func linkTablesOfADatabaseBecomeManyToMany() throws {
        let directory = try TemporaryDirectory()
        let database = directory.url.appendingPathComponent("links.db").path
        try SQLiteConnection(path: database, mode: .readWriteCreate).execute(
            """
            CREATE TABLE person(person_id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            CREATE TABLE film(film_id INTEGER PRIMARY KEY, title TEXT NOT NULL);
            CREATE TABLE friend(person_id INTEGER NOT NULL REFERENCES person, friend_id INTEGER NOT NULL
              REFERENCES person(person_id), PRIMARY KEY(person_id, friend_id));
            CREATE TABLE film_actor(film_id INTEGER REFERENCES film, actor_id INTEGER REFERENCES person(person_id),
              PRIMARY KEY(film_id, actor_id));
            CREATE TABLE film_director(film_id INTEGER REFERENCES film,
              director_id INTEGER REFERENCES person(person_id), UNIQUE(film_id, director_id));
            CREATE TABLE seen(film_id INTEGER REFERENCES film, person_id INTEGER REFERENCES person);
            CREATE TABLE rating(film_id INTEGER REFERENCES film, person_id INTEGER REFERENCES person, stars INTEGER,
              PRIMARY KEY(film_id, person_id));
            INSERT INTO film_actor VALUES(10,1),(10,2),(20,2);
            INSERT INTO person VALUES(1,'Ann'),(2,'Bo'),(3,'Cy');
            INSERT INTO film VALUES(10,'Ten'),(20,'Twenty');
            INSERT INTO friend VALUES(1,2),(2,1),(3,3);
            INSERT INTO film_director VALUES(10,3),(20,3);
            INSERT INTO seen VALUES(10,1),(10,1),(20,3);
            INSERT INTO rating VALUES(10,1,5),(20,3,2);
            """)
        let model = try runSluice(["infer", database]).stdout
        for line in [
            "friends: {destination: Person, toMany: true, inverse: persons, joinTable: friend, column: friend_id}",
            // The side whose keys are the link table's first column names it.
            "persons: {destination: Person, toMany: true, inverse: friends, column: person_id}",
            "actors: {destination: Person, toMany: true, inverse: films, joinTable: film_actor, column: actor_id}",
            "directors: {destination: Person, toMany: true, inverse: filmsViaFilmDirector, joinTable: film_director",
        ] {
            #expect(model.contains(line), "\(line)\n\(model)")
        }
        #expect(model.contains("  Seen:") && model.contains("  Rating:"), "\(model)")
        #expect(!model.contains("  Friend:") && !model.contains("  FilmActor:"), "\(model)")

        let store = directory.url.appendingPathComponent("store.sqlite").path
        let first = try runSluice(["import", database, "--to", store])
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        for (table, columns) in [
            ("friend", "person_id, friend_id"), ("film_actor", "film_id, actor_id"),
            ("film_director", "film_id, director_id"), ("seen", "film_id, person_id"),
            ("rating", "film_id, person_id, stars"),
        ] {
            let sql = "SELECT \(columns) FROM \(table) ORDER BY \(columns)"
            #expect(try sqliteRows(store, sql) == sqliteRows(database, sql), "\(table)")
        }
        let again = try runSluice(["import", database, "--to", store])
        #expect(again.status == 0, "\(again.stderr)")
        for (name, count) in [
            ("Person.friends", 3), ("Film.actors", 3), ("Film.directors", 2), ("Seen", 3), ("Rating", 2),
        ] {
            #expect(
                again.stdout.contains("\(name): \(count) read, 0 inserted, 0 updated, \(count) unchanged"),
                "\(again.stdout)")
        }
    }
}
