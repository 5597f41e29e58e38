import Foundation

/// An entity: a kind of managed object, with attributes, relationships, an optional parent entity,
/// uniqueness constraints and indexes.
///
/// Create entities, then build a `ManagedObjectModel` from them; the model resolves parents,
/// destinations and inverses, and numbers properties so objects can keep their values in flat arrays.
///
/// ```swift
/// let department = EntityDescription(name: "Department",
///     attributes: [AttributeDescription(name: "name", type: .string, isOptional: false)],
///     relationships: [RelationshipDescription(name: "employees", destination: "Employee",
///                                             inverse: "department", isToMany: true)])
/// ```
///
/// `@unchecked Sendable`: resolved fields are written only by `ManagedObjectModel.init`, before the
/// model is published; `managedObjectClass` must be set before that too. The resolved fields are
/// `@exclusivity(unchecked)` for that reason (they are read on every object of an import).
public final class EntityDescription: @unchecked Sendable, Hashable, CustomStringConvertible {
    public let name: String
    public let isAbstract: Bool
    public let parentName: String?
    /// Attributes and relationships declared by this entity itself (not inherited).
    public let declaredAttributes: [AttributeDescription]
    public let declaredRelationships: [RelationshipDescription]
    public let declaredFetchedProperties: [FetchedPropertyDescription]
    /// Each constraint is a tuple of attribute names whose values must be unique together.
    public let uniquenessConstraints: [[String]]
    public let indexes: [IndexDescription]
    /// The table that holds the entity's objects in relational stores (the plain SQLite layout);
    /// `nil`: the entity's name. Only a root entity's table name counts: sub-entities share it.
    /// Models inferred from inputs set it to the file or table the entity came from.
    public let tableName: String?
    /// The order of the entity's stored columns, by property name (attributes and to-one
    /// relationships): relational stores make the table's columns in this order, and exports write
    /// them so — a source's own order, which `SELECT *` and positional `INSERT` rely on. Properties
    /// not named follow in the default order (attributes, then to-ones). Empty: the default order.
    public let columnOrder: [String]
    /// The class instantiated for objects of this entity (a `ManagedObject` subclass, or inherited from the parent).
    public var managedObjectClass: ManagedObject.Type?

    // Resolved by the model.
    @exclusivity(unchecked) public internal(set) unowned var superentity: EntityDescription?
    @exclusivity(unchecked) public internal(set) var subentities: [EntityDescription] = []
    /// All attributes, inherited first; `attributes[i].index == i`.
    @exclusivity(unchecked) public internal(set) var attributes: [AttributeDescription] = []
    /// All relationships, inherited first; `relationships[i].index == i`.
    @exclusivity(unchecked) public internal(set) var relationships: [RelationshipDescription] = []
    /// All fetched properties, inherited first; `fetchedProperties[i].index == i`.
    @exclusivity(unchecked) public internal(set) var fetchedProperties: [FetchedPropertyDescription] = []
    /// Indexes of derived attributes (computed at every save of an object).
    @exclusivity(unchecked) var derivedAttributeIndexes: [Int] = []
    /// How objects of this entity reach objects whose derived values read them (see
    /// `DerivationDependent`): a change of an object recomputes the objects at their ends at save.
    @exclusivity(unchecked) var derivationDependents: [DerivationDependent] = []

    /// A derivation reading objects of this entity: what it reads of them (a property; `nil` for
    /// `@count`, which reads only who belongs) and the way back to its owners (the inverses of the
    /// derivation's steps, last first).
    struct DerivationDependent: Equatable {
        let read: String?
        let back: [RelationshipDescription]
        static func == (a: Self, b: Self) -> Bool {
            a.read == b.read && a.back.count == b.back.count && zip(a.back, b.back).allSatisfy { $0 === $1 }
        }
    }
    /// Whether saving an object of this entity computes anything (its derived attributes, or those
    /// of objects that read it).
    var hasDerivations: Bool { !derivedAttributeIndexes.isEmpty || !derivationDependents.isEmpty }
    /// Position in the model's entity list.
    @exclusivity(unchecked) public internal(set) var index: Int = -1
    @exclusivity(unchecked) var attributeIndexByName: [String: Int] = [:]
    @exclusivity(unchecked) var relationshipIndexByName: [String: Int] = [:]
    /// Indexes in the model of this entity and all its descendants.
    @exclusivity(unchecked) var kindIndexes: Set<Int> = []
    @exclusivity(unchecked) var resolvedClass: ManagedObject.Type = ManagedObject.self
    /// Each attribute's default value, in attribute order: a new object's values start as a copy.
    @exclusivity(unchecked) var defaultAttributeValues: [AttributeValue] = []
    /// The entity half of every temporary ID of this entity's objects.
    let temporaryIDScope: ManagedObjectID.Scope
    /// The uniqueness constraints that apply to this entity's objects: its own and inherited ones,
    /// each with the entity that declares it (whose objects, sub-entities included, share the key space).
    @exclusivity(unchecked) var uniquenessKeys: [UniquenessKey] = []

