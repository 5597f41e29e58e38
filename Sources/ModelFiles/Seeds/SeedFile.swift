import Foundation
import ObjectGraph
import Yams

/// A position-carrying error in a seed (fixture) file.
public struct SeedFileError: Error, Sendable, CustomStringConvertible {
    public struct Issue: Sendable, Hashable, CustomStringConvertible {
        public var file: String
        public var line: Int
        public var column: Int
        public var message: String
        public var description: String { "\(file):\(line):\(column): \(message)" }
    }
    public var issues: [Issue]
    public var description: String {
        "The seed file has \(issues.count) error\(issues.count == 1 ? "" : "s"):\n"
            + issues.map { "  \($0)" }.joined(separator: "\n")
    }
}

/// Loads a seed file: small, hand-written data for any model, entity by entity, with relationships
/// given by the destination's key values.
///
/// ```yaml
/// Customer:
///   - { id: 1, name: Ada, email: ada@example.com }
/// Order:
///   - { number: 1001, placedAt: 2024-02-01T10:00:00Z, customer: { id: 1 } }
/// Product:
///   - { sku: W-1, tags: [ { name: red }, { name: sale } ] }     # to-many: a list of keys
/// ```
///
/// Objects are created first and linked second, so records may refer to records further down.
/// A key matching no object, or more than one, is an error naming the line and column.
public enum SeedFile {
    /// Inserts the file's objects into `context` (without saving) and returns how many of each entity.
    /// - Throws: `SeedFileError` with every problem found.
    @discardableResult
    public static func load(contentsOf url: URL, into context: ManagedObjectContext) throws -> [String: Int] {
        let file = url.path
        let mapping = try readMapping(url)
        var issues: [SeedFileError.Issue] = []
        func fail(_ node: Node, _ message: String) {
            issues.append(
                .init(file: file, line: node.mark?.line ?? 0, column: node.mark?.column ?? 0, message: message))
        }
        let model = context.managedObjectModel
        var counts: [String: Int] = [:]
        var links: [Link] = []

        for (entityNode, records) in mapping {
            let entityName = entityNode.scalar?.string ?? ""
            guard let entity = model.entity(named: entityName) else {
                fail(entityNode, "the model has no entity named \(entityName.debugDescription)")
                continue
            }
            guard !entity.isAbstract else {
                fail(entityNode, "\(entityName) is abstract; seed one of its sub-entities")
                continue
            }
            guard let list = records.sequence else {
                fail(records, "\(entityName) must hold a list of records")
                continue
            }
            insertRecords(
                list, of: entity, named: entityName, into: context, counts: &counts, links: &links, fail: fail)
        }
        for link in links { self.link(link, in: context, fail: fail) }
        if !issues.isEmpty {
            context.rollback()
            throw SeedFileError(issues: issues)
        }
        return counts
    }

    /// A relationship of a new object and the node that names its destinations by their keys, linked
    /// once every object exists.
    private typealias Link = (object: ManagedObject, relationship: RelationshipDescription, node: Node)

    /// The file's YAML, which must be a mapping from entity names to lists of records.
    /// - Throws: `SeedFileError` when the file cannot be read, is not YAML or is not such a mapping.
    private static func readMapping(_ url: URL) throws -> Node.Mapping {
        let file = url.path
        let text: String
        do { text = try String(contentsOf: url, encoding: .utf8) } catch {
            throw SeedFileError(issues: [
                .init(
                    file: file, line: 0, column: 0, message: "cannot read the seed file: \(error.localizedDescription)")
            ])
        }
        let root: Node?
        do { root = try Yams.compose(yaml: text) } catch {
            let location = YAMLErrorLocation(error)
            throw SeedFileError(issues: [
                .init(file: file, line: location.line, column: location.column, message: location.message)
            ])
        }
        guard let mapping = root?.mapping else {
            throw SeedFileError(issues: [
                .init(
                    file: file, line: 1, column: 1,
                    message: "a seed file is a mapping from entity names to lists of records")
            ])
        }
        return mapping
    }

