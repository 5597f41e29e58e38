import Drivers
import Foundation
import TestSupport
import Testing

@Suite struct SeedCommandTests {
    @Test func sampleSeedPrintsTheStore() throws {
        let result = try runSluice(["seed", "SampleData/shop.model.yaml", "SampleData/shop.seed.yaml"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout.hasPrefix(
                "Seeded 16 objects (Customer: 3, Order: 3, OrderLine: 4, Product: 3, Tag: 3) into an in-memory store.\n"
            ))
        #expect(result.stdout.contains("Customer (3)\n"))
        #expect(
            result.stdout.contains(
                "number=1001 placedAt=2024-02-01T10:00:00.000Z note=\"leave at the door,\\nring twice\" "
                    + "customer->Customer(1) lines=[2]"
            ))
        #expect(result.stdout.contains("sku=\"W-100\" title=\"Widget\" price=19.99 lines=[2] tags=[2]"))
        #expect(result.stderr.isEmpty)
    }

    @Test func seedingIntoAFileLeavesPlainSQLiteAndASecondRunChangesNothing() throws {
        let dir = try TemporaryDirectory()
        let store = dir.url.appendingPathComponent("nested/shop.sqlite")
        let result = try runSluice([
            "seed", "SampleData/shop.model.yaml", "SampleData/shop.seed.yaml", "--to", store.path, "--quiet",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("into the SQLite store \(store.path)"))
        let db = try SQLiteConnection(path: store.path, mode: .readOnly)
        let query = try db.makeStatement(
            "SELECT o.order_number, c.name FROM orders o JOIN customers c USING (customer_id) ORDER BY 1")
        var rows: [String] = []
        while try query.step() { rows.append("\(query.int64(0)) \(query.string(1) ?? "")") }
        #expect(rows == ["1001 Ada O'Brien", "1002 Бори́с Пастерна́к", "1003 Ada O'Brien"])

        // The same seed again meets its own keys in the store: a data error (exit 1), the file unchanged.
        let again = try runSluice([
            "seed", "SampleData/shop.model.yaml", "SampleData/shop.seed.yaml", "--to", store.path, "--quiet",
        ])
        #expect(again.status == 1)
        #expect(again.stderr.contains("2 Customer objects have id = 1"))
        let count = try SQLiteConnection(path: store.path, mode: .readOnly).makeStatement(
            "SELECT count(*) FROM customers")
        #expect(try count.step() && count.int64(0) == 3)
    }

    @Test func aBadModelExitsWithTwoAndNamesThePosition() throws {
        let dir = try TemporaryDirectory()
        let model = try dir.file(
            "bad.model.yaml", contents: "entities:\n  A:\n    relationships:\n      b: { destination: Nope }\n")
        let seed = try dir.file("seed.yaml", contents: "A: []\n")
        let result = try runSluice(["seed", model.path, seed.path])
        #expect(result.status == 2)
        #expect(result.stderr.contains("bad.model.yaml:4:7: A.b: destination entity \"Nope\" is not in the model"))
        #expect(result.stdout.isEmpty)
    }

    @Test func invalidDataExitsWithOneAndListsEveryFailure() throws {
        let dir = try TemporaryDirectory()
        let seed = try dir.file(
            "seed.yaml",
            contents: """
                Customer:
                  - { id: 9, name: X, email: not-an-email, country: FRA }
                """)
        let result = try runSluice(["seed", "SampleData/shop.model.yaml", seed.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("Validation failed with 2 errors"))
        #expect(result.stderr.contains("Customer.email [pattern]"))
        #expect(result.stderr.contains("Customer.country [maxLength]"))
    }

    @Test func usageErrorsExitWithTwo() throws {
        let result = try runSluice(["seed"])
        #expect(result.status == 64 || result.status == 2)
        #expect(result.stderr.contains("Missing expected argument"))
    }
}
