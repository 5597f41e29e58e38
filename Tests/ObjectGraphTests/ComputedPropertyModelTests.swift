import Foundation
import ObjectGraph
import TestSupport
import Testing

/// What the model checks of derived attributes, transient relationships and fetched properties.
@Suite struct ComputedPropertyModelTests {
    static func issues(_ entities: [EntityDescription]) -> [String] {
        do {
            _ = try ManagedObjectModel(entities: entities)
            return []
        } catch let error as ModelValidationError {
            return error.issues.map(\.description)
        } catch {
            return ["\(error)"]
        }
    }

    static func order(
        _ attributes: [AttributeDescription] = [], fetched: [FetchedPropertyDescription] = []
    ) -> [EntityDescription] {
        [
            EntityDescription(
                name: "Order",
                attributes: [AttributeDescription(name: "number", type: .integer64)] + attributes,
                relationships: [
                    RelationshipDescription(name: "lines", destination: "Line", inverse: "order", isToMany: true)
                ],
                fetchedProperties: fetched),
            EntityDescription(
                name: "Line",
                attributes: [
                    AttributeDescription(name: "sku", type: .string),
                    AttributeDescription(name: "amount", type: .double),
                ],
                relationships: [RelationshipDescription(name: "order", destination: "Order", inverse: "lines")]),
        ]
    }

    @Test func theFixtureModelBuildsAndItsVersionHashIgnoresTransientRelationships() throws {
        let model = try ComputedModel.make()
        #expect(model.entity(named: "Customer")?.relationship(named: "favorite")?.isTransient == true)
        let withoutTransients = try ManagedObjectModel(entities: Self.order())
        let withTransient = try ManagedObjectModel(entities: [
            EntityDescription(
                name: "Order", attributes: [AttributeDescription(name: "number", type: .integer64)],
                relationships: [
                    RelationshipDescription(name: "lines", destination: "Line", inverse: "order", isToMany: true),
                    RelationshipDescription(
                        name: "pinned", destination: "Line", inverse: "pinnedBy", isTransient: true),
                ]),
            EntityDescription(
                name: "Line",
                attributes: [
                    AttributeDescription(name: "sku", type: .string),
                    AttributeDescription(name: "amount", type: .double),
                ],
                relationships: [
                    RelationshipDescription(name: "order", destination: "Order", inverse: "lines"),
                    RelationshipDescription(
                        name: "pinnedBy", destination: "Order", inverse: "pinned", isTransient: true),
                ]),
        ])
        #expect(withTransient.versionHash == withoutTransients.versionHash, "a store opens with either")
    }