    /// Inserts an object of `entity` for each record of `list` and sets its attributes; its
    /// relationships go to `links`.
    private static func insertRecords(
        _ list: Node.Sequence, of entity: EntityDescription, named entityName: String,
        into context: ManagedObjectContext, counts: inout [String: Int], links: inout [Link],
        fail: (Node, String) -> Void
    ) {
        for record in list {
            guard let fields = record.mapping else {
                fail(record, "each \(entityName) record must be a mapping of property names to values")
                continue
            }
            let object = context.insertNewObject(forEntityName: entityName)
            counts[entityName, default: 0] += 1
            for (keyNode, valueNode) in fields {
                let key = keyNode.scalar?.string ?? ""
                if let attribute = entity.attribute(named: key), let derivation = attribute.derivationExpression {
                    fail(keyNode, "\(entityName).\(key) is derived (\(derivation)): the save computes it")
                } else if let attribute = entity.attribute(named: key) {
                    set(attribute, of: object, to: valueNode, field: (entityName, key), fail: fail)
                } else if let relationship = entity.relationship(named: key), relationship.isTransient {
                    fail(keyNode, "\(entityName).\(key) is a transient relationship: a seed stores nothing in it")
                } else if let relationship = entity.relationship(named: key) {
                    links.append((object, relationship, valueNode))
                } else {
                    fail(keyNode, "\(entityName) has no property named \(key.debugDescription)")
                }
            }
        }
    }

    /// Sets `attribute` of `object` to the value `node` writes (`null`, or text of the attribute's type);
    /// `field` (the entity's and the attribute's names) names it in an error.
    private static func set(
        _ attribute: AttributeDescription, of object: ManagedObject, to node: Node,
        field: (entity: String, key: String), fail: (Node, String) -> Void
    ) {
        if node.null != nil {
            object[attributeAt: attribute.index] = .null
            return
        }
        guard let text = node.scalar?.string, let value = AttributeValueParser.parse(text, as: attribute.type) else {
            fail(
                node,
                "\(field.entity).\(field.key): \(node.scalar?.string.debugDescription ?? "this value") "
                    + "is not a valid "
                    + "\(attribute.type)\(AttributeValueParser.formatHint(for: attribute.type))"
            )
            return
        }
        object[attributeAt: attribute.index] = value
    }

    /// Links an object to the destinations its relationship's node names by their keys: a list of
    /// keys for a to-many relationship, one key (or `null`) for a to-one.
    private static func link(_ link: Link, in context: ManagedObjectContext, fail: (Node, String) -> Void) {
        let (object, relationship, node) = link
        let keyNodes: [Node]
        if relationship.isToMany {
            guard let list = node.sequence else {
                fail(node, "\(relationship) is to-many: give a list of keys")
                return
            }
            keyNodes = Array(list)
        } else {
            if node.null != nil { return }
            keyNodes = [node]
        }
        for keyNode in keyNodes {
            guard let destination = lookUp(relationship.destinationEntity, keyNode, in: context, fail: fail) else {
                continue
            }
            if relationship.isToMany {
                object.addRelatedObject(destination, forKey: relationship.name)
            } else {
                object.setRelatedObject(destination, forKey: relationship.name)
            }
        }
    }

    private static func lookUp(
        _ entity: EntityDescription, _ node: Node, in context: ManagedObjectContext,
        fail: (Node, String) -> Void
    ) -> ManagedObject? {
        guard let fields = node.mapping, !fields.isEmpty else {
            fail(node, "refer to a \(entity.name) by its key values, e.g. { id: 1 }")
            return nil
        }
        var parts: [FetchPredicate] = []
        var description: [String] = []
        for (keyNode, valueNode) in fields {
            let key = keyNode.scalar?.string ?? ""
            guard let attribute = entity.attribute(named: key) else {
                fail(keyNode, "\(entity.name) has no attribute named \(key.debugDescription) to look it up by")
                return nil
            }
            guard let text = valueNode.scalar?.string, let value = AttributeValueParser.parse(text, as: attribute.type)
            else {
                fail(valueNode, "\(entity.name).\(key): not a valid \(attribute.type)")
                return nil
            }
            parts.append(.comparison(PredicateComparison(.keyPath([key]), .equal, .constant(value))))
            description.append("\(key) = \(text)")
        }
        let request = FetchRequest(entityName: entity.name, predicate: parts.count == 1 ? parts[0] : .and(parts))
        let matches: [ManagedObject]
        do { matches = try context.fetch(request) } catch {
            fail(node, "cannot look up \(entity.name): \(error)")
            return nil
        }
        switch matches.count {
        case 1: return matches[0]
        case 0:
            fail(node, "no \(entity.name) has \(description.joined(separator: ", "))")
            return nil
        default:
            fail(
                node,
                "\(matches.count) \(entity.name) objects have \(description.joined(separator: ", ")); the key must "
                    + "pick one"
            )
            return nil
        }
    }
}
