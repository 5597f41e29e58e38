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
                return checkAggregate(key, path: path, at: index, of: current, throughToMany, attribute, derivation)
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
                return fits(source.type, into: attribute.type)
                    ? nil : "\(current.name).\(source.name) is \(source.type): the attribute is \(attribute.type)"
            } else {
                return "\(key.debugDescription) in \(derivation.expression.debugDescription) is not a property of "
                    + "\(current.name)"
            }
            index += 1
        }
        return "\(derivation.expression.debugDescription) ends at a relationship: name an attribute"
    }

    /// The part of a derivation from an aggregate (`@sum.amount`) on.
    private static func checkAggregate(
        _ key: String, path: [String], at index: Int, of current: EntityDescription, _ throughToMany: Bool,
        _ attribute: AttributeDescription, _ derivation: Derivation
    ) -> String? {
        guard ["@count", "@sum", "@avg", "@min", "@max"].contains(key) else {
            return "\(key) is not an aggregate: use @count, @sum, @avg, @min or @max"
        }
        guard throughToMany else {
            return "\(key) in \(derivation.expression.debugDescription) needs a to-many relationship before it"
        }
        if key == "@count" {
            guard index == path.count - 1 else { return "@count ends a derivation's key path" }
            return fits(.integer64, into: attribute.type)
                ? nil : "@count gives a number: the attribute is \(attribute.type)"
        }
        guard index + 1 < path.count else { return "\(key) needs an attribute of \(current.name) after it" }
        guard let source = current.attribute(named: path[index + 1]) else {
            return "\(path[index + 1].debugDescription) is not an attribute of \(current.name)"
        }
        guard index + 2 == path.count else { return "\(key).\(source.name) ends a derivation's key path" }
        guard source.type.isOrdered else { return "\(key) needs a number or date attribute, not \(source.type)" }
        let result: AttributeType
        switch key {
        case "@sum" where source.type.isDate, "@avg" where source.type.isDate:
            return "\(key) adds numbers: \(current.name).\(source.name) is \(source.type)"
        case "@avg": result = source.type == .decimal ? .decimal : .double
        default: result = source.type
        }
        return fits(result, into: attribute.type)
            ? nil : "\(key).\(source.name) gives a \(result): the attribute is \(attribute.type)"
    }

    /// Whether values of type `value` can be stored in an attribute of type `target` without loss
    /// of kind: the same type, integers into any number, doubles and floats into each other.
    private static func fits(_ value: AttributeType, into target: AttributeType) -> Bool {
        if value == target { return true }
        switch (value, target) {
        case (.integer16, _), (.integer32, _), (.integer64, _):
            return target.isInteger || target == .decimal || target == .double || target == .float
        case (.double, .float), (.float, .double), (.decimal, .double), (.calendarDate, .date): return true
        default: return false
        }
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
            // Key paths are checked against the destination, and after `$FETCH_SOURCE` against the entity.
            var placeholders: [String: PredicateArgument] = [:]
            for name in predicate.variableNames {
                let path = name.split(separator: ".").map(String.init)
                guard path.first == FetchedPropertyDescription.sourceVariable else {
                    issue("the predicate's $\(name) is not $FETCH_SOURCE (or a key path after it)")
                    continue
                }
                if path.count > 1 {
                    do { _ = try entity.checkKeyPath(Array(path.dropFirst())) } catch { issue("$\(name): \(error)") }
                }
                placeholders[name] = .value(.null)
            }
            do { _ = try predicate.substituting(placeholders).compiled(for: destination) } catch {
                issue("predicate: \(error)")
            }
            for sort in property.sortDescriptors {
                do {
                    if try destination.checkKeyPath(sort.path) || destination.endEntity(of: sort.path) != nil {
                        issue("sort: \(sort.keyPath) is no single value (sort by an attribute, through to-ones)")
                    }
                } catch { issue("sort: \(error)") }
            }
            property.predicate = predicate
        } catch {
            issue("predicate: \(error)")
        }
    }

    /// Each entity learns the paths (inverses of a derivation's relationship steps) from its objects
    /// back to the objects whose derived values read them, so that a save recomputes those; every
    /// step needs an inverse, and derived values may not read one another in a cycle.
    static func resolveDerivationDependents(_ entities: [EntityDescription], _ issues: inout [ModelIssue]) {
        var reads: [ObjectIdentifier: AttributeDescription] = [:]  // derived attribute → derived attribute it reads
        for entity in entities {
            for attribute in entity.declaredAttributes where attribute.index >= 0 {
                guard let path = attribute.derivation?.path else { continue }
                var steps: [RelationshipDescription] = []
                var current = entity
                for key in path {
                    guard let relationship = current.relationship(named: key) else { break }
                    steps.append(relationship)
                    current = relationship.destinationEntity
                }
                // What the derivation reads of the objects at the end: an attribute, or (@count) none.
                let tail = path[steps.count...]
                let read = tail.first?.hasPrefix("@") == true ? tail.dropFirst().first : tail.first
                if let read, let attribute2 = current.attribute(named: read), attribute2.isDerived {
                    reads[ObjectIdentifier(attribute)] = attribute2
                }
                if let missing = steps.first(where: { $0.inverse == nil }) {
                    issues.append(
                        ModelIssue(
                            entity: entity.name, property: attribute.name,
                            message: "its derivation goes through \(missing), which has no inverse: a change on the "
                                + "other side could not recompute it; give the relationship an inverse"))
                    continue
                }
                for last in steps.indices {
                    let dependent = EntityDescription.DerivationDependent(
                        read: last + 1 < steps.count ? steps[last + 1].name : read,
                        back: steps[...last].reversed().map { $0.inverse! })
                    for kind in entities where kind.isKind(of: steps[last].destinationEntity) {
                        if !kind.derivationDependents.contains(dependent) {
                            kind.derivationDependents.append(dependent)
                        }
                    }
                }
            }
        }
        checkDerivationCycles(reads, &issues)
    }

    /// Derived values that read one another in a loop have no value: each such loop is an issue.
    private static func checkDerivationCycles(
        _ reads: [ObjectIdentifier: AttributeDescription], _ issues: inout [ModelIssue]
    ) {
        var reported = Set<ObjectIdentifier>()
        for start in reads.values {
            var chain: [AttributeDescription] = [start]
            var cursor = reads[ObjectIdentifier(start)]
            while let next = cursor, chain.count <= reads.count {
                if next === start {
                    guard chain.allSatisfy({ !reported.contains(ObjectIdentifier($0)) }) else { break }
                    for link in chain { reported.insert(ObjectIdentifier(link)) }
                    issues.append(
                        ModelIssue(
                            entity: start.entity.name, property: start.name,
                            message: "derived values read one another in a loop: "
                                + (chain + [start]).map(\.description).joined(separator: " → ")))
                    break
                }
                chain.append(next)
                cursor = reads[ObjectIdentifier(next)]
            }
        }
    }
}

extension EntityDescription {
    /// The entity a key path of relationships ends at (`nil` when it ends at an attribute).
    fileprivate func endEntity(of path: [String]) -> EntityDescription? {
        var current: EntityDescription? = self
        for key in path { current = current?.relationship(named: key)?.destinationEntity }
        return current
    }
}
