import Drivers
import Foundation
import TestSupport
import Testing

/// Issue 34, point 3 at every depth: orders (keyed) hold lines (keyless) that hold notes (keyless).
/// A re-run of the same feed is unchanged throughout; a changed note is updated, a note gone from
/// its line deleted, a line gone with its notes deleted (its delete rule cascades, and the count
/// says so) — each as part of its parent's update — and stored before + inserted − deleted =
/// stored after for every entity.
@Suite struct NightlyChildrenTests {
    typealias Feed = [(order: Int, lines: [(sku: String, notes: [String])])]

    static func xml(_ feed: Feed) -> String {
        "<orders>\n"
            + feed.map { order in
                "<order id=\"\(order.order)\">"
                    + order.lines.map { line in
                        "<line sku=\"\(line.sku)\">" + line.notes.map { "<note text=\"\($0)\"/>" }.joined() + "</line>"
                    }.joined() + "</order>\n"
            }.joined() + "</orders>\n"
    }

    static func pipeline(
        _ directory: TemporaryDirectory, size: Int, contexts: Int, identity: String = "place"
    ) throws -> URL {
        _ = try directory.file(
            "m.yaml",
            contents: """
                version: 1
                entities:
                  Order:
                    attributes: { id: integer64! }
                    relationships: { lines: { destination: Line, toMany: true, inverse: order, deleteRule: cascade } }
                    unique: [[id]]
                  Line:
                    attributes: { sku: string }
                    relationships:
                      order: { destination: Order, inverse: lines, optional: false }
                      notes: { destination: Note, toMany: true, inverse: line, deleteRule: cascade }
                  Note:
                    attributes: { text: string }
                    relationships: { line: { destination: Line, inverse: notes, optional: false } }
                """)
        return try directory.file(
            "p.yaml",
            contents: """
                version: 1
                model: m.yaml
                target: { store: sqlite, path: t.sqlite }
                merge: object-trumps
                batch: { size: \(size), contexts: \(contexts) }
                sources:
                  - name: orders
                    path: feed.xml
                    record: /orders/order
                    entity: Order
                    key: [id]
                    fields: { id: "@id" }
                    children:
                      - record: line
                        entity: Line
                        parent: order
                        fields: { sku: "@sku" }
                        children:
                          - { record: note, entity: Note, parent: line, identity: \(identity),
                              fields: { text: "@text" } }
                """)
    }

    /// Every order's lines and their notes, in stored order (or notes by their text), as the feed
    /// would spell them.
    static func stored(_ store: String, notesBy order: String = "n.rowid") throws -> [[SQLiteValue]] {
        try sqliteRows(
            store,
            "SELECT o.id, l.sku, n.text FROM \"Order\" o JOIN Line l ON l.order_id = o.id "
                + "LEFT JOIN Note n ON n.line_id = l.id ORDER BY o.id, l.id, \(order)")
    }

    static func expected(_ feed: Feed) -> [[SQLiteValue]] {
        feed.flatMap { order in
            order.lines.flatMap { line in
                line.notes.isEmpty
                    ? [[.integer(Int64(order.order)), .text(line.sku), .null]]
                    : line.notes.map { [.integer(Int64(order.order)), .text(line.sku), .text($0)] }
            }
        }
    }

    @Test(arguments: [(1, 1), (5000, 2)])
    func grandchildrenAreFoundAgainByTheirPlaceToo(size: Int, contexts: Int) throws {
        let directory = try TemporaryDirectory()
        let pipeline = try Self.pipeline(directory, size: size, contexts: contexts)
        let store = directory.url.appendingPathComponent("t.sqlite").path
        let input = directory.url.appendingPathComponent("feed.xml")
        let day1: Feed = (1...40).map { order in
            (order, (1...3).map { line in ("sku-\(order)-\(line)", (1...2).map { "note \(order).\(line).\($0)" }) })
        }
        try Self.xml(day1).write(to: input, atomically: true, encoding: .utf8)
        #expect(try runSluice(["run", pipeline.path, "--quiet"]).status == 0)

        let same = try runSluice(["run", pipeline.path])
        #expect(same.status == 0, "\(same.stderr)")
        for (entity, count) in [("Order", 40), ("Line", 120), ("Note", 240)] {
            #expect(
                same.stdout.contains(
                    "\(entity): \(count) read, 0 inserted, 0 updated, \(count) unchanged, 0 rejected\n"),
                "\(same.stdout)")
        }
        #expect(try Self.stored(store) == Self.expected(day1))

