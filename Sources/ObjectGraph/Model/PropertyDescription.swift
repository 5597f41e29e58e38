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
