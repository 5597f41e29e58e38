import Foundation
import ObjectGraph
import Yams

/// Loads models from Sluice model files (YAML, or JSON, which is read by the same parser) — the format
/// is documented in `docs/model-files.md`.
///
/// ```yaml
/// entities:
///   Customer:
///     attributes:
///       id: integer64!                 # shorthand: type, `!` for required
///       email: { type: string, regex: "[^@]+@[^@]+", maxLength: 200 }
///     relationships:
///       orders: { destination: Order, toMany: true, inverse: customer, deleteRule: cascade }
///     unique: [[email]]
/// ```
///
/// Every mistake is reported with file, line and column: YAML syntax, unknown or mistyped keys, bad
/// values, and what the model itself rejects (unknown destination, an inverse that does not point
/// back, duplicate names).
public enum ModelFile {
    /// Loads the model file at `url`: YAML, JSON, or an Xcode model (`.xcdatamodeld`,
    /// `.xcdatamodel`), whose unused parts are reported through `warn` (standard error by default).
    /// - Throws: `ModelFileError`; an I/O error when the file cannot be read.
    public static func load(
        contentsOf url: URL,
        warn: (String) -> Void = { FileHandle.standardError.write(Data("sluice: warning: \($0)\n".utf8)) }
    ) throws -> ManagedObjectModel {
        if XcodeModel.isXcodeModel(url.path) {
            let (model, warnings) = try XcodeModel.load(path: url.path)
            warnings.forEach(warn)
            return model
        }
        let text: String
        switch ModelFileIssue.readText(at: url.path, "the model file") {
        case .success(let read): text = read
        case .failure(let issue): throw ModelFileError(issues: [issue])
        }
        return try load(text: text, file: url.path, isJSON: url.pathExtension.lowercased() == "json")
    }

    /// Loads a model from text; `file` names it in errors.
    public static func load(text: String, file: String, isJSON: Bool = false) throws -> ManagedObjectModel {
        var loader = Loader(file: file)
        // JSON allows tabs as whitespace where YAML does not; outside strings (where JSON forbids raw tabs
        // anyway) a space means the same, and columns stay where they were.
        let source = isJSON ? text.replacingOccurrences(of: "\t", with: " ") : text
        let root: Node?
        do { root = try Yams.compose(yaml: source) } catch {
            throw ModelFileError(issues: [loader.issue(for: error)])
        }
        guard let root else {
            throw ModelFileError(issues: [
                ModelFileIssue(
                    file: file, line: 1, column: 1, message: "the model file is empty; it needs an `entities` mapping")
            ])
        }
        let entities = loader.readModel(root)
        if !loader.issues.isEmpty { throw ModelFileError(issues: loader.issues) }
        do {
            return try ManagedObjectModel(entities: entities, configurations: loader.configurations)
        } catch let error as ModelValidationError {
            throw ModelFileError(issues: error.issues.map(loader.issue(for:)))
        }
    }
}

private struct Loader: YAMLFileReader {
    let file: String
    var issues: [ModelFileIssue] = []
    var configurations: [String: [String]] = [:]
    /// Where each entity ("Order") and property ("Order.customer") was declared.
    var marks: [String: Mark] = [:]

    init(file: String) { self.file = file }

    func issue(for modelIssue: ModelIssue) -> ModelFileIssue {
        let key = [modelIssue.entity, modelIssue.property].compactMap { $0 }.joined(separator: ".")
        let mark = marks[key] ?? modelIssue.entity.flatMap { marks[$0] }
        return ModelFileIssue(
            file: file, line: mark?.line ?? 0, column: mark?.column ?? 0,
            entity: modelIssue.entity, property: modelIssue.property, message: modelIssue.message)
    }

    // MARK: Model

    mutating func readModel(_ root: Node) -> [EntityDescription] {
        var entities: [EntityDescription] = []
        var sawEntities = false
        for (key, _, value) in pairs(
            root, allowed: ["entities", "configurations", "name", "version"], what: "the model file")
        {
            switch key {
            case "entities":
                sawEntities = true
                for (name, nameNode, body) in pairs(value, allowed: nil, what: "entities") {
                    marks[name] = nameNode.mark
                    if let entity = readEntity(name, body) { entities.append(entity) }
                }
            case "configurations":
                for (name, _, members) in pairs(value, allowed: nil, what: "configurations") {
                    configurations[name] = names(members, "configuration \(name)", entity: nil) ?? []
                }
            default:
                break
            }
        }
        if !sawEntities { fail(root, "the model file needs an `entities` mapping") }
        return entities
    }

