import Foundation
import ModelFiles
import ObjectGraph
import Readers
import Yams

extension PipelineReader {
    // MARK: Relationships: lookups, links and nested children

    /// The to-many relationships a link mapping (`find`, or a child naming no entity) adds to.
    mutating func readLinks(
        _ relationshipsNode: Node?, into mapping: PipelineConfig.Mapping, at node: Node, entity: EntityDescription,
        model: ManagedObjectModel, source: String
    ) -> PipelineConfig.Mapping? {
        var mapping = mapping
        guard let relationshipsNode else {
            fail(
                node,
                "links need `relationships: { <to-many of \(entity.name)>: { key: { <attribute of its destination>: "
                    + "<column or path> } } }`",
                entity: source)
            return nil
        }
        for (name, nameNode, spec) in pairs(relationshipsNode, allowed: nil, what: "relationships", entity: source) {
            guard let relationship = entity.relationship(named: name) else {
                fail(
                    nameNode, "\(entity.name) has no relationship \(name.debugDescription)", entity: source,
                    property: name)
                continue
            }
            guard relationship.isToMany else {
                fail(
                    nameNode,
                    "\(name) is to-one: links add to to-many relationships (set a to-one in the source that makes "
                        + "the \(entity.name))",
                    entity: source, property: name)
                continue
            }
            if let lookup = readLookup(
                name, nameNode, spec, entity: entity, model: model, source: source, addsToMany: true)
            {
                mapping.relationships.append(lookup)
            }
        }
        return mapping.relationships.isEmpty ? nil : mapping
    }

    mutating func readLookup(
        _ name: String, _ nameNode: Node, _ spec: Node, entity: EntityDescription, model: ManagedObjectModel,
        source: String, addsToMany: Bool = false
    ) -> PipelineConfig.Lookup? {
        guard let relationship = entity.relationship(named: name) else {
            fail(
                nameNode, "\(entity.name) has no relationship \(name.debugDescription)", entity: source, property: name)
            return nil
        }
        guard !relationship.isToMany || addsToMany else {
            fail(
                nameNode,
                "\(name) is to-many: set it from the other side (the to-one of its destination), with children, "
                    + "or from a source of links (`find`)",
                entity: source, property: name)
            return nil
        }
        let entries = pairs(
            spec, allowed: ["entity", "key", "missing"], what: "relationship \(name)", entity: source, property: name)
        func entry(_ key: String) -> Node? { entries.first { $0.key == key }?.value }
        // The model resolved every destination.
        guard var destination = relationship.destinationEntity else { return nil }
        if let entityNode = entry("entity"), let entityName = text(entityNode, "entity", source: source) {
            guard let named = model.entity(named: entityName), named.isKind(of: destination) else {
                fail(
                    entityNode,
                    "\(entityName) is not \(relationship.destinationEntityName) or one of its sub-entities (the "
                        + "destination of \(entity.name).\(name))",
                    entity: source, property: name)
                return nil
            }
            destination = named
        }
        guard let keyNode = entry("key") else {
            fail(
                spec, "relationship \(name) needs `key: { <attribute of \(destination.name)>: <column or path> }`",
                entity: source, property: name)
            return nil
        }
        let key = readKeyParts(
            keyNode, of: destination, what: "the key of \(name)", label: "key", source: source, property: name)
        var createsMissing = false
        if let missing = entry("missing") {
            switch text(missing, "missing", source: source) {
            case "create"?: createsMissing = true
            case "reject"?: createsMissing = false
            case let other?:
                fail(
                    missing,
                    "missing must be create (find-or-create) or reject (must exist), not \(other.debugDescription)",
                    entity: source, property: name)
            case nil: break
            }
        }
        guard !key.isEmpty else { return nil }
        if relationship.isTransient {
            fail(
                nameNode,
                "\(key.map { "field \($0.from.debugDescription)" }.joined(separator: ", ")) cannot set "
                    + "\(entity.name).\(name): it is a transient relationship (kept in memory only, never stored)",
                entity: source, property: name)
            return nil
        }
        return PipelineConfig.Lookup(
            relationship: name, entity: destination.name, key: key, createsMissing: createsMissing)
    }

    mutating func readChild(
        _ node: Node, parent: EntityDescription, model: ManagedObjectModel, source: String
    ) -> PipelineConfig.Child? {
        let allowed: Set<String> = [
            "record", "entity", "parent", "key", "fields", "relationships", "children", "where", "identity",
        ]
        let entries = pairs(node, allowed: allowed, what: "a child", entity: source)
        func entry(_ key: String) -> Node? { entries.first { $0.key == key }?.value }
        guard let recordNode = entry("record"), let record = text(recordNode, "record", source: source) else {
            if entry("record") == nil {
                fail(node, "a child needs `record` (its element, relative to the parent's)", entity: source)
            }
            return nil
        }
        if entry("entity") == nil, entry("parent") == nil {
            // A link: adds the destinations its keys find to the parent object's to-many relationships.
            for other in ["key", "fields", "children", "where", "identity"] {
                if let node = entry(other) {
                    fail(
                        node,
                        "a child naming no entity is a link (it adds to \(parent.name)'s to-many relationships): it "
                            + "takes `relationships` only, not `\(other)`",
                        entity: "\(source) > \(record)")
                }
            }
            var mapping = PipelineConfig.Mapping(entity: parent.name)
            mapping.links = .parent
            guard
                let links = readLinks(
                    entry("relationships"), into: mapping, at: node, entity: parent, model: model,
                    source: "\(source) > \(record)")
            else { return nil }
            return PipelineConfig.Child(record: record, parent: "", mapping: links)
        }
        guard let mapping = readMapping(node, entries: entries, model: model, source: "\(source) > \(record)") else {
            return nil
        }
        guard let parentNode = entry("parent"), let parentName = text(parentNode, "parent", source: source) else {
            fail(
                node, "a child needs `parent` (its to-one relationship to the \(parent.name) it is nested in)",
                entity: source)
            return nil
        }
        let child = model.entity(named: mapping.entity)!
        guard let relationship = child.relationship(named: parentName), !relationship.isToMany,
            let destination = relationship.destinationEntity, parent.isKind(of: destination)
        else {
            fail(
                parentNode,
                "\(mapping.entity) has no to-one relationship \(parentName.debugDescription) to \(parent.name)",
                entity: source)
            return nil
        }
        if mapping.relationships.contains(where: { $0.relationship == parentName })
            || mapping.fields.contains(where: { $0.attribute == parentName })
        {
            fail(parentNode, "\(parentName) is mapped twice (it links the child to its parent)", entity: source)
        }
        var identity = PipelineConfig.KeylessIdentity.place
        if let node = entry("identity"), let name = text(node, "identity", source: source) {
            if let known = PipelineConfig.KeylessIdentity(rawValue: name) {
                identity = known
            } else {
                fail(node, "identity must be place or content, not \(name.debugDescription)", entity: source)
            }
        }
        return PipelineConfig.Child(record: record, parent: parentName, mapping: mapping, identity: identity)
    }
}
