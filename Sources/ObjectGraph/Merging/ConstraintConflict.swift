import Foundation

/// An object whose uniqueness-constrained key is taken: by a stored row, or by other objects of
/// the same save.
public struct ConstraintConflict: Sendable, CustomStringConvertible {
    /// The entity declaring the constraint.
    public let entityName: String
    public let keyNames: [String]
    public let keyValues: [AttributeValue]
    /// The object being saved with that key.
    public let objectID: ManagedObjectID
    /// The stored row holding the key, when there is one.
    public let existingObjectID: ManagedObjectID?
    /// Other objects of the same save with the key.
    public let otherObjectIDs: [ManagedObjectID]

    public var description: String {
        let key = zip(keyNames, keyValues).map { "\($0) = \($1)" }.joined(separator: ", ")
        if let existingObjectID {
            return
                "\(entityName) \(key): \(objectID) has the key of the stored \(existingObjectID) (a uniqueness "
                + "constraint)"
        }
        return
            "\(entityName) \(key): \(otherObjectIDs.count + 1) objects of this save have the key (a uniqueness "
            + "constraint): "
            + ([objectID] + otherObjectIDs).map(\.description).joined(separator: ", ")
    }
}

/// A uniqueness constraint by name: the entity declaring it and its property names, in order
/// (`ManagedObjectContext.unmergedConstraints`).
public struct UniquenessConstraintName: Hashable, Sendable {
    public var entity: String
    public var properties: [String]
    public init(entity: String, properties: [String]) {
        self.entity = entity
        self.properties = properties
    }
}
