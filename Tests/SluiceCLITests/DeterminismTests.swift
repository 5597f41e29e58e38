import Drivers
import Foundation
import TestSupport
import Testing

/// The same input gives the same store and the same rejects file, byte for byte, every time and
/// whatever the number of contexts: batches are mapped in parallel but linked and written in input
/// order. The inputs have the shapes that made results depend on timing: keys repeated across
/// batches, a source filtered by `where` (no repeat check: the merge decides), rows pointing at rows
/// that come later (they wait) or never (rejected), values breaking rules, unreadable rows. And what
/// the rejects file says of a record: every failure, not only the first.
@Suite struct DeterminismTests {
    /// Employees with managers (some later in the file, some nobody), repeated ids, bad emails and
    /// ragged rows, under `merge: error`; and values filtered by `where` with repeated codes under
    /// `merge: overwrite`, where the last record of each code must win.
    @Test func manyRunsWithSeveralContextsGiveOneStoreAndOneRejectsFile() throws {
        let directory = try TemporaryDirectory()
        let inputs = try Self.employeesAndValues(in: directory)
        var outcomes: [String: Int] = [:]
        for run in 0..<12 {
            let (size, contexts) = [(1, 4), (1, 2), (3, 3), (2, 4)][run % 4]
            let store = directory.url.appendingPathComponent("run-\(run).sqlite").path
            let rejects = directory.url.appendingPathComponent("run-\(run).jsonl").path
            let pipeline = try directory.file(
                "p-\(run).yaml",
                contents: Self.pipeline(inputs, batch: (size, contexts), store: store, rejects: rejects))
            let result = try runSluice(["run", pipeline.path])
            #expect(result.status == 0, "run \(run): \(result.stderr)")
            let stored =
                try sqliteRows(store, "SELECT * FROM Employee ORDER BY id") + [[.text("values")]]
                + sqliteRows(store, "SELECT code, value FROM Value ORDER BY code")
            let lines = try String(contentsOfFile: rejects, encoding: .utf8)
            outcomes["\(stored)\n\(lines)", default: 0] += 1
            try Self.expectTheLastValueOfEachCodeWins(store, run: run)
            Self.expectEveryRecordAccountedFor(stdout: result.stdout, rejects: lines, run: run)
        }
        #expect(outcomes.count == 1, "\(outcomes.count) different outcomes in 12 runs: \(outcomes.values.sorted())")
    }

    /// The inputs of `manyRunsWithSeveralContextsGiveOneStoreAndOneRejectsFile`: 160 employees (ids
    /// repeated from 150 on, managers later in the file or nobody, every 13th email bad, 5 ragged
    /// rows), 90 values of 9 codes (every 4th negative), and the model.
    static func employeesAndValues(
        in directory: TemporaryDirectory
    ) throws -> (model: URL, employees: URL, values: URL) {
        var employees = "id,name,email,manager_id\n"
        for row in 0..<160 {
            if row % 37 == 5 {
                employees += "\(row),ragged\n"  // unreadable: two fields short
                continue
            }
            let manager = row % 11 == 0 ? "" : "\((row * 7 + 3) % 170)"  // 150…169: nobody
            let email = row % 13 == 0 ? "not-an-email" : "e\(row)@example.com"
            employees += "\(row % 150),name \(row),\(email),\(manager)\n"
        }
        var values = "code,value\n"
        for row in 0..<90 { values += "K\(row % 9),\(row % 4 == 3 ? -row : row)\n" }
        let employeesCSV = try directory.file("employees.csv", contents: employees)
        let valuesCSV = try directory.file("values.csv", contents: values)
        let model = try directory.file(
            "m.yaml",
            contents: """
                version: 1
                entities:
                  Employee:
                    attributes:
                      id: integer64!
                      name: string!
                      email: { type: string, regex: "[^@ ]+@[^@ ]+" }
                    relationships:
                      manager: { destination: Employee, inverse: reports }
                      reports: { destination: Employee, toMany: true, inverse: manager }
                    unique: [[id]]
                  Value:
                    attributes: { code: string!, value: integer64! }
                    unique: [[code]]
                """)
        return (model, employeesCSV, valuesCSV)
    }

