import Drivers
import Foundation
import TestSupport
import Testing

/// Consecutive sources of one XML or SQL dump file are read in one pass, in the file's order: the
/// result is the same as reading the file once per source, whatever order the file lists its
/// records in (records whose parent comes later wait for it).
@Suite struct SharedPassTests {
    /// Products, then orders whose customers come later, then the customers, then more orders.
    static let document = """
        <?xml version="1.0" encoding="UTF-8"?>
        <shop>
          <products>
            <product sku="W-1"><title>Widget</title><price>2.50</price></product>
            <product sku="G-2"><title>Gadget</title><price>10</price></product>
          </products>
          <orders>
            <order id="1" customer="7"><placed>2024-01-02T10:00:00Z</placed><line no="1" sku="W-1" qty="2" \
        price="2.50"/></order>
            <order id="2" customer="8"><placed>2024-01-03T10:00:00Z</placed><line no="1" sku="G-2" qty="1" \
        price="10"/><line no="2" sku="W-1" qty="4" price="2.40"/></order>
            <order id="3" customer="7"><placed>2024-01-04T10:00:00Z</placed><line no="1" sku="G-2" qty="3" \
        price="9.90"/></order>
          </orders>
          <customers>
            <customer id="7"><name>Ada</name><email>ada@example.com</email></customer>
            <customer id="8"><name>Grace</name><email>grace@example.com</email></customer>
          </customers>
          <orders>
            <order id="4" customer="8"><placed>2024-02-01T10:00:00Z</placed><line no="1" sku="W-1" qty="1" \
        price="2.50"/></order>
          </orders>
        </shop>
        """

    /// The pipeline over `files` (customers, products, orders: one file for all, or one each).
    static func pipeline(_ files: [URL], store: String) -> String {
        """
        model: \(repositoryRoot.path)/SampleData/shop.model.yaml
        target: { store: sqlite, path: \(store), commit: atomic }
        batch: { size: 1, contexts: 2 }
        merge: object-trumps
        errors: { max: 0 }
        sources:
          - { name: customers, format: xml, path: \(files[0].path), record: /shop/customers/customer, entity: \
        Customer, key: [id],
              fields: { id: "@id", name: name, email: email } }
          - { name: products, format: xml, path: \(files[1].path), record: /shop/products/product, entity: Product, \
        key: [sku],
              fields: { sku: "@sku", title: title, price: price } }
          - name: orders
            format: xml
            path: \(files[2].path)
            record: /shop/orders/order
            entity: Order
            key: [number]
            fields: { number: "@id", placedAt: { path: placed, date: iso8601 } }
            relationships:
              customer: { entity: Customer, key: { id: "@customer" }, missing: reject }
            children:
              - record: line
                entity: OrderLine
                parent: order
                fields: { lineNo: "@no", quantity: "@qty", price: "@price" }
                relationships:
                  product: { entity: Product, key: { sku: "@sku" }, missing: reject }
        """
    }

    static let contents = """
        SELECT o.order_number, c.email, l.line_no, p.sku, l.quantity, l.price FROM orders o
        JOIN customers c USING (customer_id) JOIN order_lines l ON l.order_id = o.order_number
        JOIN products p ON p.sku = l.product_id ORDER BY 1, 3
        """

    @Test func oneFileIsReadOnceAndEndsAsReadingItPerSource() throws {
        let directory = try TemporaryDirectory()
        let shared = try directory.file("shop.xml", contents: Self.document)
        let separate = try ["c.xml", "p.xml", "o.xml"].map { try directory.file($0, contents: Self.document) }
        let one = directory.url.appendingPathComponent("one.sqlite").path,
            three = directory.url.appendingPathComponent("three.sqlite").path
        let report = directory.url.appendingPathComponent("report.json").path
        let first = try runSluice([
            "run", try directory.file("one.yaml", contents: Self.pipeline([shared, shared, shared], store: one)).path,
            "--report", report,
        ])
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        #expect(first.stdout.contains("Order: 4 read, 4 inserted"), "\(first.stdout)")
        #expect(first.stdout.contains("OrderLine: 5 read, 5 inserted"), "\(first.stdout)")
        let second = try runSluice([
            "run", try directory.file("three.yaml", contents: Self.pipeline(separate, store: three)).path,
        ])
        #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
        let rows = try sqliteRows(one, Self.contents)
        #expect(rows.count == 5)
        #expect(rows == (try sqliteRows(three, Self.contents)))
        #expect(
            rows.first == [.integer(1), .text("ada@example.com"), .integer(1), .text("W-1"), .integer(2), .real(2.5)])
        // Each source of the pass still has its stage in the report, in the pipeline's order.
        let json =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any]
        let stages = (json?["stages"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(stages == ["target", "customers", "products", "orders", "indexes", "validation", "commit"])
    }

    /// A record whose parent never comes in the pass is rejected with its key, as per source.
    @Test func aParentMissingFromTheWholePassIsRejected() throws {
        let directory = try TemporaryDirectory()
        let shared = try directory.file(
            "shop.xml",
            contents: Self.document.replacingOccurrences(
                of: "customer=\"8\"><placed>2024-02-01", with: "customer=\"9\"><placed>2024-02-01"))
        let store = directory.url.appendingPathComponent("s.sqlite").path
        let pipeline = Self.pipeline([shared, shared, shared], store: store).replacingOccurrences(
            of: "errors: { max: 0 }", with: "errors: { max: 5, rejects: \(directory.url.path)/r.jsonl }")
        let result = try runSluice(["run", try directory.file("p.yaml", contents: pipeline).path])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let rejects = try String(contentsOf: directory.url.appendingPathComponent("r.jsonl"), encoding: .utf8)
        #expect(rejects.contains("no Customer with id = 9"), "\(rejects)")
        #expect(
            try sqliteRows(store, "SELECT order_number FROM orders ORDER BY 1") == [
                [.integer(1)], [.integer(2)], [.integer(3)],
            ])
    }
}
