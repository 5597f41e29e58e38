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
    /// The column that holds the property in relational stores (the plain SQLite layout): an
    /// attribute's values, or a to-one relationship's foreign key. `nil`: the store names it (an
    /// attribute by its name, a to-one as `<name>_id`). Models inferred from inputs set it to the
    /// source's column name, so the file shows the names the user knows.
    public let columnName: String?
    /// Position of the property in its entity's flat value array (attributes and relationships are
    /// numbered separately). Inherited properties keep their parent's index.
    @exclusivity(unchecked) public internal(set) var index: Int = -1
    /// The entity that declares the property (a parent entity for inherited properties).
    @exclusivity(unchecked) public internal(set) unowned var entity: EntityDescription! = nil

    init(name: String, isOptional: Bool, columnName: String?) {
        self.name = name
        self.isOptional = isOptional
        self.columnName = columnName
    }

    /// The column name as the version hash sees it (a store's layout depends on it).
    var columnHashText: String { columnName.map { "@" + $0 } ?? "" }

    public var description: String { "\(entity?.name ?? "?").\(name)" }
}
