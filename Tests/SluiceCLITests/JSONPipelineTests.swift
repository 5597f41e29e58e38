import Drivers
import Foundation
import TestSupport
import Testing

/// Issue 36 from the outside: JSON documents and JSON Lines run through pipelines and `sluice
/// import` — fields by path, arrays of objects as child entities found again on re-runs, arrays of
/// scalars as children of one value or one text value, `null` told apart from a left-out member.
@Suite struct JSONPipelineTests {
    typealias Feed = NightlyChildrenTests.Feed

    /// The feed as one document (`{"orders": [...]}`) or as JSON Lines (an order a line).
    static func json(_ feed: Feed, lines: Bool) -> String {
        let orders = feed.map { order in
            "{\"id\": \(order.order), \"lines\": ["
                + order.lines.map { line in
                    "{\"sku\": \"\(line.sku)\", \"notes\": ["
                        + line.notes.map { "{\"text\": \"\($0)\"}" }.joined(separator: ", ") + "]}"
                }.joined(separator: ", ") + "]}"
        }
        return lines
            ? orders.joined(separator: "\n") + "\n" : "{\"orders\": [\n" + orders.joined(separator: ",\n") + "\n]}\n"
    }

    static func pipeline(_ directory: TemporaryDirectory, lines: Bool, size: Int, contexts: Int) throws -> URL {
        let xml = try NightlyChildrenTests.pipeline(directory, size: size, contexts: contexts)
        var text = try String(contentsOf: xml, encoding: .utf8)
        for (from, to) in [
            ("path: feed.xml", lines ? "path: feed.jsonl" : "path: feed.json"),
            ("record: /orders/order", lines ? "format: jsonl" : "record: /orders"), ("\"@id\"", "id"),
            ("record: line", "record: lines"), ("\"@sku\"", "sku"), ("record: note", "record: notes"),
            ("\"@text\"", "text"),
        ] {
            text = text.replacingOccurrences(of: from, with: to)
        }
        return try directory.file("p.yaml", contents: text)
    }

