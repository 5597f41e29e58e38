import Drivers
import Foundation

/// A pipeline `p.yaml` in `directory` over the sample shop model (`SampleData/shop.model.yaml`) with
/// one CSV source of customers (`customer_id,name,email,signup`), into `out/c.sqlite` with
/// `commit: atomic` and `merge: object-trumps`; rejected records go to `out/rejects.jsonl`.
/// - Parameter max: `errors.max`.
public func customersPipeline(in directory: TemporaryDirectory, csv: String, max: Int = 0) throws -> URL {
    let input = try directory.file("customers.csv", contents: csv)
    return try directory.file(
        "p.yaml",
        contents: """
            model: \(repositoryRoot.path)/SampleData/shop.model.yaml
            target: { store: sqlite, path: out/c.sqlite, commit: atomic }
            merge: object-trumps
            errors: { max: \(max), rejects: out/rejects.jsonl }
            sources:
              - name: customers
                path: \(input.path)
                entity: Customer
                key: [id]
                fields: { id: customer_id, name: name, email: { column: email, transform: lowercase }, signedUp: \
            { column: signup, date: "yyyy-MM-dd" } }
            """)
}

/// Every row of every entity table of a sample shop store (customers, orders, order lines,
/// products), each table's rows by their first column (the key).
public func everyShopRow(_ store: String) throws -> [[SQLiteValue]] {
    try ["customers", "orders", "order_lines", "products"].flatMap {
        try sqliteRows(store, "SELECT * FROM \"\($0)\" ORDER BY 1")
    }
}