    mutating func readEntity(_ name: String, _ body: Node) -> EntityDescription? {
        var parent: String?
        var isAbstract = false
        var attributes: [AttributeDescription] = []
        var relationships: [RelationshipDescription] = []
        var fetched: [FetchedPropertyDescription] = []
        var unique: [[String]] = []
        var indexes: [IndexDescription] = []
        var table: String?
        if body.scalar?.string == "" || body.null != nil {
            return EntityDescription(name: name)
        }
        let allowed: Set<String> = [
            "parent", "abstract", "table", "attributes", "relationships", "unique", "indexes", "columnOrder",
            "fetchedProperties",
        ]
        var columnOrder: [String] = []
        for (key, _, value) in pairs(body, allowed: allowed, what: "entity \(name)", entity: name) {
            switch key {
            case "parent": parent = string(value, "parent", entity: name, property: nil)
            case "abstract": isAbstract = bool(value, "abstract", entity: name, property: nil) ?? false
            case "table": table = storageName(value, "table", entity: name, property: nil)
            case "columnOrder": columnOrder = names(value, "columnOrder", entity: name) ?? []
            case "attributes":
                if value.null != nil { continue }  // `attributes:` with none (an entity of relationships only)
                for (attributeName, nameNode, spec) in pairs(
                    value, allowed: nil, what: "attributes of \(name)", entity: name)
                {
                    marks["\(name).\(attributeName)"] = nameNode.mark
                    if let attribute = readAttribute(attributeName, spec, entity: name) { attributes.append(attribute) }
                }
            case "relationships":
                for (relationshipName, nameNode, spec) in pairs(
                    value, allowed: nil, what: "relationships of \(name)", entity: name)
                {
                    marks["\(name).\(relationshipName)"] = nameNode.mark
                    if let relationship = readRelationship(relationshipName, spec, entity: name) {
                        relationships.append(relationship)
                    }
                }
            case "fetchedProperties":
                for (propertyName, nameNode, spec) in pairs(
                    value, allowed: nil, what: "fetched properties of \(name)", entity: name)
                {
                    marks["\(name).\(propertyName)"] = nameNode.mark
                    if let property = readFetchedProperty(propertyName, spec, entity: name) { fetched.append(property) }
                }
            case "unique":
                guard let list = value.sequence else {
                    fail(value, "unique must be a list of attribute names or of lists of them", entity: name)
                    continue
                }
                for item in list {
                    if let constraint = names(item, "a uniqueness constraint", entity: name) {
                        unique.append(constraint)
                    }
                }
            case "indexes": indexes = readIndexes(value, entity: name)
            default:
                break
            }
        }
        return EntityDescription(
            name: name, parent: parent, isAbstract: isAbstract, attributes: attributes,
            relationships: relationships, fetchedProperties: fetched, uniquenessConstraints: unique, indexes: indexes,
            tableName: table,
            columnOrder: columnOrder)
    }

    /// `indexes:`: a list of property-name lists, or of `{ name, properties }`.
    mutating func readIndexes(_ value: Node, entity name: String) -> [IndexDescription] {
        var indexes: [IndexDescription] = []
        guard let list = value.sequence else {
            fail(value, "indexes must be a list", entity: name)
            return []
        }
        for (i, item) in list.enumerated() {
            if item.mapping != nil {
                var indexName = "\(name)_index\(i + 1)"
                var properties: [String] = []
                for (k, _, v) in pairs(item, allowed: ["name", "properties"], what: "an index", entity: name) {
                    if k == "name" {
                        indexName = string(v, "index name", entity: name, property: nil) ?? indexName
                    } else {
                        properties = names(v, "index properties", entity: name) ?? []
                    }
                }
                indexes.append(IndexDescription(name: indexName, propertyNames: properties))
            } else if let properties = names(item, "an index", entity: name) {
                indexes.append(
                    IndexDescription(
                        name: "\(name)_" + properties.joined(separator: "_"), propertyNames: properties))
            }
        }
        return indexes
    }

