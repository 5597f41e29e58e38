import Foundation

/// What the model resolves and checks of properties that are not stored values: transient
/// relationships, derived attributes and fetched properties.
extension ManagedObjectModel {
    static func resolveComputedProperties(
        of entity: EntityDescription, _ byName: [String: EntityDescription], _ issues: inout [ModelIssue]
    ) {
        for relationship in entity.declaredRelationships where relationship.index >= 0 && relationship.isTransient {
            checkTransient(relationship, of: entity, &issues)
        }
        for attribute in entity.declaredAttributes where attribute.index >= 0 {
            guard let expression = attribute.derivationExpression else { continue }
            func issue(_ message: String) {
                issues.append(ModelIssue(entity: entity.name, property: attribute.name, message: message))
            }
            do {
                let derivation = try Derivation(expression)
                if let message = check(derivation, of: attribute, in: entity) { issue(message) }
                attribute.derivation = derivation
            } catch {
                issue("derivation: \(error.description)")
            }
            if attribute.isTransient { issue("a derived attribute is stored: it cannot be transient too") }
            if entity.uniquenessConstraints.contains(where: { $0.contains(attribute.name) }) {
                issue("a derived attribute cannot be part of a uniqueness constraint (it changes at every save)")
            }
        }
        for property in entity.declaredFetchedProperties where property.index >= 0 {
            resolveFetched(property, of: entity, byName, &issues)
        }
    }

    /// A transient relationship's inverse is transient too, and it names no storage.
    private static func checkTransient(
        _ relationship: RelationshipDescription, of entity: EntityDescription, _ issues: inout [ModelIssue]
    ) {
        func issue(_ message: String) {
            issues.append(ModelIssue(entity: entity.name, property: relationship.name, message: message))
        }
        if let inverse = relationship.inverse, !inverse.isTransient {
            issue(
                "it is transient but its inverse \(inverse.entity.name).\(inverse.name) is stored: make both "
                    + "transient, or neither")
        }
        if relationship.joinTable != nil || relationship.columnName != nil {
            issue("a transient relationship is never stored: it has no column or join table")
        }
        if entity.uniquenessConstraints.contains(where: { $0.contains(relationship.name) }) {
            issue("uniqueness constraint names a transient relationship, which is never stored")
        }
        if entity.columnOrder.contains(relationship.name) {
            issue("columnOrder names a transient relationship, which has no column")
        }
    }

    /// A message when a derivation's key path does not fit the entity or the attribute's type.
    private static func check(
        _ derivation: Derivation, of attribute: AttributeDescription, in entity: EntityDescription
    ) -> String? {
        guard let path = derivation.path else {
            return attribute.type == .date ? nil : "now() gives a date: the attribute is \(attribute.type)"
        }
        var current = entity
        var throughToMany = false
        var index = 0
        while index < path.count {
            let key = path[index]
            if key.hasPrefix("@") {
                guard throughToMany, ["@count", "@sum", "@avg", "@min", "@max"].contains(key) else {
                    return "\(key) in \(derivation.expression.debugDescription) needs a to-many relationship before it "
                        + "(@count, @sum, @avg, @min or @max)"
                }
                if key == "@count" {
                    guard index == path.count - 1 else { return "@count ends a derivation's key path" }
                    return attribute.type.isInteger || attribute.type == .decimal || attribute.type == .double
                        ? nil : "@count gives a number: the attribute is \(attribute.type)"
                }
                guard index == path.count - 2, let source = current.attribute(named: path[index + 1]) else {
                    return "\(key) is followed by an attribute of \(current.name), and ends the key path"
                }
                return source.type.isOrdered ? nil : "\(key) needs a number or date attribute, not \(source.type)"
            }
            if let relationship = current.relationship(named: key) {
                if throughToMany && relationship.isToMany { return "a derivation goes through one to-many at most" }
                throughToMany = throughToMany || relationship.isToMany
                current = relationship.destinationEntity
            } else if let source = current.attribute(named: key) {
                guard index == path.count - 1 else {
                    return "\(key) is an attribute of \(current.name): nothing follows it in a key path"
                }
                if throughToMany {
                    return "\(derivation.expression.debugDescription) reads many values: aggregate them "
                        + "(@count, @sum, @avg, @min, @max)"
                }
                if case .text = derivation.kind, source.type != .string || attribute.type != .string {
                    return "canonical:, lowercase: and uppercase: take and give strings"
                }
                if source === attribute { return "a derived attribute cannot derive from itself" }
                return nil
            } else {
                return "\(key.debugDescription) in \(derivation.expression.debugDescription) is not a property of "
                    + "\(current.name)"
            }
            index += 1
        }
        return "\(derivation.expression.debugDescription) ends at a relationship: name an attribute"
    }

    private static func resolveFetched(
        _ property: FetchedPropertyDescription, of entity: EntityDescription,
        _ byName: [String: EntityDescription], _ issues: inout [ModelIssue]
    ) {
        func issue(_ message: String) {
            issues.append(ModelIssue(entity: entity.name, property: property.name, message: message))
        }
        guard let destination = byName[property.destinationEntityName] else {
            return issue("destination entity \(property.destinationEntityName.debugDescription) is not in the model")
        }
        property.destinationEntity = destination
        do {
            let predicate = try FetchPredicate(format: property.predicateFormat)
            for name in predicate.variableNames
            where name.split(separator: ".").first.map(String.init) != FetchedPropertyDescription.sourceVariable {
                issue("the predicate's $\(name) is not $FETCH_SOURCE (or a key path after it)")
            }
            property.predicate = predicate
        } catch {
            issue("predicate: \(error)")
        }
    }

    /// Each entity learns which of its relationships lead to objects whose derivations read it.
    static func resolveDerivationDependents(_ entities: [EntityDescription]) {
        for entity in entities {
            for attribute in entity.attributes where attribute.derivation != nil {
                guard let first = attribute.derivation?.path?.first, let step = entity.relationship(named: first),
                    let inverse = step.inverse
                else { continue }
                for kind in entities where kind.isKind(of: step.destinationEntity) {
                    if !kind.derivationDependents.contains(where: { $0 === inverse }) {
                        kind.derivationDependents.append(inverse)
                    }
                }
            }
        }
    }
}
