import Drivers
import Foundation
import TestSupport
import Testing

/// Issue 34, load modes: a nightly full export kept in step with `mode: sync` (and refused when it
/// is cut), `append` rejecting stored keys, `replace` loading the input instead of the stored rows.
@Suite struct NightlyModeTests {
    /// Day 1: 1,000 accounts. Day 2: the same, 5% changed, 2% new, 1% gone. Day 3: day 2 cut in the middle.
    struct Export {
        var rows: [(id: Int, name: String, amount: String)]

        static let day1 = Export(rows: (1...1_000).map { ($0, "account \($0)", "\($0 * 3).25") })

        static var day2: Export {
            var rows = day1.rows.filter { $0.id % 100 != 7 }  // 10 gone
            for index in rows.indices where rows[index].id % 20 == 3 { rows[index].name += " (moved)" }  // 50 changed
            rows += (1_001...1_020).map { ($0, "new account \($0)", "0.5") }  // 20 new
            return Export(rows: rows)
        }

        var csv: String { "id,name,amount\n" + rows.map { "\($0.id),\($0.name),\($0.amount)\n" }.joined() }
        var cut: Export { Export(rows: Array(rows.prefix(rows.count / 2))) }
        var stored: [[SQLiteValue]] {
            rows.sorted { $0.id < $1.id }.map { [.integer(Int64($0.id)), .text($0.name), .text($0.amount)] }
        }
    }

    static func pipeline(
        _ directory: TemporaryDirectory, mode: String, size: Int, contexts: Int, extra: String = ""
    ) throws -> URL {
        _ = try directory.file(
            "m.yaml",
            contents: """
                version: 1
                entities:
                  Account:
                    attributes: { id: integer64!, name: string, amount: decimal }
                    unique: [[id]]
                """)
        return try directory.file(
            "p.yaml",
            contents: """
                version: 1
                model: m.yaml
                target: { store: sqlite, path: t.sqlite }
                merge: object-trumps
                batch: { size: \(size), contexts: \(contexts) }
                errors: { max: 2000, rejects: r.jsonl }
                sources:
                  - { name: accounts, path: accounts.csv, entity: Account, key: [id], mode: \(mode), \(extra)
                      fields: { id: id, name: name, amount: amount } }
                """)
    }

    static func rows(_ store: String) throws -> [[SQLiteValue]] {
        try sqliteRows(store, "SELECT id, name, CAST(amount AS TEXT) FROM Account ORDER BY id")
    }