    struct UniquenessKey {
        unowned let entity: EntityDescription
        /// Attributes, and to-one relationships (whose value is the destination's ID).
        let properties: [PropertyDescription]
        let names: [String]
    }

    /// Indexes of transient attributes (stores never see their values).
    @exclusivity(unchecked) var transientAttributeIndexes: [Int] = []
    /// Indexes of transient relationships (stores never see their destinations).
    @exclusivity(unchecked) var transientRelationshipIndexes: [Int] = []

    public init(
        name: String, parent: String? = nil, isAbstract: Bool = false,
        attributes: [AttributeDescription] = [], relationships: [RelationshipDescription] = [],
        fetchedProperties: [FetchedPropertyDescription] = [], uniquenessConstraints: [[String]] = [],
        indexes: [IndexDescription] = [],
        managedObjectClass: ManagedObject.Type? = nil, tableName: String? = nil, columnOrder: [String] = []
    ) {
        self.name = name
        self.parentName = parent
        self.isAbstract = isAbstract
        self.declaredAttributes = attributes
        self.declaredRelationships = relationships
        self.declaredFetchedProperties = fetchedProperties
        self.uniquenessConstraints = uniquenessConstraints
        self.indexes = indexes
        self.tableName = tableName
        self.columnOrder = columnOrder
        self.managedObjectClass = managedObjectClass
        self.temporaryIDScope = ManagedObjectID.Scope(entityName: name, storeIdentifier: nil)
    }

    public func attribute(named name: String) -> AttributeDescription? {
        attributeIndexByName[name].map { attributes[$0] }
    }

    public func relationship(named name: String) -> RelationshipDescription? {
        relationshipIndexByName[name].map { relationships[$0] }
    }

    public func fetchedProperty(named name: String) -> FetchedPropertyDescription? {
        fetchedProperties.first { $0.name == name }
    }

    public func attributeIndex(named name: String) -> Int? { attributeIndexByName[name] }

    public func relationshipIndex(named name: String) -> Int? { relationshipIndexByName[name] }

    /// `items` (each named by the property it stores, `nil` for a column of no property, which
    /// stays first) in the order of `columnOrder`: named ones by their place there, then the others
    /// as they came.
    public func inColumnOrder<T>(_ items: [T], property: (T) -> String?) -> [T] {
        guard !columnOrder.isEmpty else { return items }
        let rank = Dictionary(columnOrder.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        return items.enumerated().sorted { a, b in
            func place(_ item: (offset: Int, element: T)) -> (Int, Int) {
                guard let name = property(item.element) else { return (-1, item.offset) }
                return (rank[name] ?? columnOrder.count, item.offset)
            }
            return place(a) < place(b)
        }.map(\.element)
    }

    /// The entity at the top of this entity's inheritance chain (it names the store table).
    public var rootEntity: EntityDescription {
        var entity = self
        while let parent = entity.superentity { entity = parent }
        return entity
    }

    /// Whether `self` is `other` or one of its descendants.
    public func isKind(of other: EntityDescription) -> Bool { self === other || other.kindIndexes.contains(index) }

    /// Names of the properties, attributes first.
    public var propertyNames: [String] { attributes.map(\.name) + relationships.map(\.name) }

    public static func == (lhs: EntityDescription, rhs: EntityDescription) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    public var description: String { name }
}
