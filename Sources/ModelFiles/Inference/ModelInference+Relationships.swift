import Foundation
import ObjectGraph
import Readers

/// The relationships a proposal makes: to-ones of foreign keys (declared, or `<x>_id` columns),
/// their to-many inverses, and many-to-many relationships of pure link tables.
extension ModelInference {
    /// A to-one relationship the proposal makes of a key column: from entity, column, to entity.
    package struct Link {
        package var from: Int
        package var column: String
        package var to: Int
        package var referencedColumn: String?
    }

    /// A pure link table (two foreign keys forming its key, no other column) made a many-to-many
    /// relationship: `owner.column` links to `owner.to`'s objects through the table, and
    /// `destination.column` back.
    package struct ManyToMany {
        /// The link table's entity (which the model does not have).
        package var table: Int
        /// The link of the table's first column: its entity owns `name`.
        package var owner: Link
        package var destination: Link
        /// The relationship on the owner's entity (to the destination's) and its inverse.
        package var name: String
        package var inverse: String
    }

    /// To-one links between entities, and pure link tables as many-to-many relationships (their
    /// links are not to-ones of an entity then).
    func relationships() -> (links: [Link], manyToMany: [ManyToMany]) {
        var links = links(), manyToMany: [ManyToMany] = []
        for (index, entity) in entities.enumerated() where entity.isTable && entity.columns.count == 2 {
            let own = links.filter { $0.from == index }
            let columns = entity.columns.map(\.source)
            guard own.count == 2, Set(own.map(\.column)) == Set(columns),
                Set(entity.primaryKey) == Set(columns) || entity.uniqueKeys.contains(where: { Set($0) == Set(columns) })
            else { continue }
            let first = own.first { $0.column == columns[0] }!, second = own.first { $0.column == columns[1] }!
            manyToMany.append(ManyToMany(table: index, owner: first, destination: second, name: "", inverse: ""))
        }
        let linkTables = Set(manyToMany.map(\.table))
        links.removeAll { linkTables.contains($0.from) }
        // Names: after the column in the plural (`author_id` → `authors`, `TrackId` → `tracks`), else
        // the destination entity in the plural, else after the table too — never a name the entity
        // has already.
        var taken = entities.indices.map { propertyNames(of: $0, links: links) }
        for index in manyToMany.indices {
            let link = manyToMany[index]
            func name(on entity: Int, to other: Link) -> String {
                var stem = other.column
                for suffix in ["_id", "Id", "ID"] where stem.hasSuffix(suffix) && stem.count > suffix.count {
                    stem.removeLast(suffix.count)
                }
                let candidates = [
                    Self.plural(Self.attributeName(stem)),
                    Self.inverseName(of: entities[other.to].name),
                    Self.inverseName(of: entities[other.to].name) + "Via" + entities[link.table].name,
                ]
                let name =
                    candidates.first { !taken[entity].contains($0.lowercased()) }
                    ?? candidates[2] + "\(index)"
                taken[entity].insert(name.lowercased())
                return name
            }
            manyToMany[index].name = name(on: link.owner.to, to: link.destination)
            manyToMany[index].inverse = name(on: link.destination.to, to: link.owner)
        }
        return (links, manyToMany)
    }

    /// The (lower-cased) names the model file gives the properties of entity `index`, but
    /// many-to-many relationships.
    func propertyNames(of index: Int, links: [Link]) -> Set<String> {
        let entity = entities[index]
        let linked = Set(links.filter { $0.from == index }.map(\.column))
        var names = entity.columns.filter { !linked.contains($0.source) }.map { Self.attributeName($0.source) }
        if let rowKey = rowKey(of: entity) { names.append(rowKey) }
        names += links.filter { $0.from == index }.map { Self.relationshipName(forColumn: $0.column) }
        names += links.filter { $0.to == index }.map { Self.inverseName(of: $0, among: links, entities: entities) }
        if let parent = entity.parent { names.append(Self.attributeName(entities[parent].name)) }
        names += entities.filter { $0.parent == index }.map { Self.inverseName(of: $0.name) }
        return Set(names.map { $0.lowercased() })
    }

    /// Relationships: declared foreign keys, else `<x>_id` columns whose entity exists with a unique id.
    func links() -> [Link] {
        var links: [Link] = []
        for (index, entity) in entities.enumerated() {
            for key in entity.foreignKeys where key.columns.count == 1 {
                if let target = entities.firstIndex(where: { $0.origin == key.table }) {
                    links.append(
                        Link(
                            from: index, column: key.columns[0], to: target,
                            referencedColumn: key.referencedColumns.first))
                }
            }
            guard entity.foreignKeys.isEmpty else { continue }
            let ownKey = key(of: entity)
            for column in entity.columns where column.source.lowercased().hasSuffix("_id") && column.values > 0 {
                let stem = Self.entityName(String(column.source.dropLast(3)))
                guard
                    let target = entities.indices.first(where: { entities[$0].name == stem }),
                    target != index || ownKey != [column.source]
                else { continue }
                // The destination's key: one column, of the same type.
                let targetKey = key(of: entities[target])
                guard targetKey.count == 1,
                    let keyColumn = entities[target].columns.first(where: { $0.source == targetKey[0] }),
                    keyColumn.type == column.type
                else { continue }
                // A database that declares no reference is consistent as it is: a column naming one
                // only by its name is one when every value is a key of the destination (else it stays
                // a plain column, and no row is rejected for a value the destination lacks).
                if let values = column.references, let keys = keyColumn.distinct,
                    !values.allSatisfy(keys.contains)
                {
                    continue
                }
                links.append(Link(from: index, column: column.source, to: target, referencedColumn: targetKey[0]))
            }
        }
        return links
    }
}
