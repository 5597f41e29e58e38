import Foundation

/// An attribute or relationship of an entity.
///
/// Descriptions are created freely, then frozen when a `ManagedObjectModel` is built from their
/// entities. The model resolves names into indexes and references.
///
/// `@unchecked Sendable`: the only mutable state (index, resolved references) is written by
/// `ManagedObjectModel.init` before the model is published, and never after. For the same reason
/// that state is `@exclusivity(unchecked)`: it is read on every value access of an import, and a
/// run-time exclusivity check on a field nobody writes any more proves nothing.
public class PropertyDescription: @unchecked Sendable, CustomStringConvertible {
    public let name: String
    /// Whether the property may be nil (to-one) / empty (to-many) / null (attribute).
    public let isOptional: Bool
    /// Position of the property in its entity's flat value array (attributes and relationships are
    /// numbered separately). Inherited properties keep their parent's index.
    @exclusivity(unchecked) public internal(set) var index: Int = -1
    /// The entity that declares the property (a parent entity for inherited properties).
    @exclusivity(unchecked) public internal(set) unowned var entity: EntityDescription! = nil

    init(name: String, isOptional: Bool) {
        self.name = name
        self.isOptional = isOptional
    }

    public var description: String { "\(entity?.name ?? "?").\(name)" }
}

/// A typed attribute with its validation rules.
public final class AttributeDescription: PropertyDescription, @unchecked Sendable {
    public let type: AttributeType
    /// Transient attributes live in memory only: never written to a store.
    public let isTransient: Bool
    /// The value a newly inserted object starts with (`.null` when none).
    public let defaultValue: AttributeValue
    public let minValue: AttributeValue?
    public let maxValue: AttributeValue?
    /// Length rules: characters for strings, bytes for binary data.
    public let minLength: Int?
    public let maxLength: Int?
    /// A regular expression the whole string must match.
    public let regularExpression: String?
    let compiledRegex: NSRegularExpression?
    let regexError: String?
    /// Whether any rule beyond optionality and type applies (range, length, pattern): most attributes
    /// have none, and validation stops after the type check for them.
    let hasValueRules: Bool

    public init(
        name: String, type: AttributeType, isOptional: Bool = true, isTransient: Bool = false,
        defaultValue: AttributeValue = .null, minValue: AttributeValue? = nil, maxValue: AttributeValue? = nil,
        minLength: Int? = nil, maxLength: Int? = nil, regularExpression: String? = nil
    ) {
        self.type = type
        self.isTransient = isTransient
        self.defaultValue = defaultValue
        self.minValue = minValue
        self.maxValue = maxValue
        self.minLength = minLength
        self.maxLength = maxLength
        self.regularExpression = regularExpression
        hasValueRules =
            minValue != nil || maxValue != nil || minLength != nil || maxLength != nil || regularExpression != nil
        if let pattern = regularExpression {
            do {
                compiledRegex = try NSRegularExpression(pattern: "^(?:\(pattern))$", options: [])
                regexError = nil
            } catch {
                compiledRegex = nil
                regexError = "invalid regular expression \(pattern.debugDescription)"
            }
        } else {
            compiledRegex = nil
            regexError = nil
        }
        super.init(name: name, isOptional: isOptional)
    }

    /// Canonical text that feeds the model version hash: only what decides how values are stored.
    var hashText: String { "\(name):\(type.rawValue):\(isOptional ? "?" : "!")" }
}

/// A relationship to another entity (or the same one), with its inverse and delete rule.
public final class RelationshipDescription: PropertyDescription, @unchecked Sendable {
    public let destinationEntityName: String
    public let inverseName: String?
    public let isToMany: Bool
    public let isOrdered: Bool
    public let deleteRule: DeleteRule
    /// For to-many relationships: the allowed number of destinations.
    public let minCount: Int?
    public let maxCount: Int?
    @exclusivity(unchecked) public internal(set) unowned var destinationEntity: EntityDescription! = nil
    @exclusivity(unchecked) public internal(set) unowned var inverse: RelationshipDescription? = nil

    public init(
        name: String, destination: String, inverse: String? = nil, isToMany: Bool = false,
        isOrdered: Bool = false, isOptional: Bool = true, deleteRule: DeleteRule = .nullify,
        minCount: Int? = nil, maxCount: Int? = nil
    ) {
        self.destinationEntityName = destination
        self.inverseName = inverse
        self.isToMany = isToMany
        self.isOrdered = isOrdered
        self.deleteRule = deleteRule
        self.minCount = minCount
        self.maxCount = maxCount
        super.init(name: name, isOptional: isOptional)
    }

    /// The smallest number of destinations a valid object has (non-optional to-many means at least one).
    public var effectiveMinCount: Int? {
        if let minCount { return minCount }
        return isToMany && !isOptional ? 1 : nil
    }

    /// Many-to-many: to-many both ways (a join table in relational stores).
    public var isManyToMany: Bool { isToMany && (inverse?.isToMany ?? false) }

    var hashText: String {
        let cardinality = (isToMany ? "*" : "1") + (isOrdered ? "o" : "")
        return "\(name)->\(destinationEntityName):\(cardinality):\(inverseName ?? "-"):\(isOptional ? "?" : "!")"
    }
}
