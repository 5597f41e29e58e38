import Foundation

/// A set of entities: the schema of an object graph.
///
/// Building the model checks it and resolves it: parents, inherited properties, relationship
/// destinations and inverses; each mistake (unknown destination, an inverse that does not point back,
/// a duplicate name, a bad rule) is reported as a `ModelIssue` naming the entity and property.
///
/// ```swift
/// let model = try ManagedObjectModel(entities: [department, employee])
/// model.versionHash   // stable across runs; changes when the stored shape changes
/// ```
public final class ManagedObjectModel: Sendable, CustomStringConvertible {
    public let entities: [EntityDescription]
    private let entitiesByName: [String: EntityDescription]
    /// Named subsets of entities; a store added with a configuration name holds only those entities.
    public let configurations: [String: [String]]
    /// A SHA-256 over what decides how objects are stored (names, types, optionality, relationships,
    /// parents, constraints, indexes), not validation rules or defaults. Stores record it.
    public let versionHash: String
    /// Per-entity hashes, so an incompatible store can be told which entities differ.
    public let entityVersionHashes: [String: String]
    /// Whether any entity has a derived attribute (saves compute them).
    let hasDerivedAttributes: Bool
    /// How many derived attributes the model declares (the longest chain of derivations reading
    /// derived values is shorter).
    let derivedAttributeCount: Int

