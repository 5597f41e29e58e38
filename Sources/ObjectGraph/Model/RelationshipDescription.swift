import Foundation

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
    /// For a many-to-many relationship (or a to-many without inverse): the join table's name, when
    /// the model sets it (`joinTable:`); its `columnName` then names the column of the destinations'
    /// keys. Either side may set the table; both may, alike.
    public let joinTable: String?
    /// Transient relationships live in memory only, as transient attributes do: no column, no join
    /// table, never written to a store, empty (or `nil`) again when the object is read back. Both
    /// sides of an inverse pair are transient, or neither.
    public let isTransient: Bool
    @exclusivity(unchecked) public internal(set) unowned var destinationEntity: EntityDescription! = nil
    @exclusivity(unchecked) public internal(set) unowned var inverse: RelationshipDescription? = nil

    public init(
        name: String, destination: String, inverse: String? = nil, isToMany: Bool = false,
        isOrdered: Bool = false, isOptional: Bool = true, deleteRule: DeleteRule = .nullify,
        minCount: Int? = nil, maxCount: Int? = nil, columnName: String? = nil, joinTable: String? = nil,
        isTransient: Bool = false
    ) {
        self.isTransient = isTransient
        self.destinationEntityName = destination
        self.inverseName = inverse
        self.isToMany = isToMany
        self.isOrdered = isOrdered
        self.deleteRule = deleteRule
        self.minCount = minCount
        self.maxCount = maxCount
        self.joinTable = joinTable
        super.init(name: name, isOptional: isOptional, columnName: columnName)
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
        return
            "\(name)->\(destinationEntityName):\(cardinality):\(inverseName ?? "-"):\(isOptional ? "?" : "!")"
            + columnHashText + (joinTable.map { "#" + $0 } ?? "")
    }
}
