import Foundation
import ObjectGraph

/// A shop model with properties that are not stored values:
///
/// - derived attributes: `Customer.searchName` (`canonical:(name)`), `Customer.orderCount`
///   (`orders.@count`), `Order.total` (`lines.@sum.amount`), `Order.customerName` (`customer.name`),
///   `Order.savedAt` (`now()`), `Line.label` (`uppercase:(sku)`);
/// - transient relationships: `Customer.favorite` ↔ `Order.favoriteOf` (to-one both ways) and
///   `Customer.watched` ↔ `Order.watchers` (many-to-many);
/// - fetched properties: `Customer.bigOrders` (its orders over 100, largest first) and
///   `Customer.namesakes` (other customers of the same name).
public enum ComputedModel {
    public static func make() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                name: "Customer",
                attributes: [
                    AttributeDescription(name: "name", type: .string, isOptional: false),
                    AttributeDescription(name: "searchName", type: .string, derivation: "canonical:(name)"),
                    AttributeDescription(name: "orderCount", type: .integer32, derivation: "orders.@count"),
                ],
                relationships: [
                    RelationshipDescription(
                        name: "orders", destination: "Order", inverse: "customer", isToMany: true,
                        deleteRule: .cascade),
                    RelationshipDescription(
                        name: "favorite", destination: "Order", inverse: "favoriteOf", isTransient: true),
                    RelationshipDescription(
                        name: "watched", destination: "Order", inverse: "watchers", isToMany: true,
                        isTransient: true),
                ],
                fetchedProperties: [
                    FetchedPropertyDescription(
                        name: "bigOrders", destination: "Order",
                        predicate: "customer == $FETCH_SOURCE AND total > 100",
                        sortDescriptors: [FetchSortDescriptor("total", ascending: false)]),
                    FetchedPropertyDescription(
                        name: "namesakes", destination: "Customer",
                        predicate: "name ==[c] $FETCH_SOURCE.name AND SELF != $FETCH_SOURCE"),
                ]),
            EntityDescription(
                name: "Order",
                attributes: [
                    AttributeDescription(name: "number", type: .integer64, isOptional: false),
                    AttributeDescription(name: "total", type: .decimal, derivation: "lines.@sum.amount"),
                    AttributeDescription(name: "customerName", type: .string, derivation: "customer.name"),
                    AttributeDescription(name: "savedAt", type: .date, derivation: "now()"),
                ],
                relationships: [
                    RelationshipDescription(name: "customer", destination: "Customer", inverse: "orders"),
                    RelationshipDescription(
                        name: "lines", destination: "Line", inverse: "order", isToMany: true, deleteRule: .cascade),
                    RelationshipDescription(
                        name: "favoriteOf", destination: "Customer", inverse: "favorite", isTransient: true),
                    RelationshipDescription(
                        name: "watchers", destination: "Customer", inverse: "watched", isToMany: true,
                        isTransient: true),
                ], uniquenessConstraints: [["number"]]),
            EntityDescription(
                name: "Line",
                attributes: [
                    AttributeDescription(name: "sku", type: .string),
                    AttributeDescription(name: "label", type: .string, derivation: "uppercase:(sku)"),
                    AttributeDescription(name: "amount", type: .decimal),
                ],
                relationships: [RelationshipDescription(name: "order", destination: "Order", inverse: "lines")],
                uniquenessConstraints: [["sku"]]),
        ])
    }
}
