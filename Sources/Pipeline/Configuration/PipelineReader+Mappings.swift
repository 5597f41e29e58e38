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
            let key = readKeyParts(findNode, of: entity, what: "find", label: "find", source: source, property: nil)
            if key.isEmpty, findNode.mapping?.isEmpty ?? true {
                fail(findNode, "find needs `{ <key attribute of \(entityName)>: <column or path> }`", entity: source)
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
        if let keyNode = entry("key") {
            mapping.key = texts(keyNode, "key", source: source) ?? []
            // Attributes, or to-one relationships (a compound key of a link table with payload).
            for name in mapping.key
            where entity.attribute(named: name) == nil && entity.relationship(named: name).map({ !$0.isToMany }) != true
            {
                fail(
                    keyNode,
                    "key \(name.debugDescription) is not an attribute or to-one relationship of \(entityName)",
                    entity: source)
            }
            // Upserts happen through the model's uniqueness constraints: a key without one would
            // silently insert every record again on a re-run.
            let constraints = entity.constraintsWithInherited.map(\.names)
            if !mapping.key.isEmpty,
                mapping.key.allSatisfy({ entity.attribute(named: $0) != nil || entity.relationship(named: $0) != nil }),
                !constraints.contains(where: { Set($0) == Set(mapping.key) })
            {
                fail(
                    keyNode,
                    "key [\(mapping.key.joined(separator: ", "))] is not a uniqueness constraint of \(entityName) in "
                        + "the model (add `unique: [[\(mapping.key.joined(separator: ", "))]]` to it)",
                    entity: source)
            }
        }
        if let fieldsNode = entry("fields") {
            for (attribute, attributeNode, spec) in pairs(fieldsNode, allowed: nil, what: "fields", entity: source) {
                guard let description = entity.attribute(named: attribute) else {
                    fail(
                        attributeNode, "\(entityName) has no attribute \(attribute.debugDescription)", entity: source,
                        property: attribute)
                    continue
                }
                if description.isTransient {
                    fail(
                        attributeNode, "\(attribute) is transient (never stored): it cannot be imported",
                        entity: source, property: attribute)
                }
                if let field = readField(attribute, description.type, spec, source: source) {
                    mapping.fields.append(field)
                }
            }
        }
        if let relationshipsNode = entry("relationships") {
            for (name, nameNode, spec) in pairs(relationshipsNode, allowed: nil, what: "relationships", entity: source)
            {
                if mapping.fields.contains(where: { $0.attribute == name }) {
                    fail(nameNode, "\(name) is mapped twice", entity: source, property: name)
                }
                if let lookup = readLookup(name, nameNode, spec, entity: entity, model: model, source: source) {
                    mapping.relationships.append(lookup)
                }
            }
        }
        // The entity's other uniqueness constraints: collisions on them are rejects, never merges.
        let constraints = entity.constraintsWithInherited.map(\.names)
        if entry("key") == nil {
            // No key given: the first constraint the records fill is the key objects are found by.
            mapping.key =
                constraints.first { constraint in
                    constraint.allSatisfy { name in
                        mapping.fields.contains { $0.attribute == name }
                            || mapping.relationships.contains { $0.relationship == name }
                    }
                } ?? []
            mapping.keyIsImplicit = !mapping.key.isEmpty
        }
        mapping.otherUniqueKeys = constraints.filter { Set($0) != Set(mapping.key) }
        for name in mapping.key
        where !mapping.fields.contains(where: { $0.attribute == name })
            && !mapping.relationships.contains(where: { $0.relationship == name })
        {
            fail(
                entry("key"),
                "key \(name.debugDescription) is not mapped from the records (add it to `fields`, or a relationship "
                    + "to `relationships`)",
                entity: source)
        }
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

    mutating func readField(
        _ attribute: String, _ type: AttributeType, _ spec: Node, source: String
    ) -> PipelineConfig.Field? {
        if spec.scalar != nil {
            return text(spec, "field \(attribute)", source: source).map {
                PipelineConfig.Field(attribute: attribute, from: $0)
            }
        }
        let allowed: Set<String> = [
            "column", "path", "transform", "date", "binary", "default", "null", "true", "false",
        ]
        let entries = pairs(spec, allowed: allowed, what: "field \(attribute)", entity: source, property: attribute)
        let sources = entries.filter { $0.key == "column" || $0.key == "path" }
        guard sources.count == 1, let from = text(sources[0].value, sources[0].key, source: source) else {
            if sources.count != 1 {
                fail(
                    spec, "field \(attribute) needs exactly one of `column` or `path`", entity: source,
                    property: attribute)
            }
            return nil
        }
        var field = PipelineConfig.Field(attribute: attribute, from: from)
        for (key, _, value) in entries {
            switch key {
            case "transform":
                let items = value.sequence ?? [value]
                for item in items {
                    if let transform = readTransform(item, source: source, attribute: attribute) {
                        field.transforms.append(transform)
                    }
                }
            case "date":
                guard type == .date else {
                    fail(
                        value, "`date` applies to date attributes; \(attribute) is \(type)", entity: source,
                        property: attribute)
                    continue
                }
                switch text(value, "date", source: source) {
                case "iso8601"?: field.date = .iso8601
                case "unix"?, "unix-seconds"?: field.date = .unixSeconds
                case let pattern?:
                    if let mistake = Self.datePatternMistake(pattern) {
                        fail(value, mistake, entity: source, property: attribute)
                    } else {
                        field.date = .pattern(pattern)
                    }
                case nil: break
                }
            case "binary":
                guard type == .binary else {
                    fail(
                        value, "`binary` applies to binary attributes; \(attribute) is \(type)", entity: source,
                        property: attribute)
                    continue
                }
                guard let name = text(value, "binary", source: source) else { continue }
                if let encoding = PipelineConfig.BinaryEncoding(rawValue: name) {
                    field.binary = encoding
                } else {
                    fail(value, "binary must be hex or base64", entity: source, property: attribute)
                }
            case "default":
                guard let raw = text(value, "default", source: source, allowEmpty: true) else { continue }
                if let parsed = AttributeValueParser.parse(raw, as: type) {
                    field.defaultValue = parsed
                } else {
                    fail(
                        value,
                        "default \(raw.debugDescription) is not a valid "
                            + "\(type)\(AttributeValueParser.formatHint(for: type))",
                        entity: source, property: attribute)
                }
            case "null": field.nulls = texts(value, "null", source: source) ?? []
            case "true", "false":
                guard type == .boolean else {
                    fail(
                        value, "`\(key)` applies to boolean attributes; \(attribute) is \(type)", entity: source,
                        property: attribute)
                    continue
                }
                let words = texts(value, key, source: source) ?? []
                if key == "true" { field.trueWords = words } else { field.falseWords = words }
            default: break
            }
        }
        if !Set(field.trueWords.map { $0.lowercased() }).isDisjoint(with: field.falseWords.map { $0.lowercased() }) {
            fail(spec, "a word cannot mean both true and false", entity: source, property: attribute)
        }
        return field
    }

    mutating func readTransform(_ node: Node, source: String, attribute: String) -> PipelineConfig.Transform? {
        if node.scalar != nil {
            switch text(node, "transform", source: source) {
            case "trim"?: return .trim
            case "lowercase"?: return .lowercase
            case "uppercase"?: return .uppercase
            case let other?:
                fail(
                    node,
                    "unknown transform \(other.debugDescription) (trim, lowercase, uppercase, { replace: [from, to] "
                        + "}, { capture: regex })",
                    entity: source, property: attribute)
                return nil
            case nil: return nil
            }
        }
        let entries = pairs(
            node, allowed: ["replace", "capture"], what: "a transform", entity: source, property: attribute)
        guard entries.count == 1 else {
            fail(
                node, "a transform is one of trim, lowercase, uppercase, { replace: [from, to] }, { capture: regex }",
                entity: source, property: attribute)
            return nil
        }
        let (key, _, value) = entries[0]
        if key == "replace" {
            guard let parts = value.sequence, parts.count == 2,
                let from = text(parts[0], "replace", source: source),
                let to = text(parts[1], "replace", source: source, allowEmpty: true)
            else {
                fail(value, "replace takes [from, to]", entity: source, property: attribute)
                return nil
            }
            return .replace(from, with: to)
        }
        guard let pattern = text(value, "capture", source: source) else { return nil }
        do { _ = try NSRegularExpression(pattern: pattern) } catch {
            fail(
                value, "capture: \(pattern.debugDescription) is not a valid regular expression", entity: source,
                property: attribute)
            return nil
        }
        return .capture(pattern)
    }

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
        return PipelineConfig.Lookup(
            relationship: name, entity: destination.name, key: key, createsMissing: createsMissing)
    }

    mutating func readChild(
        _ node: Node, parent: EntityDescription, model: ManagedObjectModel, source: String
    ) -> PipelineConfig.Child? {
        let allowed: Set<String> = [
            "record", "entity", "parent", "key", "fields", "relationships", "children", "where",
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
            for other in ["key", "fields", "children", "where"] {
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
        return PipelineConfig.Child(record: record, parent: parentName, mapping: mapping)
    }

    /// A key given as `{ <attribute of entity>: <column or path> }` (`find:`, a lookup's `key:`); an
    /// attribute the entity lacks is reported (on `property`, else on the attribute).
    private mutating func readKeyParts(
        _ node: Node, of entity: EntityDescription, what: String, label: String, source: String, property: String?
    ) -> [(attribute: String, from: String)] {
        var key: [(attribute: String, from: String)] = []
        for (attribute, attributeNode, from) in pairs(
            node, allowed: nil, what: what, entity: source, property: property)
        {
            guard entity.attribute(named: attribute) != nil else {
                fail(
                    attributeNode, "\(entity.name) has no attribute \(attribute.debugDescription)", entity: source,
                    property: property ?? attribute)
                continue
            }
            if let column = text(from, "\(label) \(attribute)", source: source) { key.append((attribute, column)) }
        }
        return key
    }

    /// Why `pattern` is not a date format (`iso8601`, `unix`, or a Unicode date pattern such as
    /// `dd.MM.yyyy HH:mm`), or `nil` when it is one: a letter outside quotes that no date field
    /// uses (`iso8610`: `i`, `o`), or no field for the day, the year or the time at all.
    static func datePatternMistake(_ pattern: String) -> String? {
        let fields = Set("GyYuUrQqMLlwWdDFgEecabBhHKkjJCmsSAzZOvVXx")
        var quoted = false, used: Set<Character> = [], unknown: [Character] = []
        for character in pattern {
            if character == "'" {
                quoted.toggle()
            } else if !quoted && character.isASCII && character.isLetter {
                if fields.contains(character) { used.insert(character) } else { unknown.append(character) }
            }
        }
        let help = "a date format is iso8601, unix, or a pattern such as yyyy-MM-dd or dd.MM.yyyy HH:mm"
        if !unknown.isEmpty {
            let letters = unknown.map { "`\($0)`" }.joined(separator: ", ")
            return "unknown date format \(pattern.debugDescription): \(letters) \(unknown.count == 1 ? "is" : "are") "
                + "not a date field (\(help))"
        }
        if used.isDisjoint(with: Set("yYuUdDMLHhKkms")) {
            return "unknown date format \(pattern.debugDescription): it has no year, month, day or time field (\(help))"
        }
        // Letters that parse, but not what the pattern surely means.
        let mistaken = "date format \(pattern.debugDescription): "
        if used.contains("m") && used.isDisjoint(with: Set("HhKk")) {
            return mistaken + "`m` is the minute and the pattern has no hour; the month is `MM` (\(help))"
        }
        if used.contains("Y") && !used.contains("w") {
            return mistaken + "`Y` is the week-based year (2024-12-30 is in its 2025); the calendar year is `yyyy`"
        }
        if used.contains("D") && !used.isDisjoint(with: Set("ML")) {
            return mistaken + "`D` is the day of the year; the day of the month is `dd`"
        }
        return nil
    }
}
