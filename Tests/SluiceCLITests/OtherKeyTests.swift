import Drivers
import Foundation
import TestSupport
import Testing

/// A record colliding on a uniqueness constraint that is not its source's key (a new id with an
/// email another customer has) is a rejected record naming the constraint and the holder — never a
/// merge into the other object, and the same whatever the batching.
@Suite struct OtherKeyTests {
    static let model = """
        version: 1
        entities:
          Customer:
            attributes:
              id: { type: integer64, optional: false }
              email: { type: string, optional: false }
              name: { type: string, optional: false }
            unique: [[id], [email]]
        """

    static func rejects(_ path: String) throws -> [[String: Any]] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test func aNewKeyWithAnEmailTakenIsRejectedNotMerged() throws {
        let directory = try TemporaryDirectory()
        let model = try directory.file("m.yaml", contents: Self.model).path
        let store = directory.url.appendingPathComponent("c.sqlite").path
        let first = try directory.file("first.csv", contents: "id,email,name\n1,ann@x,Ann\n2,bob@x,Bob\n").path
        let options = ["--key", "id", "--model", model, "--entity", "Customer", "--to", store]
        #expect(try runSluice(["import", first] + options).status == 0)

        // Against a stored customer: rejected (exit 1 with no errors allowed), customer 1 unchanged.
        let dup = try directory.file("dup.csv", contents: "id,email,name\n3,ann@x,Dup\n4,cy@x,Cy\n").path
        let refused = try runSluice(["import", dup] + options)
        #expect(refused.status == 1, "\(refused.stdout)\(refused.stderr)")
        let rejectsPath = directory.url.appendingPathComponent("r.jsonl").path
        let result = try runSluice(["import", dup] + options + ["--max-errors", "1", "--rejects", rejectsPath])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(
            result.stdout.contains("Customer: 2 read, 1 inserted, 0 updated, 0 unchanged, 1 rejected"),
            "\(result.stdout)")
        let stored = try Self.rejects(rejectsPath)
        let message = "\(stored.first?["failures"] ?? "")"
        #expect(stored.count == 1 && message.contains("email") && message.contains("stored Customer 1"), "\(stored)")
        #expect(
            try sqliteRows(store, "SELECT id, email, name FROM Customer ORDER BY 1") == [
                [.integer(1), .text("ann@x"), .text("Ann")], [.integer(2), .text("bob@x"), .text("Bob")],
                [.integer(4), .text("cy@x"), .text("Cy")],
            ])
    }

    /// A record updating a stored customer to an email another one holds is rejected, and the
    /// stored customer stays as it was — never deleted with its rejected record.
    @Test func aRejectedUpdateLeavesTheStoredRowAsItWas() throws {
        let directory = try TemporaryDirectory()
        let model = try directory.file("m.yaml", contents: Self.model).path
        let store = directory.url.appendingPathComponent("c.sqlite").path
        let options = ["--key", "id", "--model", model, "--entity", "Customer", "--to", store]
        let first = try directory.file("first.csv", contents: "id,email,name\n1,ann@x,Ann\n2,bob@x,Bob\n").path
        #expect(try runSluice(["import", first] + options).status == 0)
        let steal = try directory.file("steal.csv", contents: "id,email,name\n2,ann@x,Bob Steals\n").path
        let result = try runSluice(["import", steal] + options + ["--max-errors", "1"])
        #expect(result.status == 0 && result.stdout.contains("1 rejected"), "\(result.stdout)\(result.stderr)")
        #expect(
            try sqliteRows(store, "SELECT id, email, name FROM Customer ORDER BY 1") == [
                [.integer(1), .text("ann@x"), .text("Ann")], [.integer(2), .text("bob@x"), .text("Bob")],
            ])
    }

    /// Within one input: the later record is rejected naming the earlier's line, in batches of one
    /// or many, with one context or two, every run alike.
    @Test func withinOneInputTheFirstStaysWhateverTheBatching() throws {
        let directory = try TemporaryDirectory()
        _ = try directory.file("m.yaml", contents: Self.model)
        var csv = "id,email,name\n"
        for n in 1...30 { csv += "\(n),\(n % 7 == 0 ? "shared@x" : "c\(n)@x"),C\(n)\n" }
        _ = try directory.file("c.csv", contents: csv)
        var outcomes: Set<[[SQLiteValue]]> = []
        for (size, contexts) in [(1, 2), (5, 2), (100, 1), (1, 1)] {
            for run in 0..<2 {
                let name = "s\(size)-\(contexts)-\(run)"
                let pipeline = try directory.file(
                    "\(name).yaml",
                    contents: """
                        version: 1
                        model: m.yaml
                        target: { store: sqlite, path: "\(name).sqlite", commit: atomic }
                        batch: { contexts: \(contexts), size: \(size) }
                        merge: object-trumps
                        errors: { max: 10, rejects: "\(name).jsonl" }
                        sources:
                          - { name: customers, format: csv, path: c.csv, entity: Customer, key: [id],
                              fields: { id: id, email: email, name: name } }
                        """)
                let result = try runSluice(["run", pipeline.path])
                #expect(result.status == 0, "\(name): \(result.stdout)\(result.stderr)")
                #expect(result.stdout.contains("Customer: 30 read, 27 inserted, 0 updated, 0 unchanged, 3 rejected"))
                let rejects = try Self.rejects(directory.url.appendingPathComponent("\(name).jsonl").path)
                let lines = rejects.compactMap { ($0["position"] as? [String: Any])?["line"] as? Int }.sorted()
                #expect(lines == [15, 22, 29], "\(name): the records of ids 14, 21, 28")
                #expect(rejects.allSatisfy { "\($0["failures"] ?? "")".contains("c.csv:8:1") }, "\(name)")
                outcomes.insert(
                    try sqliteRows(
                        directory.url.appendingPathComponent("\(name).sqlite").path,
                        "SELECT id, email FROM Customer ORDER BY 1"))
            }
        }
        #expect(outcomes.count == 1)
    }
}
