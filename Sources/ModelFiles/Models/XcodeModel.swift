import Foundation
import ObjectGraph
import Readers

/// Loads Xcode's Core Data models (`.xcdatamodeld` bundles, `.xcdatamodel` folders, or their
/// `contents` file) into a `ManagedObjectModel`, so a model drawn in Xcode is used as it is:
/// entities (parent, abstract), attributes (type, optional, transient, derived, default, min/max —
/// values, or lengths for strings and binaries —, regular expression), relationships (destination,
/// inverse, to-many, ordered, optional, transient, min/max count, delete rule), fetched properties,
/// uniqueness constraints, fetch indexes and configurations. What Sluice does not use (user info,
/// stored fetch requests, transformable types…) is named in one warning, never dropped silently.
public enum XcodeModel {
    /// Whether `path` names an Xcode model.
    public static func isXcodeModel(_ path: String) -> Bool {
        let lower = path.lowercased()
        return lower.hasSuffix(".xcdatamodeld") || lower.hasSuffix(".xcdatamodel") || lower.hasSuffix(".xcdatamodeld/")
            || lower.hasSuffix(".xcdatamodel/") || (path as NSString).lastPathComponent == "contents"
    }

    /// - Returns: the model and, when it has elements or attributes Sluice does not use, one warning
    ///   naming them all.
    /// - Throws: `ModelFileError` naming file and line.
    public static func load(path: String) throws -> (model: ManagedObjectModel, warnings: [String]) {
        let file = try contentsFile(path)
        let root: XMLTreeElement
        do { root = try XMLTree.read(path: file) } catch let error as ReaderError {
            throw ModelFileError(issues: [
                ModelFileIssue(
                    file: file, line: error.position?.line ?? 0, column: error.position?.column ?? 0,
                    message: error.message)
            ])
        }
        var loader = Loader(file: file)
        let entities = loader.model(root)
        if !loader.issues.isEmpty { throw ModelFileError(issues: loader.issues) }
        do {
            let model = try ManagedObjectModel(entities: entities, configurations: loader.configurations)
            // What Sluice does not use, named once, in one warning.
            let warning = "\(file): not used by Sluice: " + loader.warnings.joined(separator: "; ")
            return (model, loader.warnings.isEmpty ? [] : [warning])
        } catch let error as ModelValidationError {
            throw ModelFileError(
                issues: error.issues.map { issue in
                    ModelFileIssue(
                        file: file,
                        line: loader.lines[[issue.entity, issue.property].compactMap { $0 }.joined(separator: ".")]
                            ?? 0,
                        column: 0, entity: issue.entity, property: issue.property, message: issue.message)
                })
        }
    }

