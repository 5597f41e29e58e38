import Drivers
import Foundation
import TestSupport
import Testing

/// Issue 33, point 9: a field may list several date formats (`date: [dd.MM.yyyy, iso8601]`); the
/// first that reads a value wins, and a value none reads is rejected naming them all.
@Suite struct DatePatternsTests {
    @Test(arguments: [1, 5000])
    func aFieldReadsTheFirstFormatThatFits(size: Int) throws {
        let directory = try TemporaryDirectory()
        _ = try directory.file(
            "events.csv",
            contents: "id,on\n1,31.01.2024\n2,2024-02-01\n3,2024-02-02T10:30:00Z\n4,1/2/2024\n5,1706745600\n")
        _ = try directory.file(
            "m.yaml",
            contents: """
                version: 1
                entities:
                  Event:
                    attributes: { id: integer64!, on: date }
                    unique: [[id]]
                """)
        func pipeline(_ date: String) throws -> URL {
            try directory.file(
                "p.yaml",
                contents: """
                    version: 1
                    model: m.yaml
                    target: { store: sqlite, path: t.sqlite }
                    batch: { size: \(size) }
                    errors: { max: 10, rejects: r.jsonl }
                    sources:
                      - { name: events, path: events.csv, entity: Event, key: [id],
                          fields: { id: id, on: { column: on, date: \(date) } } }
                    """)
        }
        let run = try runSluice(["run", try pipeline("[dd.MM.yyyy, iso8601, 'M/d/yyyy']").path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("Event: 5 read, 4 inserted, 0 updated, 0 unchanged, 1 rejected"), "\(run.stdout)")
        let store = directory.url.appendingPathComponent("t.sqlite").path
        #expect(
            try sqliteRows(store, "SELECT id, \"on\" FROM Event ORDER BY id") == [
                [.integer(1), .text("2024-01-31 00:00:00")], [.integer(2), .text("2024-02-01 00:00:00")],
                [.integer(3), .text("2024-02-02 10:30:00")], [.integer(4), .text("2024-01-02 00:00:00")],
            ])
        let rejects = try String(contentsOf: directory.url.appendingPathComponent("r.jsonl"), encoding: .utf8)
        #expect(
            rejects.contains(
                "\\\"1706745600\\\" is not a date in the pattern dd.MM.yyyy, or in ISO 8601 (2024-01-31 or "
                    + "2024-01-31T12:00:00Z), or in the pattern M/d/yyyy"), "\(rejects)")
        let empty = try runSluice(["check", try pipeline("[]").path])
        #expect(empty.status == 2 && empty.stderr.contains("`date` lists no format"), "\(empty.stderr)")
        let wrong = try runSluice(["check", try pipeline("[dd.MM.yyyy, qq]").path])
        #expect(wrong.status == 2, "\(wrong.stderr)")
    }
}

/// Issue 33, point 9, inference: a column mixing known date spellings is proposed as dates read
/// with the patterns it uses (the import's pipeline says them), not text; slashed days that read
/// both day first and month first, or some one way and some the other, stay text.
@Suite struct DatePatternInferenceTests {
    @Test func mixedSpellingsAreDatesWithTheirPatterns() throws {
        let directory = try TemporaryDirectory()
        let input = try directory.file(
            "events.csv",
            contents: """
                id,on,at,either,both
                1,31.01.2024,2024-01-02,01/02/2024,13/01/2024
                2,2024-02-01,01/31/2024,02/03/2024,01/13/2024
                3,,12/01/2024,,

                """)
        let model = try runSluice(["infer", input.path])
        #expect(model.status == 0, "\(model.stderr)")
        #expect(model.stdout.contains("'on': {type: calendarDate}"), "\(model.stdout)")
        #expect(model.stdout.contains("at: {type: calendarDate, optional: false}"), "\(model.stdout)")
        #expect(model.stdout.contains("either: {type: string}") && model.stdout.contains("both: {type: string}"))
        #expect(model.stdout.contains("`date: [dd.MM.yyyy, iso8601]`"), "\(model.stdout)")
        #expect(model.stdout.contains("`date: [MM/dd/yyyy, iso8601]`"), "\(model.stdout)")

        let store = directory.url.appendingPathComponent("e.db").path
        let pipeline = directory.url.appendingPathComponent("e.yaml").path
        let run = try runSluice(["import", input.path, "--to", store, "--save-pipeline", pipeline])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            try String(contentsOfFile: pipeline, encoding: .utf8).contains(
                "at: {column: at, date: [MM/dd/yyyy, iso8601]}"))
        #expect(
            try sqliteRows(store, "SELECT \"on\", at, either FROM events ORDER BY id") == [
                [.text("2024-01-31"), .text("2024-01-02"), .text("01/02/2024")],
                [.text("2024-02-01"), .text("2024-01-31"), .text("02/03/2024")],
                [.null, .text("2024-12-01"), .null],
            ])
    }
}