    /// A table or column name: any non-empty text (quoted in SQL as needed).
    mutating func storageName(_ node: Node, _ what: String, entity: String, property: String?) -> String? {
        guard let text = string(node, what, entity: entity, property: property) else { return nil }
        guard !text.isEmpty, !text.unicodeScalars.contains(where: { $0.value == 0 }) else {
            fail(node, "\(what) must be a non-empty name", entity: entity, property: property)
            return nil
        }
        return text
    }

    mutating func attributeType(_ text: String, _ node: Node, entity: String, property: String) -> AttributeType? {
        let aliases: [String: AttributeType] = [
            "int16": .integer16, "int32": .integer32, "int64": .integer64, "integer": .integer64, "int": .integer64,
            "bool": .boolean, "data": .binary, "blob": .binary, "url": .uri, "text": .string, "day": .calendarDate,
        ]
        if let type = AttributeType(rawValue: text) ?? aliases[text] { return type }
        fail(
            node,
            "unknown attribute type \(text.debugDescription) (use one of: "
                + "\(AttributeType.allCases.map(\.rawValue).joined(separator: ", ")))",
            entity: entity, property: property)
        return nil
    }

    mutating func readAttribute(_ name: String, _ spec: Node, entity: String) -> AttributeDescription? {
        if let text = spec.scalar?.string {
            var typeName = text
            var optional = true
            if typeName.hasSuffix("!") {
                optional = false
                typeName.removeLast()
            } else if typeName.hasSuffix("?") {
                typeName.removeLast()
            }
            guard let type = attributeType(typeName, spec, entity: entity, property: name) else { return nil }
            return AttributeDescription(name: name, type: type, isOptional: optional)
        }
        let allowed: Set<String> = [
            "type", "optional", "transient", "default", "min", "max", "minLength", "maxLength", "regex", "column",
            "scale", "derived",
        ]
        let fields = pairs(spec, allowed: allowed, what: "attribute \(entity).\(name)", entity: entity, property: name)
        guard let typeField = fields.first(where: { $0.key == "type" }) else {
            fail(spec, "the attribute needs a type", entity: entity, property: name)
            return nil
        }
        guard let typeName = string(typeField.value, "type", entity: entity, property: name),
            let type = attributeType(typeName, typeField.value, entity: entity, property: name)
        else { return nil }
        var optional = true, transient = false
        var defaultValue = AttributeValue.null
        var minValue: AttributeValue?, maxValue: AttributeValue?
        var minLength: Int?, maxLength: Int?
        var regex: String?
        var column: String?
        var scale: Int?
        var derived: String?
        for (key, _, value) in fields {
            switch key {
            case "optional": optional = bool(value, "optional", entity: entity, property: name) ?? true
            case "transient": transient = bool(value, "transient", entity: entity, property: name) ?? false
            case "default": defaultValue = self.value(value, type, "default", entity: entity, property: name) ?? .null
            case "min": minValue = self.value(value, type, "min", entity: entity, property: name)
            case "max": maxValue = self.value(value, type, "max", entity: entity, property: name)
            case "minLength": minLength = int(value, "minLength", entity: entity, property: name)
            case "maxLength": maxLength = int(value, "maxLength", entity: entity, property: name)
            case "regex": regex = string(value, "regex", entity: entity, property: name)
            case "column": column = storageName(value, "column", entity: entity, property: name)
            case "derived": derived = string(value, "derived", entity: entity, property: name)
            case "scale":
                scale = int(value, "scale", entity: entity, property: name)
                if type != .decimal || !(0...38).contains(scale ?? 0) {
                    fail(
                        value, "scale is for decimal attributes: 0 to 38 digits after the point", entity: entity,
                        property: name)
                }
            default: break
            }
        }
        return AttributeDescription(
            name: name, type: type, isOptional: optional, isTransient: transient, defaultValue: defaultValue,
            minValue: minValue, maxValue: maxValue, minLength: minLength, maxLength: maxLength,
            regularExpression: regex, scale: scale, columnName: column, derivation: derived)
    }

