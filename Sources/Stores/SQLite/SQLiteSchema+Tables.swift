import Foundation
import ObjectGraph

/// The parts of a schema: tables with their columns, foreign keys, join tables, the storage of
/// to-many relationships, indexes, and each entity's map onto them.
extension SQLiteSchema {
    struct Column {
        var name: String
        var declaration: String
    }

    struct Index {
        var name: String
        var table: String
        var columns: [String]
        var isUnique: Bool
        var sql: String {
            "CREATE \(isUnique ? "UNIQUE " : "")INDEX IF NOT EXISTS \(quote(name)) ON \(quote(table)) "
                + "(\(columns.map(quote).joined(separator: ", ")))"
        }
    }

    final class Table {
        let name: String
        let root: EntityDescription
        /// The primary key column: `_pk`, an attribute's column, or a key column of its own.
        let keyColumn: String
        /// The attribute whose column is `keyColumn` (plain layout, entities keyed by one integer or
        /// text attribute).
        let keyAttribute: AttributeDescription?
        /// The declared type of `keyColumn`, and of the columns referring to it: `INTEGER`, or
        /// `TEXT` when the rows are kept under a text attribute.
        var keyType: String { keyAttribute?.type == .string ? "TEXT" : "INTEGER" }
        /// The column holding each row's entity number (`nil`: every row is of `root`).
        let entityColumn: String?
        /// The column holding each row's version (`nil`: versions are content hashes).
        let versionColumn: String?
        /// The other columns; a row read with `selectList` has column `i` at `3 + i`.
        var columns: [Column] = []
        /// The entity number of `root`.
        let rootNumber: Int64

        init(
            name: String, root: EntityDescription, rootNumber: Int64, keyColumn: String,
            keyAttribute: AttributeDescription?, entityColumn: String?, versionColumn: String?
        ) {
            self.name = name
            self.root = root
            self.rootNumber = rootNumber
            self.keyColumn = keyColumn
            self.keyAttribute = keyAttribute
            self.entityColumn = entityColumn
            self.versionColumn = versionColumn
        }

        /// The names no other column may take.
        var reservedNames: [String] { [keyColumn] + [entityColumn, versionColumn].compactMap { $0 } }

        /// Adds a column named `name` (or, when taken, `<owner>_<name>`, `<owner>_<name>_2`, …).
        func add(_ name: String, _ declaration: String, owner: EntityDescription) -> String {
            func isTaken(_ name: String) -> Bool {
                reservedNames.contains { $0.caseInsensitiveCompare(name) == .orderedSame }
                    || columns.contains { $0.name.caseInsensitiveCompare(name) == .orderedSame }
            }
            var unique = name
            // The graph layout keeps `_`-names for its own columns (stores written before the
            // plain layout named columns this way).
            if isTaken(unique) || (keyColumn == "_pk" && name.hasPrefix("_")) { unique = "\(owner.name)_\(name)" }
            var n = 2
            while isTaken(unique) {
                unique = "\(owner.name)_\(name)_\(n)"
                n += 1
            }
            columns.append(Column(name: unique, declaration: declaration))
            return unique
        }

        /// Where a column sits in a row read with `selectList` (the key column at 0).
        func position(of column: String) -> Int {
            column == keyColumn ? 0 : 3 + columns.firstIndex { $0.name == column }!
        }

        /// The unqualified select list, built once (row loads by key use it per fault).
        lazy var plainSelectList: String = selectList()

        /// Key, entity number, version, then every column, qualified with `alias` when given; the
        /// entity number and version are constants where the table has no column for them.
        func selectList(alias: String? = nil) -> String {
            let prefix = alias.map { $0 + "." } ?? ""
            let head = [
                prefix + quote(keyColumn), entityColumn.map { prefix + quote($0) } ?? String(rootNumber),
                versionColumn.map { prefix + quote($0) } ?? "0",
            ]
            return (head + columns.map { prefix + quote($0.name) }).joined(separator: ", ")
        }

        /// Key and entity number of each row (`fetchObjectIDs`, key lookups).
        func identityList(alias: String) -> String {
            "\(alias).\(quote(keyColumn)), " + (entityColumn.map { "\(alias).\(quote($0))" } ?? String(rootNumber))
        }

        /// `alias.key`.
        func key(_ alias: String) -> String { "\(alias).\(quote(keyColumn))" }
    }

    /// Where a to-one relationship lives: its foreign-key column and, when the destination has
    /// sub-entities, the column holding the destination's entity number.
    struct ForeignKey {
        var column: String
        var entityColumn: String?
    }

    final class JoinTable {
        let name: String
        /// The relationship whose destinations are in `destinationColumn` (its inverse, if any, reads the table
        /// the other way).
        let owner: RelationshipDescription
        let sourceColumn: String
        let destinationColumn: String
        var sourceEntityColumn: String?
        var destinationEntityColumn: String?
        var sourceOrderColumn: String?
        var destinationOrderColumn: String?
        init(name: String, owner: RelationshipDescription, sourceColumn: String, destinationColumn: String) {
            self.name = name
            self.owner = owner
            self.sourceColumn = sourceColumn
            self.destinationColumn = destinationColumn
        }

        /// The table's columns seen from one relationship: `near` holds the reading object's key,
        /// `far` its destinations'; entity and order columns follow the same sides.
        struct Side {
            var near: String, far: String
            var nearEntity: String?, farEntity: String?
            var order: String?
        }

        func side(isSource: Bool) -> Side {
            isSource
                ? Side(
                    near: sourceColumn, far: destinationColumn, nearEntity: sourceEntityColumn,
                    farEntity: destinationEntityColumn, order: sourceOrderColumn)
                : Side(
                    near: destinationColumn, far: sourceColumn, nearEntity: destinationEntityColumn,
                    farEntity: sourceEntityColumn, order: destinationOrderColumn)
        }
    }

    /// How one to-many relationship is stored.
    enum ToMany {
        /// The inverse is to-one: destinations are the rows of `table` whose `column` holds the owner's key.
        case foreignKey(table: Table, key: ForeignKey, orderColumn: String?)
        /// Links in a join table; `isSource` tells which side of it the relationship reads from.
        case joinTable(JoinTable, isSource: Bool)
    }

    final class EntityMap {
        let entity: EntityDescription
        let number: Int64
        let table: Table
        /// By attribute index: the column, or `nil` for transient attributes.
        var attributeColumns: [String?] = []
        /// By relationship index: the foreign key of to-one relationships.
        var foreignKeys: [ForeignKey?] = []
        /// By relationship index: the storage of to-many relationships.
        var toMany: [ToMany?] = []
        /// Entity numbers of this entity and its descendants.
        var kindNumbers: [Int64] = []
        /// Whether other entities share the table (fetches must filter on the entity column).
        var sharesTable = false
        init(entity: EntityDescription, number: Int64, table: Table) {
            self.entity = entity
            self.number = number
            self.table = table
        }

        /// `alias.<entity column> IN (…)` when other entities share the table, else `nil`.
        func kindFilter(_ alias: String) -> String? {
            guard sharesTable, let column = table.entityColumn else { return nil }
            return "\(alias).\(quote(column)) IN (\(kindNumbers.map(String.init).joined(separator: ", ")))"
        }
    }
}