    /// - Throws: `ModelValidationError` listing every mistake.
    public init(entities: [EntityDescription], configurations: [String: [String]] = [:]) throws {
        var issues: [ModelIssue] = []
        var byName: [String: EntityDescription] = [:]
        for entity in entities {
            if !Self.isValidName(entity.name) {
                issues.append(
                    ModelIssue(
                        entity: entity.name,
                        message: "an entity name must start with a letter and hold only letters, digits and _"))
            }
            if byName[entity.name] != nil {
                issues.append(ModelIssue(entity: entity.name, message: "the entity is declared twice"))
            } else {
                byName[entity.name] = entity
            }
        }
        self.entities = entities
        self.entitiesByName = byName
        self.configurations = configurations
        for (index, entity) in entities.enumerated() { entity.index = index }

        Self.resolveParents(entities, byName, &issues)
        for entity in Self.parentsFirst(entities) { Self.resolveProperties(of: entity, &issues) }
        for entity in entities { Self.resolveRelationships(of: entity, byName, &issues) }
        for entity in entities { Self.checkRules(of: entity, &issues) }
        for entity in entities { Self.resolveComputedProperties(of: entity, byName, &issues) }
        Self.resolveDerivationDependents(entities, &issues)
        for (name, members) in configurations {
            for member in members where byName[member] == nil {
                issues.append(
                    ModelIssue(
                        entity: member,
                        message: "configuration \(name.debugDescription) names an entity the model does not have"))
            }
        }
        if !issues.isEmpty { throw ModelValidationError(issues: issues) }
        derivedAttributeCount = entities.reduce(0) { $0 + $1.declaredAttributes.filter(\.isDerived).count }
        hasDerivedAttributes = derivedAttributeCount > 0

        var hashes: [String: String] = [:]
        for entity in entities { hashes[entity.name] = SHA256.hex(of: Self.hashText(of: entity)) }
        self.entityVersionHashes = hashes
        self.versionHash = SHA256.hex(
            of: hashes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "\n"))
    }

    public subscript(entityName: String) -> EntityDescription? { entitiesByName[entityName] }

    public func entity(named name: String) -> EntityDescription? { entitiesByName[name] }

    /// Entities a store added with `configurationName` holds (all entities for `nil`).
    public func entities(forConfiguration configurationName: String?) -> [EntityDescription] {
        guard let configurationName, let names = configurations[configurationName] else { return entities }
        return names.compactMap { entitiesByName[$0] }
    }

    /// Whether a store whose metadata records `metadata` can be opened with this model.
    public func isCompatible(withStoreMetadata metadata: StoreMetadata) -> Bool {
        metadata.modelVersionHash == nil || metadata.modelVersionHash == versionHash
    }

    /// A sentence naming the entities that differ between this model and a store's metadata.
    public func differences(fromStoreMetadata metadata: StoreMetadata) -> String {
        let stored = metadata.entityVersionHashes
        let added = entityVersionHashes.keys.filter { stored[$0] == nil }.sorted()
        let removed = stored.keys.filter { entityVersionHashes[$0] == nil }.sorted()
        let changed = entityVersionHashes.keys.filter { stored[$0] != nil && stored[$0] != entityVersionHashes[$0] }
            .sorted()
        var parts: [String] = []
        if !added.isEmpty { parts.append("entities only in the model: \(added.joined(separator: ", "))") }
        if !removed.isEmpty { parts.append("entities only in the store: \(removed.joined(separator: ", "))") }
        if !changed.isEmpty {
            parts.append("entities whose attributes or relationships differ: \(changed.joined(separator: ", "))")
        }
        if parts.isEmpty {
            parts.append(
                "model hash \(versionHash.prefix(12)) differs from the store's "
                    + "\(metadata.modelVersionHash?.prefix(12) ?? "none")"
            )
        }
        return parts.joined(separator: "; ")
    }

    public var description: String { "ManagedObjectModel(\(entities.map(\.name).joined(separator: ", ")))" }

    // MARK: - Resolution

    static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, CharacterSet.letters.contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || $0 == "_" }
    }

    private static func resolveParents(
        _ entities: [EntityDescription], _ byName: [String: EntityDescription], _ issues: inout [ModelIssue]
    ) {
        for entity in entities {
            guard let parentName = entity.parentName else { continue }
            guard let parent = byName[parentName] else {
                issues.append(
                    ModelIssue(
                        entity: entity.name, message: "parent entity \(parentName.debugDescription) is not in the model"
                    ))
                continue
            }
            var seen: Set<String> = [entity.name]
            var cursor: EntityDescription? = parent
            var cyclic = false
            while let current = cursor {
                if !seen.insert(current.name).inserted {
                    cyclic = true
                    break
                }
                cursor = current.parentName.flatMap { byName[$0] }
            }
            if cyclic {
                issues.append(ModelIssue(entity: entity.name, message: "the parent chain loops back to \(entity.name)"))
                continue
            }
            entity.superentity = parent
            parent.subentities.append(entity)
        }
        for entity in entities {
            var cursor: EntityDescription? = entity
            var guardCount = 0
            while let current = cursor, guardCount <= entities.count {
                current.kindIndexes.insert(entity.index)
                cursor = current.superentity
                guardCount += 1
            }
        }
    }

    private static func parentsFirst(_ entities: [EntityDescription]) -> [EntityDescription] {
        func depth(_ entity: EntityDescription) -> Int {
            var d = 0
            var cursor = entity.superentity
            while let current = cursor, d <= entities.count {
                d += 1
                cursor = current.superentity
            }
            return d
        }
        return entities.sorted { depth($0) < depth($1) }
    }

    private static func resolveProperties(of entity: EntityDescription, _ issues: inout [ModelIssue]) {
        var attributes = entity.superentity?.attributes ?? []
        var relationships = entity.superentity?.relationships ?? []
        var names = Set(attributes.map(\.name) + relationships.map(\.name))
        /// Appends the declared properties whose names are free, numbering them after the inherited.
        func number<P: PropertyDescription>(_ declared: [P], into list: inout [P]) {
            for property in declared {
                guard checkPropertyName(property.name, in: entity, &names, &issues) else { continue }
                property.index = list.count
                property.entity = entity
                list.append(property)
            }
        }
        number(entity.declaredAttributes, into: &attributes)
        number(entity.declaredRelationships, into: &relationships)
        entity.attributes = attributes
        entity.defaultAttributeValues = attributes.map(\.defaultValue)
        entity.transientAttributeIndexes = attributes.filter(\.isTransient).map(\.index)
        var fetched = entity.superentity?.fetchedProperties ?? []
        number(entity.declaredFetchedProperties, into: &fetched)
        entity.fetchedProperties = fetched
        entity.derivedAttributeIndexes = attributes.filter(\.isDerived).map(\.index)
        entity.relationships = relationships
        entity.transientRelationshipIndexes = relationships.filter(\.isTransient).map(\.index)
        entity.attributeIndexByName = Dictionary(uniqueKeysWithValues: attributes.map { ($0.name, $0.index) })
        entity.relationshipIndexByName = Dictionary(uniqueKeysWithValues: relationships.map { ($0.name, $0.index) })
        let inherited = entity.superentity?.uniquenessKeys ?? []
        let declared = entity.uniquenessConstraints.compactMap { names -> EntityDescription.UniquenessKey? in
            let properties = names.compactMap { name -> PropertyDescription? in
                if let index = entity.attributeIndexByName[name] { return attributes[index] }
                if let index = entity.relationshipIndexByName[name], !relationships[index].isToMany {
                    return relationships[index]
                }
                return nil
            }
            return properties.count == names.count && !properties.isEmpty
                ? .init(entity: entity, properties: properties, names: names) : nil
        }
        entity.uniquenessKeys = inherited + declared
        var cls: ManagedObject.Type = ManagedObject.self
        var cursor: EntityDescription? = entity
        while let current = cursor {
            if let declared = current.managedObjectClass {
                cls = declared
                break
            }
            cursor = current.superentity
        }
        entity.resolvedClass = cls
    }

    private static func checkPropertyName(
        _ name: String, in entity: EntityDescription, _ names: inout Set<String>, _ issues: inout [ModelIssue]
    ) -> Bool {
        if !isValidName(name) {
            issues.append(
                ModelIssue(
                    entity: entity.name, property: name,
                    message: "a property name must start with a letter and hold only letters, digits and _"))
            return false
        }
        if !names.insert(name).inserted {
            issues.append(
                ModelIssue(
                    entity: entity.name, property: name,
                    message: "the name is used by another property of the entity or of its parents"))
            return false
        }
        return true
    }

    private static func resolveRelationships(
        of entity: EntityDescription, _ byName: [String: EntityDescription], _ issues: inout [ModelIssue]
    ) {
        for relationship in entity.declaredRelationships where relationship.index >= 0 {
            guard let destination = byName[relationship.destinationEntityName] else {
                issues.append(
                    ModelIssue(
                        entity: entity.name, property: relationship.name,
                        message:
                            "destination entity \(relationship.destinationEntityName.debugDescription) is not in the "
                            + "model"
                    ))
                continue
            }
            relationship.destinationEntity = destination
            guard let inverseName = relationship.inverseName else { continue }
            guard let inverse = destination.relationship(named: inverseName) else {
                issues.append(
                    ModelIssue(
                        entity: entity.name, property: relationship.name,
                        message: "inverse \(inverseName.debugDescription) is not a relationship of \(destination.name)")
                )
                continue
            }
            var lineage: [String] = []
            var cursor: EntityDescription? = entity
            while let current = cursor, lineage.count <= byName.count {
                lineage.append(current.name)
                cursor = current.superentity
            }
            guard inverse.inverseName == relationship.name, lineage.contains(inverse.destinationEntityName) else {
                issues.append(
                    ModelIssue(
                        entity: entity.name, property: relationship.name,
                        message:
                            "inverse \(destination.name).\(inverseName) does not point back (its inverse is "
                            + "\(inverse.inverseName.map { "\($0.debugDescription)" } ?? "not set") and its "
                            + "destination is \(inverse.destinationEntityName))"
                    ))
                continue
            }
            relationship.inverse = inverse
        }
    }

    /// Checks what an entity declares: its properties' rules, its uniqueness constraints, its indexes.
    private static func checkRules(of entity: EntityDescription, _ issues: inout [ModelIssue]) {
        checkAttributeRules(of: entity, &issues)
        checkRelationshipRules(of: entity, &issues)
        checkUniquenessConstraints(of: entity, &issues)
        checkIndexes(of: entity, &issues)
        for name in entity.columnOrder
        where entity.attribute(named: name).map(\.isTransient) ?? (entity.relationship(named: name)?.isToMany ?? true) {
            issues.append(
                ModelIssue(
                    entity: entity.name, property: name,
                    message: "columnOrder names no stored attribute or to-one relationship of the entity"))
        }
    }

    /// Each attribute's default value, bounds, length rules and regular expression fit its type.
    private static func checkAttributeRules(of entity: EntityDescription, _ issues: inout [ModelIssue]) {
        for attribute in entity.declaredAttributes where attribute.index >= 0 {
            func issue(_ message: String) {
                issues.append(ModelIssue(entity: entity.name, property: attribute.name, message: message))
            }
            if !attribute.defaultValue.isStorable(as: attribute.type)
                || !attribute.defaultValue.fitsRange(of: attribute.type)
            {
                issue("default value \(attribute.defaultValue) is not a valid \(attribute.type)")
            }
            for (label, bound) in [("minimum", attribute.minValue), ("maximum", attribute.maxValue)] {
                guard let bound else { continue }
                if !attribute.type.isOrdered {
                    issue("a \(label) value applies only to numbers and dates, not \(attribute.type)")
                } else if bound.isNull || !bound.isStorable(as: attribute.type) && bound.numeric == nil {
                    issue("\(label) value \(bound) is not a \(attribute.type)")
                }
            }
            if let lo = attribute.minValue, let hi = attribute.maxValue, lo.compare(to: hi) == .orderedDescending {
                issue("minimum value \(lo) is greater than maximum value \(hi)")
            }
            if attribute.minLength != nil || attribute.maxLength != nil, attribute.type != .string,
                attribute.type != .binary
            {
                issue("length rules apply only to string and binary attributes, not \(attribute.type)")
            }
            if let lo = attribute.minLength, let hi = attribute.maxLength, lo > hi {
                issue("minimum length \(lo) is greater than maximum length \(hi)")
            }
            if (attribute.minLength ?? 0) < 0 || (attribute.maxLength ?? 0) < 0 { issue("a length cannot be negative") }
            if attribute.regularExpression != nil, attribute.type != .string {
                issue("a regular expression applies only to string attributes")
            }
            if let error = attribute.regexError { issue(error) }
        }
    }

    /// Counts and ordering only on to-many relationships; join tables only on many-to-many ones, and
    /// the same one, with two columns, for both sides.
    private static func checkRelationshipRules(of entity: EntityDescription, _ issues: inout [ModelIssue]) {
        for relationship in entity.declaredRelationships where relationship.index >= 0 {
            func issue(_ message: String) {
                issues.append(ModelIssue(entity: entity.name, property: relationship.name, message: message))
            }
            if !relationship.isToMany {
                if relationship.minCount != nil || relationship.maxCount != nil {
                    issue("min/max count applies only to to-many relationships")
                }
                if relationship.isOrdered { issue("only a to-many relationship can be ordered") }
            }
            if let lo = relationship.minCount, let hi = relationship.maxCount, lo > hi {
                issue("minimum count \(lo) is greater than maximum count \(hi)")
            }
            if relationship.isToMany, !relationship.usesJoinTable, !relationship.isTransient {
                if relationship.joinTable != nil || relationship.columnName != nil {
                    issue(
                        "a join table and its column apply to many-to-many relationships (this one is stored by "
                            + "the foreign key of its inverse, \(relationship.inverseName ?? ""))")
                }
            } else if !relationship.isToMany, relationship.joinTable != nil {
                issue("a join table applies to many-to-many relationships; a to-one is stored in a column")
            }
            if let inverse = relationship.inverse, relationship.usesJoinTable, inverse !== relationship {
                if let mine = relationship.joinTable, let theirs = inverse.joinTable, mine != theirs {
                    issue("its join table \(mine.debugDescription) is not its inverse's (\(theirs.debugDescription))")
                }
                if let mine = relationship.columnName, let theirs = inverse.columnName,
                    mine.lowercased() == theirs.lowercased()
                {
                    issue("its join-table column \(mine.debugDescription) is also its inverse's: the two need two")
                }
            }
        }
    }

    /// Each uniqueness constraint names stored attributes or to-one relationships of the entity.
    private static func checkUniquenessConstraints(of entity: EntityDescription, _ issues: inout [ModelIssue]) {
        let attributeNames = Set(entity.attributes.map(\.name))
        for constraint in entity.uniquenessConstraints {
            if constraint.isEmpty {
                issues.append(ModelIssue(entity: entity.name, message: "a uniqueness constraint names no attribute"))
            }
            for name in constraint where !attributeNames.contains(name) {
                if let relationship = entity.relationship(named: name) {
                    if relationship.isToMany {
                        issues.append(
                            ModelIssue(
                                entity: entity.name, property: name,
                                message:
                                    "uniqueness constraint names a to-many relationship; only attributes and to-one "
                                    + "relationships can be part of a key"
                            ))
                    }
                    continue
                }
                issues.append(
                    ModelIssue(
                        entity: entity.name, property: name,
                        message: "uniqueness constraint names an attribute the entity does not have"))
            }
            for name in constraint where entity.attribute(named: name)?.isTransient == true {
                issues.append(
                    ModelIssue(
                        entity: entity.name, property: name,
                        message: "uniqueness constraint names a transient attribute, which is never stored"))
            }
        }
    }

    /// Each index names properties of the entity.
    private static func checkIndexes(of entity: EntityDescription, _ issues: inout [ModelIssue]) {
        let propertyNames = Set(entity.propertyNames)
        for index in entity.indexes {
            for name in index.propertyNames where !propertyNames.contains(name) {
                issues.append(
                    ModelIssue(
                        entity: entity.name, property: name,
                        message: "index \(index.name.debugDescription) names a property the entity does not have"))
            }
        }
    }

    private static func hashText(of entity: EntityDescription) -> String {
        var lines = ["entity \(entity.name) parent=\(entity.parentName ?? "-") abstract=\(entity.isAbstract)"]
        if let table = entity.tableName { lines.append("table \(table)") }
        lines += entity.attributes.filter { !$0.isTransient }.map(\.hashText).sorted()
        lines += entity.relationships.filter { !$0.isTransient }.map(\.hashText).sorted()
        lines += entity.uniquenessConstraints.map { "unique " + $0.joined(separator: ",") }.sorted()
        lines += entity.indexes.map { "index \($0.name) " + $0.propertyNames.joined(separator: ",") }.sorted()
        return lines.joined(separator: "\n")
    }
}