    /// The nightly children scenario of XML, from JSON and JSON Lines: the same counts, the same store.
    @Test(arguments: [(false, 1, 1), (true, 1, 1), (false, 5000, 2), (true, 5000, 2)])
    func nestedArraysAreFoundAgainOnReRuns(lines: Bool, size: Int, contexts: Int) throws {
        let directory = try TemporaryDirectory()
        let pipeline = try Self.pipeline(directory, lines: lines, size: size, contexts: contexts)
        let store = directory.url.appendingPathComponent("t.sqlite").path
        let input = directory.url.appendingPathComponent(lines ? "feed.jsonl" : "feed.json")
        let day1: Feed = (1...40).map { order in
            (order, (1...3).map { line in ("sku-\(order)-\(line)", (1...2).map { "note \(order).\(line).\($0)" }) })
        }
        try Self.json(day1, lines: lines).write(to: input, atomically: true, encoding: .utf8)
        let first = try runSluice(["run", pipeline.path])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("Note: 240 read, 240 inserted"), "\(first.stdout)")
        let same = try runSluice(["run", pipeline.path])
        for (entity, count) in [("Order", 40), ("Line", 120), ("Note", 240)] {
            #expect(
                same.stdout.contains(
                    "\(entity): \(count) read, 0 inserted, 0 updated, \(count) unchanged, 0 rejected\n"),
                "\(same.stdout)")
        }
        var day2 = day1
        day2[0].lines[0].notes[0] = "changed"
        day2[1].lines[1].notes = []
        day2[2].lines.removeLast()
        day2[3].lines[0].notes.append("added")
        try Self.json(day2, lines: lines).write(to: input, atomically: true, encoding: .utf8)
        let changed = try runSluice(["run", pipeline.path])
        #expect(changed.status == 0, "\(changed.stderr)")
        #expect(
            changed.stdout.contains("Line: 119 read, 0 inserted, 2 updated, 117 unchanged, 0 rejected, 1 deleted"),
            "\(changed.stdout)")
        #expect(
            changed.stdout.contains("Note: 237 read, 1 inserted, 1 updated, 235 unchanged, 0 rejected, 4 deleted"),
            "\(changed.stdout)")
        #expect(try NightlyChildrenTests.stored(store) == NightlyChildrenTests.expected(day2))
    }

    /// Fields by path; `default` fills a left-out member but not a stated `null`; an array of
    /// scalars as a child entity of values, or as one text value (its JSON); a member given twice
    /// rejects its record, or the later one counts (`json: { repeated_members: last-wins }`).
    @Test func pathsNullsAndArraysOfScalars() throws {
        let directory = try TemporaryDirectory()
        _ = try directory.file(
            "m.yaml",
            contents: """
                version: 1
                entities:
                  Customer:
                    attributes:
                      id: integer64!
                      city: string
                      tier: { type: string }
                      tagText: string
                    relationships: { tags: { destination: Tag, toMany: true, inverse: customer, deleteRule: cascade } }
                    unique: [[id]]
                  Tag:
                    attributes: { name: string! }
                    relationships: { customer: { destination: Customer, inverse: tags, optional: false } }
                """)
        _ = try directory.file(
            "customers.json",
            contents: """
                {"data": {"customers": [
                  {"id": 1, "address": {"city": "Oslo"}, "tags": ["a", "b"]},
                  {"id": 2, "address": {"city": null}, "tier": null, "tags": []},
                  {"id": 3, "address": {"city": "Rome"}, "tier": "gold", "tags": ["c"], "id": 4}
                ]}}
                """)
        func pipeline(_ extra: String) throws -> String {
            try directory.file(
                "p.yaml",
                contents: """
                    version: 1
                    model: m.yaml
                    target: { path: t.sqlite }
                    merge: object-trumps
                    errors: { max: 5, rejects: r.jsonl }
                    sources:
                      - name: customers
                        path: customers.json
                        record: /data/customers
                        entity: Customer
                        key: [id]\(extra)
                        fields: { id: id, city: address.city, tier: { path: tier, default: basic }, tagText: tags }
                        children:
                          - { record: tags, entity: Tag, parent: customer, fields: { name: . } }
                    """
            ).path
        }
        let store = directory.url.appendingPathComponent("t.sqlite").path
        let rejecting = try runSluice(["run", try pipeline("")])
        #expect(rejecting.status == 0, "\(rejecting.stderr)")
        let rejects = try String(contentsOf: directory.url.appendingPathComponent("r.jsonl"), encoding: .utf8)
        #expect(
            rejects.contains("\"column\":79,\"file\":\"\(directory.url.path)/customers.json\",\"line\":4,\"record\":5"),
            "\(rejects)")
        #expect(rejects.contains("the member \\\"id\\\" is given twice in one object"), "\(rejects)")
        #expect(
            try sqliteRows(store, "SELECT id, city, tier, tagText FROM Customer ORDER BY id") == [
                [.integer(1), .text("Oslo"), .text("basic"), .text("[\"a\",\"b\"]")],
                [.integer(2), .null, .null, .text("[]")],
            ])
        #expect(
            try sqliteRows(store, "SELECT name, customer_id FROM Tag ORDER BY name") == [
                [.text("a"), .integer(1)], [.text("b"), .integer(1)],
            ])
        let lastWins = try runSluice(["run", try pipeline("\n    json: { repeated_members: last-wins }")])
        #expect(lastWins.status == 0, "\(lastWins.stderr)")
        #expect(lastWins.stdout.contains("Customer: 3 read, 1 inserted, 0 updated, 2 unchanged"), "\(lastWins.stdout)")
        #expect(try sqliteRows(store, "SELECT tier FROM Customer WHERE id = 4") == [[.text("gold")]])
    }

    /// `sluice import` of JSON: the record path and fields by path from the command line, the format
    /// from `.ndjson.gz` or from standard input's first bytes, children proposed for nested arrays.
    @Test func oneOffImportsOfJSON() throws {
        let directory = try TemporaryDirectory()
        let document = try directory.file(
            "feed.json",
            contents: """
                {"page": 1, "data": {"items": [
                  {"sku": "A", "price": 1.50, "maker": {"name": "Acme"}, "variants": [{"size": "S"}, {"size": "M"}]},
                  {"sku": "B", "price": 12345678901234567890.25, "maker": {"name": "Bolt"}, "variants": []}
                ]}}
                """)
        let store = directory.url.appendingPathComponent("items.sqlite").path
        let noRecord = try runSluice(["import", document.path, "--to", store])
        #expect(noRecord.status == 2, "\(noRecord.stderr)")
        #expect(noRecord.stderr.contains("arrays of objects in it: /data/items (2 elements)"), "\(noRecord.stderr)")
        let imported = try runSluice([
            "import", document.path, "--record", "/data/items", "--to", store, "--key", "sku",
        ])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("Variant: 2 read, 2 inserted"), "\(imported.stdout)")
        #expect(
            try sqliteRows(store, "SELECT sku, CAST(price AS TEXT), maker_name FROM items ORDER BY sku") == [
                [.text("A"), .text("1.5"), .text("Acme")],
                [.text("B"), .text("12345678901234567890.25"), .text("Bolt")],
            ])
        #expect(try sqliteRows(store, "SELECT size FROM variants ORDER BY size") == [[.text("M")], [.text("S")]])
        let again = try runSluice(["import", document.path, "--record", "/data/items", "--to", store, "--key", "sku"])
        #expect(again.stdout.contains("Item: 2 read, 0 inserted, 0 updated, 2 unchanged"), "\(again.stdout)")
        let picked = directory.url.appendingPathComponent("picked.sqlite").path
        let fields = try runSluice([
            "import", document.path, "--record", "/data/items", "--field", "sku=sku", "--field", "maker=maker.name",
            "--to", picked,
        ])
        #expect(fields.status == 0, "\(fields.stderr)")
        #expect(
            try sqliteRows(picked, "SELECT sku, maker FROM items ORDER BY sku") == [
                [.text("A"), .text("Acme")], [.text("B"), .text("Bolt")],
            ])
        let typo = try runSluice([
            "import", document.path, "--record", "/data/items", "--field", "sku=sku", "--field", "maker=maker.nmae",
            "--to",
            directory.url.appendingPathComponent("typo.sqlite").path,
        ])
        #expect(typo.status == 2 && typo.stderr.contains("did you mean maker.name?"), "\(typo.stderr)")

        let inferred = try runSluice([
            "infer", document.path, "--record", "/data/items", "--field", "sku=sku", "--field", "maker=maker.name",
        ])
        #expect(inferred.status == 0, "\(inferred.stderr)")
        #expect(inferred.stdout.contains("maker: {type: string, optional: false}"), "\(inferred.stdout)")
        #expect(!inferred.stdout.contains("price") && !inferred.stdout.contains("Variant"), "\(inferred.stdout)")
        let proposed = try runSluice(["infer", document.path, "--record", "/data/items"])
        #expect(proposed.stdout.contains("makerName: {type: string"), "\(proposed.stdout)")
        #expect(proposed.stdout.contains("variants: {destination: Variant, toMany: true"), "\(proposed.stdout)")

        let lines = directory.url.appendingPathComponent("events.ndjson")
        try "{\"id\": 1, \"at\": \"2026-11-26T03:10:00Z\"}\n{\"id\": 2, \"at\": null}\n".write(
            to: lines, atomically: true, encoding: .utf8)
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gzip.arguments = [lines.path]
        try gzip.run()
        gzip.waitUntilExit()
        let events = directory.url.appendingPathComponent("events.sqlite").path
        let gzipped = try runSluice(["import", lines.path + ".gz", "--to", events])
        #expect(gzipped.status == 0 && gzipped.stdout.contains("Event: 2 read, 2 inserted"), "\(gzipped)")
        let piped = try runSluice(
            ["import", "-", "--to", directory.url.appendingPathComponent("piped.sqlite").path, "--entity", "Item"],
            input: Data("[{\"n\": 1}, {\"n\": 2}, {\"n\": 3}]".utf8))
        #expect(piped.status == 0 && piped.stdout.contains("Item: 3 read, 3 inserted"), "\(piped)")
    }

    /// Hostile JSON through `sluice import`: a cut document, text after it, a million levels of
    /// nesting (refused at the depth limit, quickly), a BOM, a NUL, a huge number and a huge string.
    @Test func hostileJSONIsRefusedWithWhere() throws {
        let directory = try TemporaryDirectory()
        func importing(_ name: String, _ bytes: [UInt8], _ extra: [String] = []) throws -> CommandResult {
            let file = directory.url.appendingPathComponent(name)
            try Data(bytes).write(to: file)
            let store = directory.url.appendingPathComponent(name + ".sqlite").path
            return try runSluice(["import", file.path, "--to", store, "--max-errors", "10"] + extra)
        }
        let cut = try importing("cut.json", Array("[{\"id\": 1}, {\"id\": 2, \"name\": \"Bo".utf8))
        #expect(
            cut.status == 3 && cut.stderr.contains("cut.json:1:34 (record 2): the input ends inside a string"), "\(cut)"
        )
        let trailing = try importing("trailing.json", Array("[{\"id\": 1}]\n]".utf8))
        #expect(trailing.status == 3 && trailing.stderr.contains("trailing.json:2:1"), "\(trailing.stderr)")
        let depth = 1_000_000
        let deep = try importing(
            "deep.json",
            Array(
                ("[{\"id\": " + String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
                    + "}]").utf8))
        #expect(deep.status == 3 && deep.stderr.contains("nests deeper than 1000 levels"), "\(deep.stderr)")
        var lines = Array("\u{FEFF}{\"id\": 1, \"n\": \"a\"}\n{\"id\": 2, \"n\": \"b\u{0}\"}\n".utf8)
        lines += [0] + Array("\n{\"id\": 3, \"n\": \(String(repeating: "7", count: 5000))}\n".utf8)
        lines += Array("{\"id\": 4, \"n\": \"\(String(repeating: "x", count: 2_000_000))\"}\n".utf8)
        let mixed = try importing("mixed.jsonl", lines, ["--key", "id"])
        #expect(mixed.status == 0, "\(mixed.stderr)")
        #expect(
            mixed.stdout.contains("Mixed: 5 read, 2 inserted, 0 updated, 0 unchanged, 3 rejected"), "\(mixed.stdout)")
        let store = directory.url.appendingPathComponent("mixed.jsonl.sqlite").path
        #expect(
            try sqliteRows(store, "SELECT id, length(n) FROM mixed ORDER BY id") == [
                [.integer(1), .integer(1)], [.integer(4), .integer(2_000_000)],
            ])
        let rejects = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
            $0.hasPrefix("mixed.jsonl.sqlite.rejects")
        }
        let text = try String(contentsOf: directory.url.appendingPathComponent(rejects[0]), encoding: .utf8)
        #expect(text.contains("the byte 0x0 where a value should be"), "\(text)")
        #expect(text.contains("a control character inside a string"), "\(text)")
        #expect(text.contains("a number of 5000 characters, more than the number limit (4096)"), "\(text)")
    }

    /// What a new user's try found: a member only a late record has is a column too; grandchildren
    /// are linked to their parents; a nested record gets no key from values that merely differ (two
    /// orders' lines of one sku stay two lines); `--key` takes a path; a clash with a stored key
    /// names the stored object; a number past a double's range is refused; other encodings are named.
    @Test func inferenceAndMessagesFromANewUsersTry() throws {
        let directory = try TemporaryDirectory()
        var late = (1...3000).map { "{\"id\": \($0)}" }
        late[2500] = "{\"id\": 2501, \"rare\": \"found\", \"user\": {\"id\": 7}}"
        let lateFile = try directory.file("late.jsonl", contents: late.joined(separator: "\n"))
        let lateStore = directory.url.appendingPathComponent("late.sqlite").path
        #expect(try runSluice(["import", lateFile.path, "--to", lateStore, "--key", "id"]).status == 0)
        #expect(
            try sqliteRows(lateStore, "SELECT id, rare, user_id FROM late WHERE rare IS NOT NULL") == [
                [.integer(2501), .text("found"), .integer(7)]
            ])

        let nested = try directory.file(
            "orders.json",
            contents: """
                [{"number": 1, "user": {"id": 5}, "lines": [{"sku": "A", "discounts": [{"code": "X", "pct": 5}]}]},
                 {"number": 2, "user": {"id": 6}, "lines": [{"sku": "A", "discounts": []}, {"sku": "B"}]}]
                """)
        let store = directory.url.appendingPathComponent("orders.sqlite").path
        let first = try runSluice(["import", nested.path, "--to", store, "--key", "number"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(
            try sqliteRows(
                store, "SELECT o.number, l.sku FROM orders o JOIN lines l ON l.order_id = o.number ORDER BY 1, 2")
                == [[.integer(1), .text("A")], [.integer(2), .text("A")], [.integer(2), .text("B")]])
        #expect(
            try sqliteRows(store, "SELECT code, pct FROM discounts WHERE line_id IS NOT NULL") == [
                [.text("X"), .integer(5)]
            ])
        let append = try runSluice(["import", nested.path, "--to", store, "--key", "number", "--mode", "append"])
        #expect(
            append.status == 1 && append.stderr.contains("number = 1 is taken by the stored Order 1"),
            "\(append.stderr)")
        let byPath = try runSluice([
            "import", nested.path, "--to", directory.url.appendingPathComponent("users.sqlite").path, "--key",
            "user.id", "--entity", "Purchase",
        ])
        #expect(byPath.status == 0, "\(byPath.stderr)")

        let huge = try directory.file(
            "m.yaml",
            contents: "version: 1\nentities:\n  Reading:\n    attributes: { id: integer64!, value: double }\n"
                + "    unique: [[id]]\n")
        _ = try directory.file(
            "readings.jsonl", contents: "{\"id\": 1, \"value\": 1e400}\n{\"id\": 2, \"value\": 2.5}\n")
        let pipeline = try directory.file(
            "p.yaml",
            contents: """
                version: 1
                model: \(huge.lastPathComponent)
                target: { path: r.sqlite }
                errors: { max: 5, rejects: r.jsonl }
                sources:
                  - { name: readings, path: readings.jsonl, entity: Reading, key: [id],
                      fields: { id: id, value: value } }
                """)
        #expect(try runSluice(["run", pipeline.path]).status == 0)
        let rejects = try String(contentsOf: directory.url.appendingPathComponent("r.jsonl"), encoding: .utf8)
        #expect(rejects.contains("does not fit a double"), "\(rejects)")

        let latin1 = directory.url.appendingPathComponent("latin1.json")
        try Data([UInt8]("[{\"id\": 1, \"v\": \"caf".utf8) + [0xE9] + [UInt8]("\"}]".utf8)).write(to: latin1)
        let refused = try runSluice([
            "import", latin1.path, "--to", directory.url.appendingPathComponent("l.sqlite").path,
        ])
        #expect(
            refused.status == 3 && refused.stderr.contains("latin1.json:1:21 (record 1): invalid UTF-8"), "\(refused)")
        let utf16 = directory.url.appendingPathComponent("utf16.json")
        try Data([0xFF, 0xFE] + [UInt8]("[".utf8) + [0]).write(to: utf16)
        let wide = try runSluice(["import", utf16.path, "--to", directory.url.appendingPathComponent("u.sqlite").path])
        #expect(wide.status == 3 && wide.stderr.contains("UTF-16 byte order mark"), "\(wide)")
    }

    /// Inference keeps JSON's own types: a string of digits stays text, a number is never a date.
    @Test func inferenceKeepsJSONTypes() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.file(
            "things.json",
            contents: """
                [{"id": 1, "zip": "8001", "flag": "true", "day": "2026-01-01", "n": 20260101, "ok": true,
                  "amount": "12.50"},
                 {"id": 2, "zip": "0042", "flag": "false", "day": "2026-01-02", "n": 20260102, "ok": false,
                  "amount": "3.10"}]
                """)
        let proposed = try runSluice(["infer", file.path])
        #expect(proposed.status == 0, "\(proposed.stderr)")
        for line in [
            "zip: {type: string", "flag: {type: string", "day: {type: calendarDate", "n: {type: integer64",
            "ok: {type: boolean", "amount: {type: string",
        ] {
            #expect(proposed.stdout.contains(line), "\(line): \(proposed.stdout)")
        }
    }
}