    /// A pipeline of both inputs into `store` with `batch` size and contexts, its rejects in `rejects`.
    static func pipeline(
        _ inputs: (model: URL, employees: URL, values: URL), batch: (size: Int, contexts: Int), store: String,
        rejects: String
    ) -> String {
        """
        version: 1
        model: \(inputs.model.path)
        target: { store: sqlite, path: \(store) }
        batch: { size: \(batch.size), contexts: \(batch.contexts) }
        merge: overwrite
        errors: { max: 1000, rejects: \(rejects) }
        sources:
          - { name: employees, path: \(inputs.employees.path), entity: Employee, key: [id],
              fields: { id: id, name: name, email: email },
              relationships: { manager: { entity: Employee, key: { id: manager_id }, missing: reject } } }
          - { name: values, path: \(inputs.values.path), entity: Value, key: [code],
              fields: { code: code, value: value }, where: "value >= 0" }
        """
    }

    /// The last record of each code passing the filter wins (every code has one).
    static func expectTheLastValueOfEachCodeWins(_ store: String, run: Int) throws {
        let kept = try sqliteRows(store, "SELECT value FROM Value ORDER BY code").map { $0[0] }
        var expected: [SQLiteValue] = []
        for code in 0..<9 {
            let last: Int = (0..<90).last { row in row % 9 == code && row % 4 != 3 }!
            expected.append(.integer(Int64(last)))
        }
        #expect(kept == expected, "run \(run)")
    }

    /// Every record read is stored, rejected or left out by `where`; the ragged rows are rejected;
    /// the rejects are in input order, whatever waited or was retried.
    static func expectEveryRecordAccountedFor(stdout: String, rejects lines: String, run: Int) {
        let employees = OneOffImportTests.counts(stdout, "Employee")
        let values = OneOffImportTests.counts(stdout, "Value")
        #expect(employees?.first == 160 && OneOffImportTests.addsUp(employees), "\(stdout)")
        #expect(values?.first == 90 && values?.last == 22 && OneOffImportTests.addsUp(values), "\(stdout)")
        #expect(lines.components(separatedBy: "\"rule\":\"raggedRow\"").count - 1 == 5)
        let places = lines.split(separator: "\n").compactMap { line -> Int? in
            guard let range = line.range(of: "\"record\":") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        #expect(places.count == employees?[4] && places == places.sorted(), "run \(run)")
    }

    /// A rejected record lists every failure: each rule its values break (an invalid email does not
    /// hide a negative balance), and the lookups that find nothing even when a field failed first.
    @Test func aRejectedRecordListsEveryFailure() throws {
        let directory = try TemporaryDirectory()
        let model = try directory.file(
            "m.yaml",
            contents: """
                version: 1
                entities:
                  Customer:
                    attributes:
                      id: integer64!
                      email: { type: string, regex: "[^@ ]+@[^@ ]+" }
                      balance: { type: decimal, min: "0" }
                      age: { type: integer16, max: 150 }
                    relationships: { orders: { destination: Order, toMany: true, inverse: customer } }
                    unique: [[id]]
                  Order:
                    attributes: { number: integer64!, qty: integer32! }
                    relationships: { customer: { destination: Customer, inverse: orders, optional: false } }
                    unique: [[number]]
                """)
        let customers = try directory.file("c.csv", contents: "id,email,balance,age\n1,bad,-5,200\n2,ok@x.y,3,20\n")
        let orders = try directory.file("o.csv", contents: "number,qty,cust\n10,x,99\n11,4,2\n12,5,77\n")
        let rejects = directory.url.appendingPathComponent("r.jsonl").path
        let pipeline = try directory.file(
            "p.yaml",
            contents: """
                version: 1
                model: \(model.path)
                target: { store: sqlite, path: \(directory.url.appendingPathComponent("o.sqlite").path) }
                errors: { max: 10, rejects: \(rejects) }
                sources:
                  - { name: customers, path: \(customers.path), entity: Customer, key: [id],
                      fields: { id: id, email: email, balance: balance, age: age } }
                  - { name: orders, path: \(orders.path), entity: Order, key: [number],
                      fields: { number: number, qty: qty },
                      relationships: { customer: { entity: Customer, key: { id: cust }, missing: reject } } }
                """)
        let result = try runSluice(["run", pipeline.path])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try String(contentsOfFile: rejects, encoding: .utf8).split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
        let failures = lines.map { line in
            (line["failures"] as! [[String: Any]]).map { "\($0["property"]!) \($0["rule"]!)" }
        }
        #expect(
            failures == [
                ["email pattern", "balance minValue", "age maxValue"], ["qty integer", "customer lookup"],
                ["customer lookup"],
            ], "\(failures)")
        let second = (lines[1]["failures"] as! [[String: Any]])[1]
        #expect((second["message"] as! String).hasPrefix("no Customer with id = 99"))
        #expect((second["position"] as! [String: Any])["column"] as? Int == 6)
    }
}
