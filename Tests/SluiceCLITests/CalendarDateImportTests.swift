import Drivers
import Foundation
import TestSupport
import Testing

/// Issue 33, points 1 and 10 from the outside: a column of days and a `DATE` column of a legacy
/// database are calendar dates — stored as `YYYY-MM-DD`, found by the source's own SQL, exported as
/// written and found unchanged on a re-run — while timestamps stay timestamps; decimals written
/// with a scale (`2684.00`) keep it in the model, `inspect` and the export.
@Suite struct CalendarDateImportTests {
    static let csv = """
        id,name,born,seen_at,price
        1,Ada,1948-04-28,2024-01-31T12:00:00Z,2684.00
        2,Bob,1951-02-02,2024-02-01 08:30:00,19.99
        3,Cy,,2024-02-02T00:00:00Z,0.50

        """

    @Test func daysOfACSVStayDaysAndScalesStay() throws {
        let directory = try TemporaryDirectory()
        let input = try directory.file("people.csv", contents: Self.csv)
        let store = directory.url.appendingPathComponent("p.db").path
        let first = try runSluice(["import", input.path, "--to", store])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(
            try sqliteRows(store, "SELECT born, seen_at, typeof(price) FROM people ORDER BY id") == [
                [.text("1948-04-28"), .text("2024-01-31 12:00:00"), .text("integer")],
                [.text("1951-02-02"), .text("2024-02-01 08:30:00"), .text("real")],
                [.null, .text("2024-02-02 00:00:00"), .text("real")],
            ])
        #expect(try sqliteRows(store, "SELECT name FROM people WHERE born = '1948-04-28'") == [[.text("Ada")]])
        #expect(
            try sqliteRows(
                store, "SELECT name, type FROM pragma_table_info('people') WHERE name IN ('born', 'seen_at')")
                == [[.text("born"), .text("DATE")], [.text("seen_at"), .text("DATETIME")]])
        let model = try runSluice(["infer", input.path]).stdout
        #expect(model.contains("born: {type: calendarDate}") && model.contains("seenAt: {type: date"), "\(model)")
        #expect(model.contains("price: {type: decimal, scale: 2"), "\(model)")

        let inspect = try runSluice(["inspect", store])
        #expect(
            inspect.stdout.contains("born=1948-04-28") && inspect.stdout.contains("price=2684.00"), "\(inspect.stdout)")

        let out = directory.url.appendingPathComponent("out").path
        let exported = try runSluice(["export", store, "--to", out])
        #expect(exported.status == 0, "\(exported.stderr)")
        let back = try String(contentsOfFile: out + "/people.csv", encoding: .utf8)
        #expect(
            back == """
                id,name,born,seen_at,price
                1,Ada,1948-04-28,2024-01-31T12:00:00Z,2684.00
                2,Bob,1951-02-02,2024-02-01T08:30:00Z,19.99
                3,Cy,,2024-02-02T00:00:00Z,0.50

                """)
        let again = try runSluice(["import", input.path, "--to", store])
        #expect(again.stdout.contains("3 read, 0 inserted, 0 updated, 3 unchanged"), "\(again.stdout)")
    }

    @Test func aDateColumnOfALegacyDatabaseIsADay() throws {
        let directory = try TemporaryDirectory()
        let database = directory.url.appendingPathComponent("legacy.db").path
        try SQLiteConnection(path: database, mode: .readWriteCreate).execute(
            """
            CREATE TABLE person(id INTEGER PRIMARY KEY, born DATE, updated TIMESTAMP, price NUMERIC(10,2));
            INSERT INTO person VALUES(1, '1951-02-02', '2024-01-31 12:00:00', 2684.00), (2, NULL, NULL, 19.9);
            """)
        let store = directory.url.appendingPathComponent("s.db").path
        let result = try runSluice(["import", database, "--to", store])
        #expect(result.status == 0, "\(result.stderr)")
        let columns = "SELECT id, born, typeof(born), updated, price FROM person ORDER BY id"
        #expect(try sqliteRows(store, columns) == (try sqliteRows(database, columns)))
        #expect(try sqliteRows(store, "SELECT id FROM person WHERE born = '1951-02-02'") == [[.integer(1)]])
        let inspect = try runSluice(["inspect", store])
        #expect(inspect.stdout.contains("price=2684.00") && inspect.stdout.contains("price=19.90"), "\(inspect.stdout)")
    }

    @Test func aTimeOfDayInACalendarDateIsRejectedNamingIt() throws {
        let directory = try TemporaryDirectory()
        _ = try directory.file("d.csv", contents: "id,on\n1,31.01.2024\n2,2024-02-01T10:30:00Z\n3,2024-02-02\n")
        _ = try directory.file(
            "m.yaml",
            contents: """
                version: 1
                entities:
                  Day:
                    attributes: { id: integer64!, on: day, price: { type: decimal, scale: 2 } }
                    unique: [[id]]
                """)
        let pipeline = try directory.file(
            "p.yaml",
            contents: """
                version: 1
                model: m.yaml
                target: { store: sqlite, path: t.sqlite }
                errors: { max: 10, rejects: r.jsonl }
                sources:
                  - { name: d, path: d.csv, entity: Day, key: [id],
                      fields: { id: id, on: { column: on, date: [dd.MM.yyyy, iso8601] } } }
                """)
        let run = try runSluice(["run", pipeline.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("Day: 3 read, 2 inserted, 0 updated, 0 unchanged, 1 rejected"), "\(run.stdout)")
        let rejects = try String(contentsOf: directory.url.appendingPathComponent("r.jsonl"), encoding: .utf8)
        #expect(rejects.contains("has a time of day (UTC), and the attribute is a calendar date"), "\(rejects)")
        let store = directory.url.appendingPathComponent("t.sqlite").path
        #expect(
            try sqliteRows(store, "SELECT id, \"on\" FROM Day ORDER BY id") == [
                [.integer(1), .text("2024-01-31")], [.integer(3), .text("2024-02-02")],
            ])
    }
}
