import Foundation
import ModelFiles
import ObjectGraph
import Readers
import Yams

extension PipelineReader {
    // MARK: Mappings

    mutating func readMapping(
        _ node: Node, entries: [(key: String, keyNode: Node, value: Node)], model: ManagedObjectModel, source: String
    ) -> PipelineConfig.Mapping? {
        func entry(_ key: String) -> Node? { entries.first { $0.key == key }?.value }
        guard let entityNode = entry("entity"), let entityName = text(entityNode, "entity", source: source) else {
            if entry("entity") == nil { fail(node, "the mapping needs an `entity`", entity: source) }
            return nil
        }
        guard let entity = model.entity(named: entityName) else {
            fail(
                entityNode,
                "the model has no entity \(entityName.debugDescription) (it has: "
                    + "\(model.entities.map(\.name).sorted().joined(separator: ", ")))",
                entity: source)
            return nil
        }
        guard !entity.isAbstract else {
            fail(entityNode, "\(entityName) is abstract: map records onto one of its sub-entities", entity: source)
            return nil
        }
        var mapping = PipelineConfig.Mapping(entity: entityName)
        if let findNode = entry("find") {
            return readFound(
                findNode, at: node, entries: entries, into: mapping, entity: entity, model: model, source: source)
        }
        if let keyNode = entry("key") { mapping.key = texts(keyNode, "key", source: source) ?? [] }
        if let fieldsNode = entry("fields") { readFields(fieldsNode, into: &mapping, entity: entity, source: source) }
        if let relationshipsNode = entry("relationships") {
            readRelationships(relationshipsNode, into: &mapping, entity: entity, model: model, source: source)
        }
        checkKey(of: &mapping, keyNode: entry("key"), entity: entity, source: source)
        if let childrenNode = entry("children") {
            guard let list = childrenNode.sequence else {
                fail(childrenNode, "children must be a list", entity: source)
                return mapping
            }
            for item in list {
                if let child = readChild(item, parent: entity, model: model, source: source) {
                    mapping.children.append(child)
                }
            }
        }
        if let whereNode = entry("where"), let format = text(whereNode, "where", source: source) {
            do {
                let predicate = try FetchPredicate(format: format)
                _ = try predicate.compiled(for: entity)
                mapping.filter = predicate
            } catch {
                fail(whereNode, "where: \(error)", entity: source)
            }
        }
        return mapping
    }

    /// A source of links (`find:`): the owner found by its key, its to-many relationships added to.
    private mutating func readFound(
        _ findNode: Node, at node: Node, entries: [(key: String, keyNode: Node, value: Node)],
        into mapping: PipelineConfig.Mapping, entity: EntityDescription, model: ManagedObjectModel, source: String
    ) -> PipelineConfig.Mapping? {
        func entry(_ key: String) -> Node? { entries.first { $0.key == key }?.value }
        var mapping = mapping
        let key = readKeyParts(findNode, of: entity, what: "find", label: "find", source: source, property: nil)
        if key.isEmpty, findNode.mapping?.isEmpty ?? true {
            fail(findNode, "find needs `{ <key attribute of \(entity.name)>: <column or path> }`", entity: source)
        }
        mapping.links = .found(key)
        for other in ["key", "fields", "children", "where"] {
            if let node = entry(other) {
                fail(
                    node,
                    "a source of links (`find`) makes no objects: it takes `relationships` (the to-many "
                        + "relationships it adds to), not `\(other)`",
                    entity: source)
            }
        }
        return readLinks(
            entry("relationships"), into: mapping, at: node, entity: entity, model: model, source: source)
    }

    /// `fields:`: each attribute of the entity and where its value comes from.
    private mutating func readFields(
        _ fieldsNode: Node, into mapping: inout PipelineConfig.Mapping, entity: EntityDescription, source: String
    ) {
        for (attribute, attributeNode, spec) in pairs(fieldsNode, allowed: nil, what: "fields", entity: source) {
            guard let description = entity.attribute(named: attribute) else {
                fail(
                    attributeNode, "\(entity.name) has no attribute \(attribute.debugDescription)", entity: source,
                    property: attribute)
                continue
            }
            if description.isTransient {
                fail(
                    attributeNode, "\(attribute) is transient (never stored): it cannot be imported",
                    entity: source, property: attribute)
            }
            guard let field = readField(attribute, description.type, spec, source: source) else { continue }
            if let derivation = description.derivationExpression {
                fail(
                    attributeNode,
                    "field \(field.from.debugDescription) cannot go into \(entity.name).\(attribute): it is derived "
                        + "(\(derivation)), computed at every save",
                    entity: source, property: attribute)
                continue
            }
            mapping.fields.append(field)
        }
    }

    /// `relationships:`: each to-one of the entity and the lookup that finds its destination.
    private mutating func readRelationships(
        _ relationshipsNode: Node, into mapping: inout PipelineConfig.Mapping, entity: EntityDescription,
        model: ManagedObjectModel, source: String
    ) {
        for (name, nameNode, spec) in pairs(relationshipsNode, allowed: nil, what: "relationships", entity: source) {
            if mapping.fields.contains(where: { $0.attribute == name }) {
                fail(nameNode, "\(name) is mapped twice", entity: source, property: name)
            }
            if let lookup = readLookup(name, nameNode, spec, entity: entity, model: model, source: source) {
                mapping.relationships.append(lookup)
            }
        }
    }

    /// A key given as `{ <attribute of entity>: <column or path> }` (`find:`, a lookup's `key:`); the
    /// attribute may be named as its stored column is (`Invoice No` for `invoiceNo` with `column:
    /// Invoice No`). An attribute the entity lacks is reported (on `property`, else on the attribute).
    mutating func readKeyParts(
        _ node: Node, of entity: EntityDescription, what: String, label: String, source: String, property: String?
    ) -> [(attribute: String, from: String)] {
        var key: [(attribute: String, from: String)] = []
        for (attribute, attributeNode, from) in pairs(
            node, allowed: nil, what: what, entity: source, property: property)
        {
            guard let found = entity.attribute(namedOrStoredAs: attribute) else {
                let near = NearestName.nearest(to: attribute, among: entity.attributes.map(\.name))
                fail(
                    attributeNode,
                    "\(entity.name) has no attribute \(attribute.debugDescription)"
                        + (near.map { " (did you mean \($0.debugDescription)?)" } ?? ""), entity: source,
                    property: property ?? attribute)
                continue
            }
            if let column = text(from, "\(label) \(attribute)", source: source) { key.append((found.name, column)) }
        }
        return key
    }
}
