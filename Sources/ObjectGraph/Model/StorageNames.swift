import Foundation

/// The names relational stores and exports give an entity's data — the plain SQLite layout and
/// `sluice export` use the same ones: the model's `tableName` / `columnName` where it sets them,
/// else names made from the model's (a to-one relationship's foreign key is `<name>_id`).
extension EntityDescription {
    /// The table holding the entity's objects: its root entity's `tableName`, else the root's name.
    public var storageTableName: String { rootEntity.tableName ?? rootEntity.name }

    /// The integer key column of the table when its rows are not kept under a key attribute: `id`,
    /// unless a column of the table (of the root or any sub-entity) wants that name; then
    /// `<table>_id`, `<table>_key`, `_id` or `_rowid`.
    public var storageKeyColumnName: String {
        var wanted = Set<String>()
        var kinds = [rootEntity]
        while let kind = kinds.popLast() {
            kinds += kind.subentities
            for attribute in kind.attributes { wanted.insert(attribute.storageColumnName.lowercased()) }
            for relationship in kind.relationships where !relationship.isToMany && !relationship.isTransient {
                wanted.insert(relationship.storageColumnName.lowercased())
            }
        }
        let table = storageTableName
        return ["id", "\(table)_id", "\(table)_key", "_id"].first { !wanted.contains($0.lowercased()) } ?? "_rowid"
    }
}

extension ManagedObjectModel {
    /// The key column of `entity`'s table when its rows are not kept under a key attribute: SQLite's
    /// own `rowid` — no column added to the table — when nothing refers to the entity's rows (no
    /// to-one relationship points at it and no join table holds it), else
    /// `EntityDescription.storageKeyColumnName`, which foreign keys can reference.
    public func storageKeyColumnName(of entity: EntityDescription) -> String {
        let root = entity.rootEntity
        let referenced = entities.contains { other in
            other.relationships.contains { relationship in
                relationship.entity === other
                    && (!relationship.isToMany && !relationship.isTransient
                        && relationship.destinationEntity?.rootEntity === root
                        || relationship.usesJoinTable
                            && (other.rootEntity === root || relationship.destinationEntity?.rootEntity === root))
            }
        }
        return referenced ? root.storageKeyColumnName : "rowid"
    }
}

extension PropertyDescription {
    /// Whether the property is kept in SQLite's own `rowid` (`column: rowid`): the table has no such column.
    public var isStoredInRowID: Bool { storageColumnName.lowercased() == "rowid" }

    /// The column holding the property: `columnName`, else the attribute's name or, for a to-one
    /// relationship, `<name>_id`.
    public var storageColumnName: String {
        if let columnName { return columnName }
        return self is RelationshipDescription ? name + "_id" : name
    }
}

extension RelationshipDescription {
    /// The table of links of a many-to-many or inverse-less to-many relationship: the model's
    /// `joinTable` (of either side), else named after the side that owns it (`joinTableOwner`):
    /// `<table of its entity>_<relationship>`.
    public var joinTableName: String {
        let owner = joinTableOwner
        if let name = owner.joinTable ?? owner.inverse?.joinTable { return name }
        return "\(owner.entity.storageTableName)_\(owner.name)"
    }

    /// The join table's two columns seen from its owner (`joinTableOwner`): the one holding the
    /// owner's keys and the one holding its destinations' keys. Each is the model's `column` of the
    /// relationship whose destinations it holds, else `defaultName` of its entity; a default name
    /// alike the other column's becomes `source_…` or `destination_…`.
    public func joinColumnNames(
        defaultName: (EntityDescription) -> String
    ) -> (source: String, destination: String) {
        let owner = joinTableOwner
        let inverseColumn = owner.inverse === owner ? nil : owner.inverse?.columnName
        var source = inverseColumn ?? defaultName(owner.entity)
        var destination = owner.columnName ?? defaultName(owner.destinationEntity)
        if source.lowercased() == destination.lowercased() {
            if inverseColumn == nil { source = "source_" + source }
            if owner.columnName == nil { destination = "destination_" + destination }
        }
        return (source, destination)
    }

    /// Of this relationship and its inverse, the one whose join table links them (see `joinTableName`):
    /// the one that names the `joinTable` when only one does, else the one named first by entity,
    /// then name. The owner's own keys are the join table's first column.
    public var joinTableOwner: RelationshipDescription {
        guard let inverse, inverse !== self else { return self }
        if (joinTable == nil) != (inverse.joinTable == nil) { return joinTable != nil ? self : inverse }
        return (entity.name, name) <= (inverse.entity.name, inverse.name) ? self : inverse
    }

    /// Whether the relationship's destinations are kept in a join table (many-to-many, or to-many
    /// without an inverse).
    public var usesJoinTable: Bool { isToMany && !isTransient && !(inverse.map { !$0.isToMany } ?? false) }
}

/// `OrderLine` → `order_line`.
public func snakeCaseName(_ name: String) -> String {
    var text = ""
    for (offset, character) in name.enumerated() {
        if character.isUppercase, offset > 0 { text += "_" }
        text += character.lowercased()
    }
    return text
}
