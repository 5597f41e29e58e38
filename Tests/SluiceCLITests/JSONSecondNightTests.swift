import Drivers
import Foundation
import TestSupport
import Testing

/// Issue 36, the second night of JSON feeds: what a re-run keeps, finds again and grows.
@Suite struct JSONSecondNightTests {
    /// A second night whose nested record is rejected: its siblings are found again as they stand
    /// (unchanged), the stored child it stood for stays, nothing is added twice — by place and by
    /// content. Keys named `number` are proposed, so a keyless re-import finds its orders again.
    @Test(arguments: ["place", "content"])
    func aRejectedChildLeavesItsSiblingsAndItsStoredChildAlone(identity: String) throws {
        let directory = try TemporaryDirectory()
        _ = try directory.file(
            "m.yaml",
            contents: """
                version: 1
                entities:
                  Order:
                    attributes: { number: integer64! }
                    relationships: { lines: { destination: Line, toMany: true, inverse: order, deleteRule: cascade } }
                    unique: [[number]]
                  Line:
                    attributes: { no: integer64, qty: integer64 }
                    relationships: { order: { destination: Order, inverse: lines, optional: false } }
                """)
        let pipeline = try directory.file(
            "p.yaml",
            contents: """
                version: 1
                model: m.yaml
                target: { path: t.sqlite }
                merge: object-trumps
                errors: { max: 5 }
                sources:
                  - name: orders
                    path: feed.json
                    entity: Order
                    key: [number]
                    fields: { number: number }
                    children:
                      - { record: lines, entity: Line, parent: order, identity: \(identity),
                          fields: { "no": "no", qty: qty } }
                """)
        let feed = directory.url.appendingPathComponent("feed.json")
        try #"[{"number": 1, "lines": [{"no": 1, "qty": 2}, {"no": 2, "qty": 4}, {"no": 3, "qty": 6}]}]"#.write(
            to: feed, atomically: true, encoding: .utf8)
        #expect(try runSluice(["run", pipeline.path]).status == 0)
        try #"[{"number": 1, "lines": [{"no": 1, "qty": 2}, {"no": 2, "qty": "x"}, {"no": 3, "qty": 7}]}]"#.write(
            to: feed, atomically: true, encoding: .utf8)
        let second = try runSluice(["run", pipeline.path])
        #expect(second.status == 0, "\(second.stderr)")
        let store = directory.url.appendingPathComponent("t.sqlite").path
        if identity == "place" {
            #expect(
                second.stdout.contains("Line: 3 read, 0 inserted, 1 updated, 1 unchanged, 1 rejected\n"),
                "\(second.stdout)")
            #expect(
                try sqliteRows(store, "SELECT no, qty FROM Line ORDER BY no") == [
                    [.integer(1), .integer(2)], [.integer(2), .integer(4)], [.integer(3), .integer(7)],
                ])
        } else {
            // By content the changed line is a new one; the one it replaces stays while a sibling is rejected.
            #expect(
                second.stdout.contains("Line: 3 read, 1 inserted, 0 updated, 1 unchanged, 1 rejected\n"),
                "\(second.stdout)")
            #expect(try sqliteRows(store, "SELECT count(*) FROM Line") == [[.integer(4)]])
        }

        let keyless = try directory.file(
            "orders.jsonl", contents: "{\"number\": 7, \"total\": 1.5}\n{\"number\": 8, \"total\": 2}\n")
        let imported = directory.url.appendingPathComponent("keyless.sqlite").path
        #expect(try runSluice(["import", keyless.path, "--to", imported]).status == 0)
        let again = try runSluice(["import", keyless.path, "--to", imported])
        #expect(again.stdout.contains("Order: 2 read, 0 inserted, 0 updated, 2 unchanged"), "\(again)")
    }

    /// A member the nested records gain on a later night is a new optional attribute of their entity
    /// (the store migrates lightly), as a new top-level member is.
    @Test func aMemberNestedRecordsGainGrowsTheModel() throws {
        let directory = try TemporaryDirectory()
        let feed = directory.url.appendingPathComponent("orders.json")
        let store = directory.url.appendingPathComponent("orders.sqlite").path
        try #"[{"number": 1, "lines": [{"sku": "A"}]}]"#.write(to: feed, atomically: true, encoding: .utf8)
        #expect(try runSluice(["import", feed.path, "--to", store]).status == 0)
        try #"[{"number": 1, "lines": [{"sku": "A", "discount": 5}]}]"#.write(
            to: feed, atomically: true, encoding: .utf8)
        let grown = try runSluice(["import", feed.path, "--to", store])
        #expect(grown.status == 0, "\(grown.stderr)")
        #expect(grown.stdout.contains("Line: 1 read, 0 inserted, 1 updated"), "\(grown.stdout)")
        #expect(try sqliteRows(store, "SELECT sku, discount FROM lines") == [[.text("A"), .integer(5)]])
        // A new nested array is no new entity of a stored model: refused, saying so, the store untouched.
        try #"[{"number": 1, "lines": [{"sku": "A", "discount": 5}], "shipments": [{"at": "2026-01-01"}]}]"#.write(
            to: feed, atomically: true, encoding: .utf8)
        let refused = try runSluice(["import", feed.path, "--to", store])
        #expect(refused.status == 2, "\(refused)")
        #expect(
            refused.stderr.contains("no entity for the nested records at \"shipments\" (Shipment"), "\(refused.stderr)")
        #expect(try sqliteRows(store, "SELECT count(*) FROM lines") == [[.integer(1)]])
    }
}
