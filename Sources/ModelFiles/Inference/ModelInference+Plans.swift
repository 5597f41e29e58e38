import ObjectGraph
import Readers

/// How `sluice import` fills the proposed entities from their inputs: the plans it makes its pipeline of.
extension ModelInference {
    /// How each proposed entity is filled from its input, for `sluice import`: the input it came
    /// from (file, table or record kind), each attribute's column, each to-one relationship's key
    /// column and the destination attribute it matches, the entity's key, and for nested records
    /// the relationship to the parent.
    package struct EntityPlan {
        package var name: String
        package var origin: String
        /// The table the input names (a SQL table, a file's base name).
        package var table = ""
        package var fields: [(attribute: String, column: String)]
        package var lookups: [(relationship: String, destination: String, destinationAttribute: String, column: String)]
        package var key: [String]
        /// For nested records: the parent entity's index and the relationship to it.
        package var parent: (entity: Int, relationship: String)?
        /// For a pure link table: the many-to-many relationship its rows fill — the owner entity
        /// found by its key attribute from a column, the relationship, its destination found the same way.
        package var links: LinksPlan?
        /// By column: the date patterns its values are read with, when not ISO 8601 alone.
        package var datePatterns: [String: [String]] = [:]
    }

    /// How the rows of a pure link table fill its many-to-many relationship.
    package struct LinksPlan {
        package var owner: String
        package var ownerKey: (attribute: String, column: String)
        package var relationship: String
        package var destination: String
        package var destinationKey: (attribute: String, column: String)

        package init(
            owner: String, ownerKey: (attribute: String, column: String), relationship: String, destination: String,
            destinationKey: (attribute: String, column: String)
        ) {
            self.owner = owner
            self.ownerKey = ownerKey
            self.relationship = relationship
            self.destination = destination
            self.destinationKey = destinationKey
        }
    }

    package func plans() -> [EntityPlan] {
        let (links, manyToMany) = relationships()
        func keyAttribute(_ link: Link) -> String {
            Self.attributeName(link.referencedColumn ?? entities[link.to].primaryKey.first ?? "id")
        }
        return entities.enumerated().map { index, entity in
            let linked = links.filter { $0.from == index }
            let linkedColumns = Set(linked.map(\.column))
            let lookups = linked.map { link -> (String, String, String, String) in
                let destination = entities[link.to]
                let column = link.referencedColumn ?? destination.primaryKey.first ?? "id"
                return (
                    Self.relationshipName(forColumn: link.column), destination.name, Self.attributeName(column),
                    link.column
                )
            }
            if let link = manyToMany.first(where: { $0.table == index }) {
                // The model has no entity for the table: its rows are links.
                return EntityPlan(
                    name: entity.name, origin: entity.origin, table: entity.table, fields: [], lookups: [], key: [],
                    links: LinksPlan(
                        owner: entities[link.owner.to].name, ownerKey: (keyAttribute(link.owner), link.owner.column),
                        relationship: link.name, destination: entities[link.destination.to].name,
                        destinationKey: (keyAttribute(link.destination), link.destination.column)))
            }
            // A key column that is a foreign key is the key's relationship (`enrollment`: [student, course]).
            var key = self.key(of: entity).map { column in
                linkedColumns.contains(column) ? Self.relationshipName(forColumn: column) : Self.attributeName(column)
            }
            // As the model file has it: a key found in the values alone that is one relationship is none.
            if entity.primaryKey.isEmpty, entity.uniqueKeys.isEmpty, key.count == 1,
                let column = self.key(of: entity).first, linkedColumns.contains(column)
            {
                key = []
            }
            let rowKey = self.rowKey(of: entity)
            if let rowKey { key = [rowKey] }
            var plan = EntityPlan(
                name: entity.name, origin: entity.origin, table: entity.table,
                fields: (rowKey.map { [($0, Record.ordinalFieldName)] } ?? [])
                    + entity.columns.filter { !linkedColumns.contains($0.source) }.map {
                        (Self.attributeName($0.source), $0.source)
                    },
                lookups: lookups, key: key,
                parent: entity.parent.map { ($0, Self.attributeName(entities[$0].name)) })
            for column in entity.columns where column.type.isDate {
                if let patterns = column.datePatterns, !patterns.isEmpty { plan.datePatterns[column.source] = patterns }
            }
            return plan
        }
    }
}
