import Drivers
import Foundation
import TestSupport
import Testing

/// Issue 37 from the outside: a model with derived values and transient relationships, imported
/// from CSV twice (the second night changes one line), inspected, exported, imported back and
/// converted — the stored totals are always the sums of the stored lines.
@Suite struct DerivedValuesImportTests {
    static let model = """
        entities:
          Order:
            table: orders
            attributes:
              number: { type: integer64, optional: false }
              total: { type: decimal, derived: "lines.@sum.amount" }
              lineCount: { type: integer32, derived: "lines.@count" }
            relationships:
              lines: { destination: Line, toMany: true, inverse: order, deleteRule: cascade }
              pinned: { destination: Line, inverse: pinnedBy, transient: true }
              watched: { destination: Line, toMany: true, inverse: watchers, transient: true }
            unique: [number]
          Line:
            table: lines
            attributes:
              id: { type: integer64, optional: false }
              amount: decimal
              sku: string
              label: { type: string, derived: "uppercase:(sku)" }
            relationships:
              order: { destination: Order, inverse: lines, optional: false }
              pinnedBy: { destination: Order, inverse: pinned, transient: true }
              watchers: { destination: Order, toMany: true, inverse: watched, transient: true }
            unique: [id]
        """

    static func lines(changing amount: String = "7.50") -> String {
        """
        id,order_number,sku,amount
        1,1001,"ab-1",10.25
        2,1001,"ab,2",\(amount)
        3,1002,cd-3,100
        4,1002,cd-4,0.01
        5,1003,"e \"\"5\"\"",3

        """
    }

    static func pipeline(_ directory: URL) -> String {
        """
        version: 1
        model: model.yaml
        target: { store: sqlite, path: shop.sqlite }
        merge: object-trumps
        sources:
          - name: orders
            path: orders.csv
            entity: Order
            key: [number]
            fields: { number: number }
          - name: lines
            path: lines.csv
            entity: Line
            key: [id]
            fields: { id: id, sku: sku, amount: amount }
            relationships: { order: { key: { number: order_number } } }
        """
    }

    @Test func totalsStayTheSumsOfTheStoredLinesNightAfterNight() throws {
        let directory = try TemporaryDirectory()
        _ = try directory.file("model.yaml", contents: Self.model)
        _ = try directory.file("orders.csv", contents: "number\n1001\n1002\n1003\n")
        _ = try directory.file("lines.csv", contents: Self.lines())
        let pipeline = try directory.file("p.yaml", contents: Self.pipeline(directory.url))
        let store = directory.url.appendingPathComponent("shop.sqlite").path
        let totals = "SELECT number, CAST(total AS TEXT), lineCount FROM orders ORDER BY number"
        let expected: [[SQLiteValue]] = [
            [.integer(1001), .text("17.75"), .integer(2)], [.integer(1002), .text("100.01"), .integer(2)],
            [.integer(1003), .text("3"), .integer(1)],
        ]
        let first = try runSluice(["run", pipeline.path])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try sqliteRows(store, totals) == expected)
        let second = try runSluice(["run", pipeline.path])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(
            second.stdout.contains("Line: 5 read, 0 inserted, 0 updated, 5 unchanged")
                && second.stdout.contains("Order: 3 read, 0 inserted, 0 updated, 3 unchanged"), "\(second.stdout)")
        #expect(try sqliteRows(store, totals) == expected, "a re-run sums each line once")
        _ = try directory.file("lines.csv", contents: Self.lines(changing: "1007.50"))
        #expect(try runSluice(["run", pipeline.path]).status == 0)
        #expect(try sqliteRows(store, totals).first == [.integer(1001), .text("1017.75"), .integer(2)])
        #expect(try sqliteRows(store, "SELECT label FROM lines WHERE id = 5") == [[.text("E \"5\"")]])
        let columns = try sqliteRows(store, "SELECT name FROM pragma_table_info('orders') ORDER BY cid")
        #expect(
            columns == [[.text("number")], [.text("total")], [.text("lineCount")]],
            "no column for a transient relationship: \(columns)")

        let inspect = try runSluice(["inspect", store])
        #expect(!inspect.stdout.contains("pinned") && !inspect.stdout.contains("watch"), "\(inspect.stdout)")
        let out = directory.url.appendingPathComponent("out").path
        let exported = try runSluice(["export", store, "--to", out])
        #expect(exported.status == 0, "\(exported.stderr)")
        let header = try String(contentsOfFile: out + "/orders.csv", encoding: .utf8).split(separator: "\n").first
        #expect(header.map { !$0.contains("pinned") } == true, "\(header ?? "")")
        let back = directory.url.appendingPathComponent("back.sqlite").path
        let reimported = try runSluice(["import", out, "--to", back])
        #expect(reimported.status == 0, "\(reimported.stderr)")
        #expect(try sqliteRows(back, totals).first == [.integer(1001), .text("1017.75"), .integer(2)])
        let xml = directory.url.appendingPathComponent("shop.xml").path
        let converted = try runSluice(["convert", store, xml])
        #expect(converted.status == 0, "\(converted.stderr)")
    }

    @Test func aSeedCannotSetADerivedValueOrATransientRelationship() throws {
        let directory = try TemporaryDirectory()
        let model = try directory.file("model.yaml", contents: Self.model)
        let seed = try directory.file(
            "seed.yaml",
            contents: """
                Order:
                  - { number: 1, total: 5 }
                """)
        let result = try runSluice(["seed", model.path, seed.path])
        #expect(result.status != 0)
        #expect(
            result.stderr.contains("Order.total is derived (lines.@sum.amount): the save computes it"),
            "\(result.stderr)")
    }
}
