import Foundation

// A nightly re-run through the built `sluice` (peak_rss_mb is its own): the kit's `medium`
// customers, products and orders (1,110,000 keyed rows; each order finds its customer and product
// by key) loaded into a new store, then again into the store the first load made. Each case prints
// the first load and the re-run, the re-run with its speed as a share of the first load's
// (`ratio_to_first_load`; the target is at least 0.8).
//
//   rerun_unchanged        the same files again: every row unchanged
//   rerun_10pct_updated    every tenth order's quantity changed: 10% of the orders updated

/// The kit's orders with every tenth order's quantity one more: the second night's file.
private func changedOrders() throws -> String {
    let original = try String(contentsOf: benchData.appendingPathComponent("orders.csv"), encoding: .utf8)
    return try hostileInput("orders-10pct.csv") { handle in
        var chunk = "", row = 0, quoted = false
        for line in original.split(separator: "\n", omittingEmptySubsequences: false) where !line.isEmpty {
            // A line that starts inside a quoted note goes on a record: an odd count of quotes flips that.
            let startsRecord = !quoted
            if line.utf8.reduce(0, { $1 == UInt8(ascii: "\"") ? $0 + 1 : $0 }) % 2 == 1 { quoted.toggle() }
            var fields = line.split(separator: ",", maxSplits: 4, omittingEmptySubsequences: false)
            if startsRecord {
                // id,customer_id,product_id,quantity,… (no quoted field comes before `note`)
                if row > 0, row % 10 == 0, let quantity = Int(fields[3]) {
                    fields[3] = Substring(String(quantity + 1))
                }
                row += 1
            }
            chunk += fields.joined(separator: ",") + "\n"
            if chunk.utf8.count > 1 << 16 {
                try write(chunk, to: handle)
                chunk = ""
            }
        }
        try write(chunk, to: handle)
    }
}

/// A pipeline (file `name`) for the kit's customers, products and orders into the store at `store`,
/// reading orders from `orders`.
private func kitPipeline(_ name: String, store: String, orders: String) throws -> String {
    let model = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        .appendingPathComponent("Pipelines/bench/kit.model.yaml").path
    let data = benchData.path, pipeline = hostileFolder.appendingPathComponent(name).path
    try """
    version: 1
    model: \(model)
    target: { store: sqlite, path: \(store), commit: atomic }
    batch: { size: 5000, contexts: 2 }
    merge: object-trumps
    errors: { max: 0 }
    sources:
      - name: customers
        path: \(data)/customers.csv
        entity: Customer
        key: [id]
        fields: { id: id, name: name, email: email, country: country, balance: balance,
                  signupDate: { column: signup_date, date: "yyyy-MM-dd" } }
      - name: products
        path: \(data)/products.csv
        entity: Product
        key: [id]
        fields: { id: id, sku: sku, name: name, category: category, price: price }
      - name: orders
        path: \(orders)
        entity: Order
        key: [id]
        fields: { id: id, quantity: quantity, price: price, note: note,
                  orderedAt: { column: ordered_at, date: iso8601 } }
        relationships:
          customer: { entity: Customer, key: { id: customer_id }, missing: reject }
          product: { entity: Product, key: { id: product_id }, missing: reject }

    """.write(toFile: pipeline, atomically: true, encoding: .utf8)
    return pipeline
}

func runRerunCase(_ name: String) throws -> Bool {
    guard name == "rerun_unchanged" || name == "rerun_10pct_updated" else { return false }
    let files = ["customers.csv", "products.csv", "orders.csv"]
    let rows = 1_110_000, bytes = try uncompressedBytes(files)
    let orders = benchData.appendingPathComponent("orders.csv").path
    let store = output("rerun.sqlite")
    let first = try runSluice(["run", try kitPipeline("rerun-first.yaml", store: store, orders: orders), "--quiet"])
    reportChild("\(name)_first_load", records: rows, bytes: bytes, first)
    let again = try kitPipeline(
        "rerun-again.yaml", store: store, orders: name == "rerun_10pct_updated" ? try changedOrders() : orders)
    let rerun = try runSluice(["run", again, "--quiet"])
    reportChild(
        name, records: rows, bytes: bytes, rerun,
        extra: String(format: " ratio_to_first_load=%.2f", first.seconds / rerun.seconds))
    return true
}