    /// Parses a default or bound written in the file as a value of the attribute's type, exactly.
    mutating func value(
        _ node: Node, _ type: AttributeType, _ what: String, entity: String, property: String
    ) -> AttributeValue? {
        guard let text = node.scalar?.string else {
            fail(node, "\(what) must be a single value", entity: entity, property: property)
            return nil
        }
        let parsed = AttributeValueParser.parse(text, as: type)
        if parsed == nil {
            fail(
                node,
                "\(what) \(text.debugDescription) is not a valid \(type)\(AttributeValueParser.formatHint(for: type))",
                entity: entity, property: property)
        }
        return parsed
    }

    mutating func readRelationship(_ name: String, _ spec: Node, entity: String) -> RelationshipDescription? {
        let allowed: Set<String> = [
            "destination", "toMany", "ordered", "inverse", "deleteRule", "optional", "minCount", "maxCount", "column",
            "joinTable", "transient",
        ]
        let fields = pairs(
            spec, allowed: allowed, what: "relationship \(entity).\(name)", entity: entity, property: name)
        var destination: String?
        var toMany = false, ordered = false, optional = true, transient = false
        var inverse: String?
        var rule = DeleteRule.nullify
        var minCount: Int?, maxCount: Int?
        var column: String?, joinTable: String?
        for (key, _, value) in fields {
            switch key {
            case "joinTable": joinTable = storageName(value, "joinTable", entity: entity, property: name)
            case "destination": destination = string(value, "destination", entity: entity, property: name)
            case "toMany": toMany = bool(value, "toMany", entity: entity, property: name) ?? false
            case "ordered": ordered = bool(value, "ordered", entity: entity, property: name) ?? false
            case "transient": transient = bool(value, "transient", entity: entity, property: name) ?? false
            case "optional": optional = bool(value, "optional", entity: entity, property: name) ?? true
            case "inverse": inverse = string(value, "inverse", entity: entity, property: name)
            case "minCount": minCount = int(value, "minCount", entity: entity, property: name)
            case "maxCount": maxCount = int(value, "maxCount", entity: entity, property: name)
            case "column": column = storageName(value, "column", entity: entity, property: name)
            case "deleteRule":
                let text = value.scalar?.string ?? ""
                let rules: [String: DeleteRule] = [
                    "deny": .deny, "nullify": .nullify, "cascade": .cascade, "noAction": .noAction,
                    "noaction": .noAction, "no-action": .noAction,
                ]
                if let parsed = rules[text] {
                    rule = parsed
                } else {
                    fail(
                        value, "unknown delete rule \(text.debugDescription) (use deny, nullify, cascade or noAction)",
                        entity: entity, property: name)
                }
            default: break
            }
        }
        guard let destination else {
            if spec.mapping != nil {
                fail(spec, "the relationship needs a destination entity", entity: entity, property: name)
            }
            return nil
        }
        return RelationshipDescription(
            name: name, destination: destination, inverse: inverse, isToMany: toMany, isOrdered: ordered,
            isOptional: optional, deleteRule: rule, minCount: minCount, maxCount: maxCount, columnName: column,
            joinTable: joinTable, isTransient: transient)
    }

    /// `name: { destination: Entity, predicate: "…$FETCH_SOURCE…", sort: [key, -key] }`.
    mutating func readFetchedProperty(_ name: String, _ spec: Node, entity: String) -> FetchedPropertyDescription? {
        let fields = pairs(
            spec, allowed: ["destination", "predicate", "sort"], what: "fetched property \(entity).\(name)",
            entity: entity, property: name)
        var destination: String?, predicate: String?
        var sort: [FetchSortDescriptor] = []
        for (key, _, value) in fields {
            switch key {
            case "destination": destination = string(value, "destination", entity: entity, property: name)
            case "predicate": predicate = string(value, "predicate", entity: entity, property: name)
            case "sort":
                sort = (names(value, "sort", entity: entity) ?? []).map {
                    $0.hasPrefix("-")
                        ? FetchSortDescriptor(String($0.dropFirst()), ascending: false) : FetchSortDescriptor($0)
                }
            default: break
            }
        }
        guard let destination, let predicate else {
            fail(spec, "a fetched property needs a destination and a predicate", entity: entity, property: name)
            return nil
        }
        return FetchedPropertyDescription(
            name: name, destination: destination, predicate: predicate, sortDescriptors: sort)
    }
}
