import Foundation
import ObjectGraph

/// One rule the stored graph breaks: which entity and property, which rule, how many objects break
/// it, and a few of them named by key.
public struct GraphViolation: Sendable, Equatable, CustomStringConvertible {
    public var entity: String
    public var property: String
    public var rule: ValidationRule
    /// What the rule asks, as a sentence ("lines must have at least 1 object").
    public var requirement: String
    public var count: Int
    /// Up to `GraphValidation.examples` of the offending objects ("Order number=17") or keys.
    public var examples: [String]
    /// Whether there are more than the examples show.
    public var hasMore = false

    public var description: String {
        let objects = count == 1 ? "1 object breaks it" : "\(count) objects break it"
        let shown =
            examples.isEmpty ? "" : " (e.g. " + examples.joined(separator: "; ") + (hasMore ? "; …" : "") + ")"
        return "\(entity).\(property) [\(rule)]: \(requirement); \(objects)\(shown)"
    }
}

/// Validates a whole stored graph, as the final stage of a run and `sluice validate` do: every rule
/// of the model becomes a query for the objects breaking it, answered by the store (in SQL, for the
/// SQLite store, a scan per rule with the foreign keys' indexes for relationship counts), so memory
/// stays flat whatever the store's size. Checked: required attributes and to-one relationships,
/// minimum and maximum values, string lengths and patterns, to-many minimum and maximum counts,
/// uniqueness constraints (including keys holding a to-one relationship).
///
/// Not checked here: custom validators of managed-object subclasses and length rules of binary
/// attributes (they need every object loaded), and Deny rules, which concern deletions: every save
/// checks them (`validateForDelete`), and a store holds no pending deletion to check afterwards.
public enum GraphValidation {
    /// How many offending objects each violation names.
    public static let examples = 5

    /// - Throws: store errors.
    public static func violations(in coordinator: PersistentStoreCoordinator) throws -> [GraphViolation] {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        context.name = "validation"
        return try context.performAndWait {
            var found: [GraphViolation] = []
            for entity in coordinator.managedObjectModel.entities {
                let checks = try checks(of: entity, in: coordinator)
                // One pass over the entity finds whether any rule is broken; each rule is counted
                // on its own only then.
                var any = FetchRequest(entityName: entity.name, predicate: .or(checks.map(\.predicate)))
                any.includesSubentities = false
                let broken = checks.isEmpty ? 0 : try context.count(for: any)
                for check in checks where broken > 0 {
                    var request = FetchRequest(entityName: entity.name, predicate: check.predicate)
                    request.includesSubentities = false
                    let count = try context.count(for: request)
                    guard count > 0 else { continue }
                    request.fetchLimit = examples
                    let objects = try context.fetch(request)
                    found.append(
                        GraphViolation(
                            entity: entity.name, property: check.property, rule: check.rule,
                            requirement: check.requirement,
                            count: count, examples: objects.map(describe), hasMore: count > objects.count))
                    context.reset()
                }
                found += try duplicates(of: entity, in: coordinator)
            }
            return found
        }
    }

    private struct Check {
        var property: String
        var rule: ValidationRule
        var requirement: String
        var predicate: FetchPredicate
    }