    /// The `contents` file: of the current version of a bundle (`.xccurrentversion`, else the last
    /// version by name), of a model folder, or the path itself.
    static func contentsFile(_ path: String) throws -> String {
        var url = URL(fileURLWithPath: path)
        func fail(_ message: String) -> ModelFileError {
            ModelFileError(issues: [ModelFileIssue(file: path, line: 0, column: 0, message: message)])
        }
        if url.pathExtension.lowercased() == "xcdatamodeld" {
            let versions = ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).filter {
                $0.hasSuffix(".xcdatamodel")
            }.sorted()
            var chosen = versions.last
            if let plist = FileManager.default.contents(atPath: url.appendingPathComponent(".xccurrentversion").path),
                let values = try? PropertyListSerialization.propertyList(from: plist, format: nil) as? [String: Any],
                let current = values["_XCCurrentVersionName"] as? String, versions.contains(current)
            {
                chosen = current
            }
            guard let chosen else { throw fail("the model bundle holds no .xcdatamodel version") }
            url = url.appendingPathComponent(chosen)
        }
        if url.pathExtension.lowercased() == "xcdatamodel" { url = url.appendingPathComponent("contents") }
        guard FileManager.default.fileExists(atPath: url.path) else { throw fail("there is no model at \(url.path)") }
        return url.path
    }

    private struct Loader {
        let file: String
        var issues: [ModelFileIssue] = []
        var warnings: [String] = []
        var configurations: [String: [String]] = [:]
        /// Lines of entities and properties (`Entity`, `Entity.property`), for the model's own errors.
        var lines: [String: Int] = [:]

        init(file: String) { self.file = file }

        mutating func fail(_ element: XMLTreeElement, _ message: String, entity: String? = nil, property: String? = nil)
        {
            issues.append(
                ModelFileIssue(
                    file: file, line: element.line, column: 0, entity: entity, property: property, message: message))
        }

        mutating func warn(_ element: XMLTreeElement, _ message: String) {
            warnings.append("\(message) (line \(element.line))")
        }

        mutating func model(_ root: XMLTreeElement) -> [EntityDescription] {
            guard root.name == "model" else {
                fail(root, "not a Core Data model (the root element is <\(root.name)>, not <model>)")
                return []
            }
            var entities: [EntityDescription] = []
            for element in root.children {
                switch element.name {
                case "entity": if let entity = entity(element) { entities.append(entity) }
                case "configuration":
                    guard let name = element.attributes["name"] else {
                        fail(element, "a configuration without a name")
                        continue
                    }
                    configurations[name] = element.children(named: "memberEntity").compactMap { $0.attributes["name"] }
                case "elements": break  // the diagram's layout
                case "fetchRequest":
                    warn(
                        element,
                        "stored fetch request \(element.attributes["name"] ?? "") ignored (use predicates in code)")
                default: warn(element, "element <\(element.name)> ignored")
                }
            }
            return entities
        }

        mutating func entity(_ element: XMLTreeElement) -> EntityDescription? {
            guard let name = element.attributes["name"] else {
                fail(element, "an entity without a name")
                return nil
            }
            lines[name] = element.line
            var attributes: [AttributeDescription] = [], relationships: [RelationshipDescription] = []
            var fetched: [FetchedPropertyDescription] = []
            var unique: [[String]] = [], indexes: [IndexDescription] = []
            for child in element.children {
                switch child.name {
                case "attribute": if let attribute = attribute(child, entity: name) { attributes.append(attribute) }
                case "relationship":
                    if let relationship = relationship(child, entity: name) { relationships.append(relationship) }
                case "uniquenessConstraints":
                    for constraint in child.children(named: "uniquenessConstraint") {
                        unique.append(constraint.children(named: "constraint").compactMap { $0.attributes["value"] })
                    }
                case "fetchIndex":
                    let properties = child.children(named: "fetchIndexElement").compactMap { $0.attributes["property"] }
                    if !properties.isEmpty {
                        indexes.append(
                            IndexDescription(name: child.attributes["name"] ?? "", propertyNames: properties))
                    }
                case "userInfo": warn(child, "user info of entity \(name) ignored")
                case "fetchedProperty":
                    if let property = fetchedProperty(child, entity: name) { fetched.append(property) }
                default: warn(child, "element <\(child.name)> of entity \(name) ignored")
                }
            }
            return EntityDescription(
                name: name, parent: element.attributes["parentEntity"],
                isAbstract: element.attributes["isAbstract"] == "YES",
                attributes: attributes, relationships: relationships, fetchedProperties: fetched,
                uniquenessConstraints: unique, indexes: indexes)
        }

        /// `<fetchedProperty name=…><fetchRequest entity=… predicateString=…/></fetchedProperty>`.
        mutating func fetchedProperty(_ element: XMLTreeElement, entity: String) -> FetchedPropertyDescription? {
            guard let name = element.attributes["name"], let request = element.children(named: "fetchRequest").first,
                let destination = request.attributes["entity"]
            else {
                fail(element, "a fetched property without a name or a fetch request naming an entity", entity: entity)
                return nil
            }
            lines["\(entity).\(name)"] = element.line
            return FetchedPropertyDescription(
                name: name, destination: destination,
                predicate: request.attributes["predicateString"] ?? "TRUEPREDICATE")
        }

        mutating func attribute(_ element: XMLTreeElement, entity: String) -> AttributeDescription? {
            let a = element.attributes
            guard let name = a["name"] else {
                fail(element, "an attribute without a name", entity: entity)
                return nil
            }
            lines["\(entity).\(name)"] = element.line
            let isTransient = a["transient"] == "YES"
            guard let type = attributeType(element, entity: entity, name: name, isTransient: isTransient) else {
                return nil
            }
            if a["userInfo"] != nil || !element.children(named: "userInfo").isEmpty {
                warn(element, "user info of \(entity).\(name) ignored")
            }
            let limits = Self.limits(a, type: type)
            var defaultValue = Self.value(a["defaultValueString"], as: type) ?? .null
            if type == .date, let seconds = a["defaultDateTimeInterval"].flatMap(Double.init) {
                defaultValue = .date(Date(timeIntervalSinceReferenceDate: seconds))
            }
            if a["defaultValueString"] != nil, defaultValue == .null {
                fail(
                    element, "default value \(a["defaultValueString"]!.debugDescription) is not a \(type)",
                    entity: entity, property: name)
            }
            return AttributeDescription(
                name: name, type: type, isOptional: a["optional"] == "YES", isTransient: isTransient,
                defaultValue: defaultValue,
                minValue: limits.minValue, maxValue: limits.maxValue, minLength: limits.minLength,
                maxLength: limits.maxLength, regularExpression: a["regularExpressionString"],
                derivation: a["derived"] == "YES" ? a["derivationExpression"] ?? "" : nil)
        }

        /// The type of attribute `entity.name` from its `attributeType`: a Transformable one is binary, a
        /// transient one of a type Sluice does not know is a string (each with a warning); `nil` (after
        /// an issue) for another type Sluice does not know.
        mutating func attributeType(
            _ element: XMLTreeElement, entity: String, name: String, isTransient: Bool
        ) -> AttributeType? {
            switch element.attributes["attributeType"] ?? "Undefined" {
            case "Integer 16": return .integer16
            case "Integer 32": return .integer32
            case "Integer 64": return .integer64
            case "Decimal": return .decimal
            case "Double": return .double
            case "Float": return .float
            case "String": return .string
            case "Boolean": return .boolean
            case "Date": return .date
            case "Binary": return .binary
            case "UUID": return .uuid
            case "URI": return .uri
            case "Transformable":
                warn(
                    element,
                    "\(entity).\(name) is Transformable: stored as binary (the value transformer does not exist here)")
                return .binary
            case let other:
                if isTransient {
                    warn(element, "\(entity).\(name) is a transient of type \(other): kept as an untyped string")
                    return .string
                }
                fail(
                    element, "attribute type \(other.debugDescription) is not supported", entity: entity,
                    property: name)
                return nil
            }
        }

        /// An attribute's bounds from the element's attributes `a`: lengths for strings and binaries
        /// (`minValueString`, `maxValueString`), dates as seconds since 2001 (`minDateTimeInterval`, …),
        /// values of the attribute's type for the others.
        static func limits(
            _ a: [String: String], type: AttributeType
        ) -> (minValue: AttributeValue?, maxValue: AttributeValue?, minLength: Int?, maxLength: Int?) {
            var minValue: AttributeValue?, maxValue: AttributeValue?, minLength: Int?, maxLength: Int?
            if type == .string || type == .binary {
                minLength = a["minValueString"].flatMap { Int($0) }
                maxLength = a["maxValueString"].flatMap { Int($0) }
            } else if type == .date {
                minValue = a["minDateTimeInterval"].flatMap(Double.init).map {
                    .date(Date(timeIntervalSinceReferenceDate: $0))
                }
                maxValue = a["maxDateTimeInterval"].flatMap(Double.init).map {
                    .date(Date(timeIntervalSinceReferenceDate: $0))
                }
            } else {
                minValue = value(a["minValueString"], as: type)
                maxValue = value(a["maxValueString"], as: type)
            }
            return (minValue, maxValue, minLength, maxLength)
        }

        /// A value of `type` as Xcode writes it in a model (`nil` for dates and binaries, which it writes
        /// otherwise, and for text that is no such value).
        static func value(_ text: String?, as type: AttributeType) -> AttributeValue? {
            guard let text else { return nil }
            switch type {
            case .integer16, .integer32, .integer64: return Int64(text).map { .integer($0) }
            case .decimal: return Decimal(string: text).map { .decimal($0) }
            case .double: return Double(text).map { .double($0) }
            case .float: return Float(text).map { .float($0) }
            case .boolean: return .boolean(text == "YES" || text == "1" || text.lowercased() == "true")
            case .string: return .string(text)
            case .uuid: return UUID(uuidString: text).map { .uuid($0) }
            case .uri: return URL(string: text).map { .uri($0) }
            case .date, .calendarDate, .binary: return nil
            }
        }

        mutating func relationship(_ element: XMLTreeElement, entity: String) -> RelationshipDescription? {
            let a = element.attributes
            guard let name = a["name"], let destination = a["destinationEntity"] else {
                fail(element, "a relationship without a name or destination", entity: entity)
                return nil
            }
            lines["\(entity).\(name)"] = element.line
            let rule: DeleteRule
            switch a["deletionRule"] ?? "Nullify" {
            case "Nullify": rule = .nullify
            case "Cascade": rule = .cascade
            case "Deny": rule = .deny
            case "No Action": rule = .noAction
            case let other:
                fail(element, "delete rule \(other.debugDescription) is not known", entity: entity, property: name)
                rule = .nullify
            }
            let toMany = a["toMany"] == "YES"
            // Xcode writes maxCount="1" for to-one relationships: only a to-many has counts.
            return RelationshipDescription(
                name: name, destination: destination, inverse: a["inverseName"], isToMany: toMany,
                isOrdered: a["ordered"] == "YES", isOptional: a["optional"] == "YES", deleteRule: rule,
                minCount: toMany ? a["minCount"].flatMap { Int($0) } : nil,
                maxCount: toMany ? a["maxCount"].flatMap { Int($0) } : nil, isTransient: a["transient"] == "YES")
        }
    }
}
