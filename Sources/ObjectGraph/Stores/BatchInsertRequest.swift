import Foundation

/// New objects of one entity written straight to a store, without managed objects or a context:
/// Core Data's `NSBatchInsertRequest`, for bulk imports into a store that supports it
/// (`PersistentStoreCoordinator.supportsBatchInsert(for:)`).
///
/// Objects are kept flat, `entity.attributes.count` values and `entity.relationships.count`
/// destination slots each, one object after another. As with Core Data's batch insert, nothing
/// reaches a context: no did-save notification is posted and no inverse relationship of a loaded
/// object changes; the store's inverses follow from the foreign keys. Only to-one relationships
/// whose inverse is absent or to-many can be set (`canSet(_:)`), and `isValid(_:)` runs the
/// attribute rules and required to-ones a save would; count rules of to-many relationships are
/// the caller's to check (whole-graph validation does).
///
/// ```swift
/// var request = BatchInsertRequest(entity: model.entity(named: "Order")!)
/// let order = request.appendObject()
/// request[order, number.index] = .integer(1001)
/// request.setDestination(customerID, relationship: customer.index, of: order)
/// let ids = try coordinator.execute(request)      // nil where a uniqueness constraint was broken
/// ```
public struct BatchInsertRequest: @unchecked Sendable {
    // @unchecked: EntityDescription is immutable once its model is built.
    public let entity: EntityDescription
    /// Attribute values of every object, `entity.attributes.count` per object.
    public private(set) var attributeValues: [AttributeValue] = []
    /// To-one destinations of every object, `entity.relationships.count` per object (`nil` for
    /// to-many slots and empty to-ones).
    public private(set) var toOneDestinations: [ManagedObjectID?] = []
    public private(set) var count = 0
    private let defaults: [AttributeValue]
    /// Destination slots per object (`entity.relationships.count`).
    private let slots: Int
    /// The rules `isValid(_:)` checks: the attributes, and the indexes of required to-ones.
    private let attributes: [AttributeDescription]
    private let requiredToOnes: [Int]
    /// By relationship: whether `canSet(_:)` allows it.
    private let settable: [Bool]

    public init(entity: EntityDescription, capacity: Int = 0) {
        self.entity = entity
        defaults = entity.attributes.map(\.defaultValue)
        attributes = entity.attributes
        slots = entity.relationships.count
        requiredToOnes = entity.relationships.filter { !$0.isToMany && !$0.isOptional }.map(\.index)
        settable = entity.relationships.map(Self.canSet)
        attributeValues.reserveCapacity(capacity * defaults.count)
        toOneDestinations.reserveCapacity(capacity * slots)
    }

    /// Adds an object with the attributes' default values and no destinations; returns its index.
    public mutating func appendObject() -> Int {
        attributeValues.append(contentsOf: defaults)
        for _ in 0..<slots { toOneDestinations.append(nil) }
        count += 1
        return count - 1
    }

    /// The value of attribute `attribute` (its index in the entity) of object `object`.
    public subscript(object: Int, attribute: Int) -> AttributeValue {
        get { attributeValues[object * defaults.count + attribute] }
        set { attributeValues[object * defaults.count + attribute] = newValue }
    }

    public func destination(relationship: Int, of object: Int) -> ManagedObjectID? {
        toOneDestinations[object * slots + relationship]
    }

    /// Sets a to-one relationship (see `canSet(_:)`).
    public mutating func setDestination(_ destination: ManagedObjectID?, relationship: Int, of object: Int) {
        precondition(settable[relationship], "\(entity.relationships[relationship]) cannot be set by a batch insert")
        toOneDestinations[object * slots + relationship] = destination
    }

    /// A request of the objects `objects` (indexes into this one, in that order), values and
    /// destinations as they are here.
    public func keeping(_ objects: [Int]) -> BatchInsertRequest {
        var kept = BatchInsertRequest(entity: entity, capacity: objects.count)
        let width = defaults.count
        for object in objects {
            kept.attributeValues.append(contentsOf: attributeValues[object * width..<(object + 1) * width])
            kept.toOneDestinations.append(contentsOf: toOneDestinations[object * slots..<(object + 1) * slots])
        }
        kept.count = objects.count
        return kept
    }

    /// Whether a batch insert can set the relationship: a to-one whose inverse is absent or an
    /// unordered to-many (a foreign key of the new row says it all). One-to-one relationships (which
    /// take the destination from its former owner) and ordered inverses need a context.
    public static func canSet(_ relationship: RelationshipDescription) -> Bool {
        guard !relationship.isToMany else { return false }
        guard let inverse = relationship.inverse else { return true }
        return inverse.isToMany && !inverse.isOrdered
    }

    /// Whether the object passes the rules a save checks without other objects: every attribute's
    /// rules and every required to-one relationship. Objects that fail belong in a context, whose
    /// save reports each failure.
    public func isValid(_ object: Int) -> Bool {
        var valid = true
        let base = object * defaults.count
        for (index, attribute) in attributes.enumerated() {
            attribute.checkRules(of: attributeValues[base + index]) { _, _ in valid = false }
            if !valid { return false }
        }
        let first = object * slots
        return requiredToOnes.allSatisfy { toOneDestinations[first + $0] != nil }
    }
}