    /// The rules of every property of the entity (inherited ones included), checked on the entity's
    /// own objects (sub-entities check theirs); but not required attributes that the store itself
    /// keeps present (NOT NULL columns), whose check would scan the table for nothing.
    private static func checks(
        of entity: EntityDescription, in coordinator: PersistentStoreCoordinator
    ) throws -> [Check] {
        func path(_ name: String) -> ObjectGraph.PredicateExpression { .keyPath([name]) }
        func compare(_ name: String, _ op: PredicateComparison.Operator, _ value: AttributeValue) -> FetchPredicate {
            .comparison(PredicateComparison(path(name), op, .constant(value)))
        }
        func present(_ name: String) -> FetchPredicate { compare(name, .notEqual, .null) }
        var checks: [Check] = []
        for attribute in entity.attributes where !attribute.isTransient {
            let name = attribute.name
            if !attribute.isOptional, try !coordinator.enforcesPresence(of: attribute, in: entity) {
                checks.append(
                    Check(
                        property: name, rule: .required, requirement: "\(name) is required",
                        predicate: compare(name, .equal, .null)))
            }
            if let minimum = attribute.minValue {
                checks.append(
                    Check(
                        property: name, rule: .minValue, requirement: "\(name) must be at least \(minimum)",
                        predicate: .and([present(name), compare(name, .less, minimum)])))
            }
            if let maximum = attribute.maxValue {
                checks.append(
                    Check(
                        property: name, rule: .maxValue, requirement: "\(name) must be at most \(maximum)",
                        predicate: .and([present(name), compare(name, .greater, maximum)])))
            }
            if attribute.type == .string, attribute.minLength != nil || attribute.maxLength != nil {
                // `\X` is one extended grapheme cluster: a Swift `Character`, as saves count them.
                let bounds = "{\(attribute.minLength ?? 0),\(attribute.maxLength.map(String.init) ?? "")}"
                let lengths = [
                    attribute.minLength.map { "at least \($0)" }, attribute.maxLength.map { "at most \($0)" },
                ].compactMap { $0 }
                checks.append(
                    Check(
                        property: name, rule: attribute.maxLength != nil ? .maxLength : .minLength,
                        requirement: "\(name) must be \(lengths.joined(separator: " and ")) characters long",
                        predicate: .and([present(name), .not(compare(name, .matches, .string("(?s)\\X\(bounds)")))])))
            }
            if attribute.type == .string, let pattern = attribute.regularExpression {
                checks.append(
                    Check(
                        property: name, rule: .pattern, requirement: "\(name) must match the pattern \(pattern)",
                        predicate: .and([present(name), .not(compare(name, .matches, .string(pattern)))])))
            }
        }
        for relationship in entity.relationships {
            let name = relationship.name
            if !relationship.isToMany {
                if !relationship.isOptional {
                    checks.append(
                        Check(
                            property: name, rule: .required, requirement: "\(name) is required",
                            predicate: compare(name, .equal, .null)))
                }
                continue
            }
            let count = ObjectGraph.PredicateExpression.keyPath([name, "@count"])
            if let minimum = relationship.effectiveMinCount, minimum > 0 {
                checks.append(
                    Check(
                        property: name, rule: .minCount,
                        requirement: "\(name) must have at least \(minimum) object\(minimum == 1 ? "" : "s")",
                        predicate: .comparison(PredicateComparison(count, .less, .constant(.integer(Int64(minimum)))))))
            }
            if let maximum = relationship.maxCount {
                checks.append(
                    Check(
                        property: name, rule: .maxCount,
                        requirement: "\(name) must have at most \(maximum) object\(maximum == 1 ? "" : "s")",
                        predicate: .comparison(
                            PredicateComparison(count, .greater, .constant(.integer(Int64(maximum)))))))
            }
        }
        return checks
    }

    /// Keys of the entity's own uniqueness constraints that several objects hold (sub-entities share
    /// their ancestors' constraints and are counted with them).
    private static func duplicates(
        of entity: EntityDescription, in coordinator: PersistentStoreCoordinator
    ) throws -> [GraphViolation] {
        var found: [GraphViolation] = []
        for names in entity.uniquenessConstraints {
            let properties: [PropertyDescription] = names.compactMap { name in
                entity.attribute(named: name) ?? entity.relationship(named: name).flatMap { $0.isToMany ? nil : $0 }
            }
            guard properties.count == names.count, !properties.isEmpty else { continue }
            let duplicates = try coordinator.duplicateKeys(of: entity, on: properties, limit: 1000)
            guard !duplicates.isEmpty else { continue }
            let count = duplicates.reduce(0) { $0 + $1.count }
            let examples = duplicates.prefix(examples).map { duplicate in
                zip(names, duplicate.key).map { "\($0)=\($1)" }.joined(separator: ", ")
                    + " (\(duplicate.count) objects)"
            }
            found.append(
                GraphViolation(
                    entity: entity.name, property: names.joined(separator: ", "), rule: .custom("unique"),
                    requirement: "\(names.joined(separator: " + ")) must be unique", count: count, examples: examples,
                    hasMore: duplicates.count > examples.count))
        }
        return found
    }

    /// An object named by its first uniqueness constraint's values, or by its ID.
    static func describe(_ object: ManagedObject) -> String {
        let entity = object.entity
        var cursor: EntityDescription? = entity
        while let current = cursor {
            if let names = current.uniquenessConstraints.first {
                let values = names.map { name -> String in
                    if let attribute = entity.attribute(named: name) {
                        return "\(name)=\(object[attributeAt: attribute.index])"
                    }
                    return "\(name)=\(object.relatedObject(forKey: name).map(describe) ?? "nil")"
                }
                return "\(entity.name) " + values.joined(separator: ", ")
            }
            cursor = current.superentity
        }
        return "\(entity.name) \(object.objectID)"
    }
}