    @Test(arguments: [(1, 1), (5000, 2)])
    func aSyncedStoreFollowsTheExportAndACutOneIsRefused(size: Int, contexts: Int) throws {
        let directory = try TemporaryDirectory()
        let pipeline = try Self.pipeline(
            directory, mode: "sync", size: size, contexts: contexts, extra: "sync: { max_delete: 5% },")
        let store = directory.url.appendingPathComponent("t.sqlite").path
        let input = directory.url.appendingPathComponent("accounts.csv")
        try Export.day1.csv.write(to: input, atomically: true, encoding: .utf8)
        #expect(try runSluice(["run", pipeline.path, "--quiet"]).status == 0)
        #expect(try Self.rows(store) == Export.day1.stored)

        try Export.day2.csv.write(to: input, atomically: true, encoding: .utf8)
        let report = directory.url.appendingPathComponent("day2.json").path
        let day2 = try runSluice(["run", pipeline.path, "--report", report])
        #expect(day2.status == 0, "\(day2.stderr)")
        #expect(
            day2.stdout.contains("Account: 1010 read, 20 inserted, 50 updated, 940 unchanged, 0 rejected, 10 deleted"),
            "\(day2.stdout)")
        #expect(try Self.rows(store) == Export.day2.stored, "the store is the day-2 file")
        // Stored before + inserted − deleted = stored after.
        #expect(1_000 + 20 - 10 == Export.day2.rows.count)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report)))
        let counts = ((json as? [String: Any])?["entities"] as? [String: Any])?["Account"] as? [String: Any]
        #expect(counts?["deleted"] as? Int == 10, "\(String(describing: counts))")

        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        try Export.day2.cut.csv.write(to: input, atomically: true, encoding: .utf8)
        let refusedReport = directory.url.appendingPathComponent("day3.json").path
        let day3 = try runSluice(["run", pipeline.path, "--report", refusedReport])
        #expect(day3.status == 1, "\(day3.stderr)")
        let refused = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: refusedReport)))
        #expect((refused as? [String: Any])?["status"] as? String == "refused")
        #expect(
            day3.stderr.contains("would delete 505 of the 1010 Account objects stored before the run")
                && day3.stderr.contains("more than sync.max_delete (5%)"), "\(day3.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before, "day 3 leaves the store as day 2 left it")
    }

    /// A sync source's `where` is its scope: of the stored objects its input lacks, it deletes those
    /// its `where` selects, and keeps the rest.
    @Test func aSyncDeletesOnlyWhatItsWhereSelects() throws {
        let directory = try TemporaryDirectory()
        let input = directory.url.appendingPathComponent("accounts.csv")
        let store = directory.url.appendingPathComponent("t.sqlite").path
        try Export.day1.csv.write(to: input, atomically: true, encoding: .utf8)
        let all = try Self.pipeline(directory, mode: "merge", size: 100, contexts: 2)
        #expect(try runSluice(["run", all.path, "--quiet"]).status == 0)
        let day2 = Export(rows: Export.day1.rows.filter { $0.id != 7 && $0.id != 907 })
        try day2.csv.write(to: input, atomically: true, encoding: .utf8)
        let scoped = try Self.pipeline(
            directory, mode: "sync", size: 100, contexts: 2, extra: "where: \"id <= 500\",")
        let sync = try runSluice(["run", scoped.path])
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(
            sync.stdout.contains(
                "Account: 998 read, 0 inserted, 0 updated, 499 unchanged, 0 rejected, 499 left out by where, "
                    + "1 deleted"),
            "\(sync.stdout)")
        let ids = try sqliteRows(store, "SELECT id FROM Account ORDER BY id").map { $0[0] }
        #expect(ids.count == 999 && !ids.contains(.integer(7)) && ids.contains(.integer(907)))
    }

    /// `mode: append` inserts new keys and rejects stored ones, naming the stored object, whatever the
    /// merge policy.
    @Test(arguments: [(1, 2), (5000, 1)])
    func appendRejectsStoredKeys(size: Int, contexts: Int) throws {
        let directory = try TemporaryDirectory()
        let pipeline = try Self.pipeline(directory, mode: "append", size: size, contexts: contexts)
        let store = directory.url.appendingPathComponent("t.sqlite").path
        let input = directory.url.appendingPathComponent("accounts.csv")
        try Export.day1.csv.write(to: input, atomically: true, encoding: .utf8)
        #expect(try runSluice(["run", pipeline.path, "--quiet"]).status == 0)
        try Export.day2.csv.write(to: input, atomically: true, encoding: .utf8)
        let again = try runSluice(["run", pipeline.path])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(
            again.stdout.contains("1010 read, 20 inserted, 0 updated, 0 unchanged, 990 rejected"), "\(again.stdout)")
        let rejects = try String(contentsOf: directory.url.appendingPathComponent("r.jsonl"), encoding: .utf8)
        #expect(rejects.contains("is taken by the stored Account 1"), "\(rejects.prefix(400))")
        let stored = try Self.rows(store)
        #expect(stored.count == 1_020 && stored.prefix(1_000).elementsEqual(Export.day1.stored))
    }

    /// `mode: replace` deletes the stored objects first: the store is the input, every object new.
    @Test(arguments: [(1, 1), (5000, 2)])
    func replaceLoadsTheInputInsteadOfTheStoredObjects(size: Int, contexts: Int) throws {
        let directory = try TemporaryDirectory()
        let pipeline = try Self.pipeline(directory, mode: "replace", size: size, contexts: contexts)
        let store = directory.url.appendingPathComponent("t.sqlite").path
        let input = directory.url.appendingPathComponent("accounts.csv")
        try Export.day1.csv.write(to: input, atomically: true, encoding: .utf8)
        #expect(try runSluice(["run", pipeline.path, "--quiet"]).status == 0)
        try Export.day2.csv.write(to: input, atomically: true, encoding: .utf8)
        let again = try runSluice(["run", pipeline.path])
        #expect(
            again.stdout.contains("1010 read, 1010 inserted, 0 updated, 0 unchanged, 0 rejected, 1000 deleted"),
            "\(again.stdout)\(again.stderr)")
        #expect(try Self.rows(store) == Export.day2.stored)
    }

    /// What `check` says of modes that cannot work.
    @Test func modesThatCannotWorkAreRefusedByCheck() throws {
        let directory = try TemporaryDirectory()
        _ = try directory.file("accounts.csv", contents: Export.day1.csv)
        func check(_ mode: String, target: String = "t.sqlite", key: String = "key: [id],") throws -> CommandResult {
            _ = try Self.pipeline(directory, mode: mode, size: 10, contexts: 1)
            let url = directory.url.appendingPathComponent("p.yaml")
            let text = try String(contentsOf: url, encoding: .utf8)
                .replacingOccurrences(of: "path: t.sqlite }", with: "path: \(target) }")
                .replacingOccurrences(of: "key: [id],", with: key)
            try text.write(to: url, atomically: true, encoding: .utf8)
            if key.isEmpty {  // no key given, and none the model could lend
                let model = directory.url.appendingPathComponent("m.yaml")
                let kept = try String(contentsOf: model, encoding: .utf8).replacingOccurrences(
                    of: "unique: [[id]]", with: "")
                try kept.write(to: model, atomically: true, encoding: .utf8)
            }
            return try runSluice(["check", url.path])
        }
        let batches = try check("replace", target: "t.sqlite, commit: batches")
        #expect(
            batches.status == 2
                && batches.stderr.contains("mode: replace deletes stored objects, which needs commit: atomic"))
        #expect(batches.stderr.contains("p.yaml:8:"), "at the source's line: \(batches.stderr)")
        let shown = try check("sync, sync: { max_delete: 5% }")
        #expect(shown.status == 0 && shown.stdout.contains("mode sync (deletes at most 5%)"), "\(shown.stdout)")
        let twice = try check("merge", key: "key: [id, id],")
        #expect(twice.status == 2 && twice.stderr.contains("key names \"id\" twice"), "\(twice.stderr)")
        let keyless = try check("sync", key: "")
        #expect(keyless.status == 2 && keyless.stderr.contains("mode: sync needs a key"), "\(keyless.stderr)")
        let unknown = try check("upsert")
        #expect(unknown.status == 2 && unknown.stderr.contains("unknown mode \"upsert\""), "\(unknown.stderr)")
        let limit = try check("sync, sync: { max_delete: lots }")
        #expect(limit.status == 2 && limit.stderr.contains("sync.max_delete must be a count"), "\(limit.stderr)")
        let flag = try runSluice([
            "import", directory.url.appendingPathComponent("accounts.csv").path, "--to", "x.sqlite", "--max-delete",
            "5%",
        ])
        #expect(flag.status == 2 && flag.stderr.contains("--max-delete applies to --mode sync"), "\(flag.stderr)")
        // A renamed day-2 file would make a new entity and delete nothing: refused, nothing written.
        let store = directory.url.appendingPathComponent("a.sqlite").path
        let accounts = directory.url.appendingPathComponent("accounts.csv").path
        #expect(try runSluice(["import", accounts, "--to", store, "--quiet"]).status == 0)
        let renamed = try directory.file("accounts-2.csv", contents: Export.day2.csv)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let sync = try runSluice(["import", renamed.path, "--to", store, "--mode", "sync"])
        #expect(
            sync.status == 2
                && sync.stderr.contains(
                    "--mode sync acts on the stored objects of an input's entity, and the target holds no Accounts2 "
                        + "(did you mean Account?): name the entity with --entity (the target's entities: Account)"),
            "\(sync.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        let named = try runSluice(["import", renamed.path, "--to", store, "--mode", "sync", "--entity", "Account"])
        #expect(named.status == 0 && named.stdout.contains("10 deleted"), "\(named.stderr)")
    }

    /// A sync keeps the stored object of a record rejected for another field (its key converts),
    /// deletes nothing when a row could not be read or its key does not convert (saying so), and a
    /// record without a key is rejected — never stored anew on every run.
    @Test func aSyncKeepsWhatARejectedRecordNames() throws {
        let directory = try TemporaryDirectory()
        let pipeline = try Self.pipeline(
            directory, mode: "sync", size: 7, contexts: 2, extra: "sync: { max_delete: 50% },")
        let store = directory.url.appendingPathComponent("t.sqlite").path
        let input = directory.url.appendingPathComponent("accounts.csv")
        let day1 = Export(rows: Array(Export.day1.rows.prefix(20)))
        try day1.csv.write(to: input, atomically: true, encoding: .utf8)
        #expect(try runSluice(["run", pipeline.path, "--quiet"]).status == 0)

        // Row 5's amount is no number; rows 19 and 20 are gone; one row has no id.
        var lines = day1.csv.split(separator: "\n").prefix(19).map(String.init)
        lines[5] = "5,account 5,six"
        lines.append(",nobody,1")
        try (lines.joined(separator: "\n") + "\n").write(to: input, atomically: true, encoding: .utf8)
        let day2 = try runSluice(["run", pipeline.path])
        #expect(day2.status == 0, "\(day2.stderr)")
        #expect(
            day2.stdout.contains("19 read, 0 inserted, 0 updated, 17 unchanged, 2 rejected, 2 deleted"),
            "\(day2.stdout)")
        #expect(try Self.rows(store).map { $0[0] } == (1...18).map { .integer(Int64($0)) })
        let rejects = try String(contentsOf: directory.url.appendingPathComponent("r.jsonl"), encoding: .utf8)
        #expect(rejects.contains("has no key (id empty)"), "\(rejects)")

        // A row the reader cannot read (one field too many): its key is unknown, nothing is deleted.
        lines = day1.csv.split(separator: "\n").prefix(15).map(String.init)
        lines[3] = "3,account 3,9.25,extra"
        try (lines.joined(separator: "\n") + "\n").write(to: input, atomically: true, encoding: .utf8)
        let day3 = try runSluice(["run", pipeline.path])
        #expect(day3.status == 0, "\(day3.stderr)")
        #expect(day3.stderr.contains("mode: sync deleted no Account: 1 record(s) were rejected"), "\(day3.stderr)")
        #expect(try Self.rows(store).count == 18)
    }

    /// Keyless nested records are found again by their parent's key and their place: the same feed
    /// again is unchanged throughout; a changed child is updated, a new one inserted, a vanished
    /// one deleted — never added again beside the stored ones.
    @Test(arguments: [(1, 1), (5000, 2)])
    func keylessChildrenAreFoundAgainByTheirPlace(size: Int, contexts: Int) throws {
        let directory = try TemporaryDirectory()
        func feed(_ orders: [(Int, [(String, Int)])]) -> String {
            "<orders>\n"
                + orders.map { id, lines in
                    "<order id=\"\(id)\"><placed>2024-01-0\(id)</placed>"
                        + lines.map { "<line sku=\"\($0.0)\" qty=\"\($0.1)\"/>" }.joined() + "</order>\n"
                }.joined() + "</orders>\n"
        }
        let input = try directory.file("feed.xml", contents: feed([(1, [("A", 1), ("B", 2)]), (2, [("C", 3)])]))
        _ = try directory.file(
            "m.yaml",
            contents: """
                version: 1
                entities:
                  Order:
                    attributes: { id: integer64!, placed: string }
                    relationships: { lines: { destination: Line, toMany: true, inverse: order, deleteRule: cascade } }
                    unique: [[id]]
                  Line:
                    attributes: { sku: string, qty: integer64 }
                    relationships: { order: { destination: Order, inverse: lines, optional: false } }
                """)
        let pipeline = try directory.file(
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
                    fields: { id: "@id", placed: placed }
                    children:
                      - { record: line, entity: Line, parent: order, fields: { sku: "@sku", qty: "@qty" } }
                """)
        let store = directory.url.appendingPathComponent("t.sqlite").path
        func lines() throws -> [[SQLiteValue]] {
            try sqliteRows(
                store, "SELECT order_id, sku, qty FROM Line ORDER BY 1, 2")
        }
        #expect(try runSluice(["run", pipeline.path, "--quiet"]).status == 0)
        let again = try runSluice(["run", pipeline.path])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(
            again.stdout.contains("Line: 3 read, 0 inserted, 0 updated, 3 unchanged, 0 rejected"), "\(again.stdout)")
        #expect(
            again.stdout.contains("Order: 2 read, 0 inserted, 0 updated, 2 unchanged, 0 rejected"), "\(again.stdout)")
        #expect(try lines().count == 3)

        try feed([(1, [("A", 1), ("B", 5), ("D", 4)]), (2, [])]).write(to: input, atomically: true, encoding: .utf8)
        let changed = try runSluice(["run", pipeline.path])
        #expect(changed.status == 0, "\(changed.stderr)")
        #expect(
            changed.stdout.contains("Line: 3 read, 1 inserted, 1 updated, 1 unchanged, 0 rejected, 1 deleted"),
            "\(changed.stdout)")
        #expect(
            try lines() == [
                [.integer(1), .text("A"), .integer(1)], [.integer(1), .text("B"), .integer(5)],
                [.integer(1), .text("D"), .integer(4)],
            ])
    }

    /// Under `duplicates: last-wins` the last record of a key wins on a re-run too, even when it is
    /// the one equal to the stored row (the re-run's shortcut, which starts once a first batch met
    /// stored keys, leaves such sources alone).
    @Test func theLastRecordOfAKeyWinsOnAReRun() throws {
        let directory = try TemporaryDirectory()
        let pipeline = try Self.pipeline(
            directory, mode: "merge", size: 70, contexts: 1, extra: "duplicates: last-wins,")
        let store = directory.url.appendingPathComponent("t.sqlite").path
        let input = directory.url.appendingPathComponent("accounts.csv")
        let day1 = Export(rows: Array(Export.day1.rows.prefix(100)))
        try day1.csv.write(to: input, atomically: true, encoding: .utf8)
        #expect(try runSluice(["run", pipeline.path, "--quiet"]).status == 0)
        var rows = day1.rows
        rows.insert((71, "changed", "9.5"), at: 70)  // the second batch: 71 changed, then 71 as stored
        try Export(rows: rows).csv.write(to: input, atomically: true, encoding: .utf8)
        let again = try runSluice(["run", pipeline.path])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try Self.rows(store) == day1.stored)
    }

    /// A composite key with an empty part is rejected like an empty key: no run could find that
    /// record again by it, so each would store it anew.
    @Test func aKeyWithAnEmptyPartIsRejectedEveryNight() throws {
        let directory = try TemporaryDirectory()
        let input = try directory.file("nk.csv", contents: "a,b,v\n1,x,first\n,x,noA\n,x,noA2\n2,,noB\n,,none\n")
        let store = directory.url.appendingPathComponent("t.sqlite").path
        let rejects = directory.url.appendingPathComponent("r.jsonl").path
        for night in 1...2 {
            let run = try runSluice([
                "import", input.path, "--to", store, "--key", "a", "--key", "b", "--max-errors", "10",
                "--rejects", rejects,
            ])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout.contains("4 rejected"), "night \(night): \(run.stdout)")
            let rejected = try String(contentsOfFile: rejects, encoding: .utf8)
            #expect(rejected.contains("has part of its key empty (a of a, b)"), "\(rejected)")
            #expect(rejected.contains("has part of its key empty (b of a, b)"), "\(rejected)")
            #expect(rejected.contains("has no key (a, b empty)"), "\(rejected)")
            #expect(try sqliteRows(store, "SELECT count(*) FROM nk") == [[.integer(1)]])
        }
    }
}
