import Foundation
import ModelFiles
import ObjectGraph
import Pipeline
import TestSupport
import Testing

/// A pipeline cannot fill what the model computes or keeps in memory only.
@Suite struct ComputedPropertyPipelineTests {
    static let model = """
        entities:
          Customer:
            attributes:
              code: { type: string, optional: false }
              name: string
              searchName: { type: string, derived: "canonical:(name)" }
            relationships:
              orders: { destination: Order, toMany: true, inverse: customer }
              favorite: { destination: Order, inverse: favoriteOf, transient: true }
            unique: [code]
            fetchedProperties:
              bigOrders: { destination: Order, predicate: "customer == $FETCH_SOURCE AND total > 100", sort: [-total] }
          Order:
            attributes:
              number: { type: integer64, optional: false }
              total: { type: decimal, derived: "lines.@sum.amount" }
            relationships:
              customer: { destination: Customer, inverse: orders }
              favoriteOf: { destination: Customer, inverse: favorite, transient: true }
              lines: { destination: Line, toMany: true, inverse: order }
            unique: [number]
          Line:
            attributes: { amount: decimal }
            relationships: { order: { destination: Order, inverse: lines } }
        """

    static func issues(_ sources: String) throws -> [String] {
        let directory = try TemporaryDirectory()
        let modelPath = directory.url.appendingPathComponent("shop.model.yaml")
        try model.write(to: modelPath, atomically: true, encoding: .utf8)
        let text = """
            version: 1
            model: \(modelPath.path)
            target: { store: sqlite, path: out.sqlite }
            sources:
            \(sources)
            """
        do {
            _ = try PipelineFile.load(text: text, file: directory.url.appendingPathComponent("p.yaml").path)
            return []
        } catch let error as PipelineFileError {
            return error.issues.map(\.description)
        }
    }

    @Test func theModelFileReadsDerivedTransientAndFetchedProperties() throws {
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent("shop.model.yaml")
        try Self.model.write(to: path, atomically: true, encoding: .utf8)
        let model = try ModelFile.load(contentsOf: path)
        let customer = try #require(model.entity(named: "Customer"))
        #expect(customer.attribute(named: "searchName")?.derivation?.expression == "canonical:(name)")
        #expect(customer.relationship(named: "favorite")?.isTransient == true)
        let big = try #require(customer.fetchedProperty(named: "bigOrders"))
        #expect(big.destinationEntity === model.entity(named: "Order"))
        #expect(big.sortDescriptors == [FetchSortDescriptor("total", ascending: false)])
    }

    @Test func aFieldMappedIntoADerivedAttributeIsAPipelineErrorNamingBoth() throws {
        let issues = try Self.issues(
            """
              - name: orders
                path: orders.csv
                entity: Order
                key: [number]
                fields: { number: order_no, total: order_total }
            """)
        #expect(
            issues.contains {
                $0.contains("field \"order_total\" cannot go into Order.total: it is derived (lines.@sum.amount)")
            }, "\(issues)")
    }

    @Test func aLookupIntoATransientRelationshipIsAPipelineErrorNamingBoth() throws {
        let issues = try Self.issues(
            """
              - name: customers
                path: customers.csv
                entity: Customer
                key: [code]
                fields: { code: code, name: name }
                relationships: { favorite: { key: { number: favorite_order } } }
            """)
        #expect(
            issues.contains {
                $0.contains("field \"favorite_order\" cannot set Customer.favorite: it is a transient relationship")
            }, "\(issues)")
    }
}