    @Test func derivationsThatDoNotFitTheEntityAreModelErrors() {
        let cases: [(String, AttributeType, String)] = [
            ("lines.amount", .double, "reads many values: aggregate them"),
            ("lines.@sum.sku", .double, "@sum needs a number or date attribute, not string"),
            ("lines.@count", .string, "@count gives a number: the attribute is string"),
            ("number.@count", .integer64, "number is an attribute of Order: nothing follows it"),
            ("lines.@count.x", .integer64, "@count ends a derivation's key path"),
            ("@count", .integer64, "needs a to-many relationship before it"),
            ("missing", .string, "\"missing\" in \"missing\" is not a property of Order"),
            ("lines", .integer64, "ends at a relationship: name an attribute"),
            ("now()", .string, "now() gives a date: the attribute is string"),
            ("uppercase:(number)", .string, "canonical:, lowercase: and uppercase: take and give strings"),
            ("lowercase:(number", .string, "has no closing parenthesis"),
            ("a..b", .string, "is not a key path"),
            ("lines.@median.amount", .double, "@median is not an aggregate"),
            ("lines.@sum.nosuch", .double, "\"nosuch\" is not an attribute of Line"),
            ("lines.@sum", .double, "@sum needs an attribute of Line after it"),
            ("lines.@sum.amount", .integer32, "@sum.amount gives a double: the attribute is integer32"),
            ("lines.@avg.amount", .integer64, "@avg.amount gives a double: the attribute is integer64"),
            ("lines.@count", .decimal, ""),
            ("number", .string, "Order.number is integer64: the attribute is string"),
        ]
        for (expression, type, expected) in cases {
            let issues = Self.issues(
                Self.order([AttributeDescription(name: "derived", type: type, derivation: expression)]))
            if expected.isEmpty {
                #expect(issues.isEmpty, "\(expression): \(issues)")
            } else {
                #expect(
                    issues.contains { $0.hasPrefix("Order.derived: ") && $0.contains(expected) },
                    "\(expression): \(issues)")
            }
        }
        let keyed = Self.issues([
            EntityDescription(
                name: "Tag",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "slug", type: .string, derivation: "lowercase:(name)"),
                ], uniquenessConstraints: [["slug"]])
        ])
        #expect(
            keyed.contains { $0.contains("Tag.slug: a derived attribute cannot be part of a uniqueness constraint") })
    }

    @Test func aTransientRelationshipNeedsATransientInverseAndNoStorage() {
        let issues = Self.issues([
            EntityDescription(
                name: "A", attributes: [AttributeDescription(name: "x", type: .string)],
                relationships: [
                    RelationshipDescription(name: "b", destination: "B", inverse: "a", isTransient: true),
                    RelationshipDescription(
                        name: "bs", destination: "B", inverse: "as", isToMany: true, joinTable: "a_b",
                        isTransient: true),
                ], uniquenessConstraints: [["x", "b"]]),
            EntityDescription(
                name: "B",
                relationships: [
                    RelationshipDescription(name: "a", destination: "A", inverse: "b"),
                    RelationshipDescription(
                        name: "as", destination: "A", inverse: "bs", isToMany: true, isTransient: true),
                ]),
        ])
        #expect(issues.contains { $0.contains("A.b: it is transient but its inverse B.a is stored") })
        #expect(
            issues.contains {
                $0.contains("A.bs: a transient relationship is never stored: it has no column or join table")
            })
        #expect(issues.contains { $0.contains("A.b: uniqueness constraint names a transient relationship") })
    }

    @Test func fetchedPropertiesNeedADestinationAPredicateAndOnlyFetchSourceVariables() {
        let issues = Self.issues(
            Self.order(fetched: [
                FetchedPropertyDescription(name: "nowhere", destination: "Nowhere", predicate: "TRUEPREDICATE"),
                FetchedPropertyDescription(name: "broken", destination: "Line", predicate: "sku == "),
                FetchedPropertyDescription(name: "stranger", destination: "Line", predicate: "sku == $OTHER"),
                FetchedPropertyDescription(name: "number", destination: "Line", predicate: "TRUEPREDICATE"),
                FetchedPropertyDescription(name: "mine", destination: "Line", predicate: "order == $FETCH_SOURCE"),
            ]))
        #expect(issues.contains { $0.contains("Order.nowhere: destination entity \"Nowhere\" is not in the model") })
        #expect(issues.contains { $0.contains("Order.broken: predicate: ") })
        #expect(issues.contains { $0.contains("Order.stranger: the predicate's $OTHER is not $FETCH_SOURCE") })
        #expect(issues.contains { $0.contains("Order.number: the name is used by another property") })
        #expect(!issues.contains { $0.contains("Order.mine") }, "\(issues)")
    }

    @Test func derivationsNeedInversesAndMayNotReadOneAnotherInALoop() {
        let noInverse = Self.issues([
            EntityDescription(
                name: "Order",
                attributes: [AttributeDescription(name: "n", type: .integer64, derivation: "lines.@count")],
                relationships: [RelationshipDescription(name: "lines", destination: "Line", isToMany: true)]),
            EntityDescription(name: "Line", attributes: [AttributeDescription(name: "x", type: .string)]),
        ])
        #expect(
            noInverse.contains { $0.contains("Order.n: its derivation goes through Order.lines, which has no inverse") }
        )
        let loop = Self.issues([
            EntityDescription(
                name: "Tag",
                attributes: [
                    AttributeDescription(name: "a", type: .string, derivation: "lowercase:(b)"),
                    AttributeDescription(name: "b", type: .string, derivation: "uppercase:(a)"),
                ])
        ])
        #expect(loop.contains { $0.contains("derived values read one another in a loop: Tag.") }, "\(loop)")
        let throughAggregate = Self.issues([
            EntityDescription(
                name: "Order",
                attributes: [AttributeDescription(name: "total", type: .double, derivation: "lines.@sum.x")],
                relationships: [
                    RelationshipDescription(name: "lines", destination: "Line", inverse: "order", isToMany: true)
                ]),
            EntityDescription(
                name: "Line", attributes: [AttributeDescription(name: "x", type: .double, derivation: "order.total")],
                relationships: [RelationshipDescription(name: "order", destination: "Order", inverse: "lines")]),
        ])
        #expect(throughAggregate.contains { $0.contains("in a loop") }, "\(throughAggregate)")
    }

    @Test func aDerivedValueReadingAnotherIsComputedAfterIt() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                name: "Node",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "upper", type: .string, derivation: "uppercase:(lower)"),
                    AttributeDescription(name: "lower", type: .string, derivation: "lowercase:(name)"),
                    AttributeDescription(name: "kidCount", type: .integer64, derivation: "kids.@count"),
                    AttributeDescription(name: "grandkids", type: .integer64, derivation: "kids.@sum.kidCount"),
                ],
                relationships: [
                    RelationshipDescription(name: "kids", destination: "Node", inverse: "parent", isToMany: true),
                    RelationshipDescription(name: "parent", destination: "Node", inverse: "kids"),
                ])
        ])
        let graph = try TestGraph(model: model)
        let root = graph.insert("Node", ["name": "Root"])
        let kid = graph.insert("Node", ["name": "Kid"])
        kid.setRelatedObject(root, forKey: "parent")
        for name in ["a", "b"] { graph.insert("Node", ["name": .string(name)]).setRelatedObject(kid, forKey: "parent") }
        try graph.context.save()
        #expect(root.string(forKey: "upper") == "ROOT" && root.string(forKey: "lower") == "root")
        #expect(root.integer(forKey: "kidCount") == 1 && root.integer(forKey: "grandkids") == 2)
    }

    @Test func fetchedPropertyKeyPathsAreCheckedAgainstTheirEntities() {
        let issues = Self.issues(
            Self.order(fetched: [
                FetchedPropertyDescription(name: "a", destination: "Line", predicate: "nosuch == 3"),
                FetchedPropertyDescription(name: "b", destination: "Line", predicate: "amount > $FETCH_SOURCE.nosuch"),
                FetchedPropertyDescription(
                    name: "c", destination: "Line", predicate: "order == $FETCH_SOURCE",
                    sortDescriptors: [FetchSortDescriptor("nosuch")]),
                FetchedPropertyDescription(
                    name: "d", destination: "Line", predicate: "TRUEPREDICATE",
                    sortDescriptors: [FetchSortDescriptor("order")]),
            ]))
        #expect(issues.contains { $0.hasPrefix("Order.d: sort: order is no single value") }, "\(issues)")
        #expect(
            issues.contains { $0.hasPrefix("Order.a: predicate: ") && $0.contains("Line has no property nosuch") },
            "\(issues)")
        #expect(
            issues.contains {
                $0.hasPrefix("Order.b: $FETCH_SOURCE.nosuch: ") && $0.contains("Order has no property nosuch")
            })
        #expect(issues.contains { $0.hasPrefix("Order.c: sort: ") && $0.contains("Line has no property nosuch") })
    }
}