        // Order 1: its first line's first note changed. Order 2: its second line's notes gone.
        // Order 3: its last line gone (with its 2 notes). Order 4: a note added to its first line.
        var day2 = day1
        day2[0].lines[0].notes[0] = "changed"
        day2[1].lines[1].notes = []
        day2[2].lines.removeLast()
        day2[3].lines[0].notes.append("added")
        try Self.xml(day2).write(to: input, atomically: true, encoding: .utf8)
        let changed = try runSluice(["run", pipeline.path])
        #expect(changed.status == 0, "\(changed.stderr)")
        // A parent whose children change is updated: order 3 (a line gone), order 2's second line
        // (its notes gone), order 4's first line (a note added).
        #expect(
            changed.stdout.contains("Order: 40 read, 0 inserted, 1 updated, 39 unchanged, 0 rejected\n"),
            "\(changed.stdout)")
        #expect(
            changed.stdout.contains("Line: 119 read, 0 inserted, 2 updated, 117 unchanged, 0 rejected, 1 deleted"),
            "\(changed.stdout)")
        // 240 notes: 1 changed, 2 gone with order 2's line, 2 with order 3's line, 1 added.
        #expect(
            changed.stdout.contains("Note: 237 read, 1 inserted, 1 updated, 235 unchanged, 0 rejected, 4 deleted"),
            "\(changed.stdout)")
        #expect(try Self.stored(store) == Self.expected(day2))
        let notes = try sqliteRows(store, "SELECT count(*) FROM Note")
        #expect(notes == [[.integer(240 + 1 - 4)]])
    }

    /// `identity: content`: a note is the stored note of its line with the same text, wherever it
    /// is — notes in another order are unchanged; a changed note is a new one, and the old one goes.
    @Test(arguments: [(1, 1), (5000, 2)])
    func withContentIdentityAChildIsFoundByItsValues(size: Int, contexts: Int) throws {
        let directory = try TemporaryDirectory()
        let pipeline = try Self.pipeline(directory, size: size, contexts: contexts, identity: "content")
        let store = directory.url.appendingPathComponent("t.sqlite").path
        let input = directory.url.appendingPathComponent("feed.xml")
        let day1: Feed = (1...10).map { order in (order, [("sku-\(order)", ["a", "b", "c"])]) }
        try Self.xml(day1).write(to: input, atomically: true, encoding: .utf8)
        #expect(try runSluice(["run", pipeline.path, "--quiet"]).status == 0)
        var day2 = day1
        day2[0].lines[0].notes = ["c", "a", "b"]
        day2[4].lines[0].notes[1] = "z"
        try Self.xml(day2).write(to: input, atomically: true, encoding: .utf8)
        let again = try runSluice(["run", pipeline.path])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(
            again.stdout.contains("Note: 30 read, 1 inserted, 0 updated, 29 unchanged, 0 rejected, 1 deleted"),
            "\(again.stdout)")
        #expect(
            again.stdout.contains("Line: 10 read, 0 inserted, 1 updated, 9 unchanged, 0 rejected\n"), "\(again.stdout)")
        let sorted = day2.map { order in (order.order, order.lines.map { ($0.sku, $0.notes.sorted()) }) }
        #expect(try Self.stored(store, notesBy: "n.text") == Self.expected(sorted))
        let refused = try Self.pipeline(directory, size: size, contexts: contexts, identity: "values")
        let check = try runSluice(["check", refused.path])
        #expect(
            check.status == 2 && check.stderr.contains("identity must be place or content, not \"values\""),
            "\(check.stderr)")
    }
}
