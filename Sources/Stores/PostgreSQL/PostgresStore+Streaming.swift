import Drivers
import Foundation
import ObjectGraph

/// Batch inserts that need no answer from the server: into a table the run's transaction made
/// (no other session sees it; every row in it came through this store), rows whose unique keys are
/// each higher than every key written to the table before cannot break a unique index — and no
/// other constraint is checked during the load (foreign keys wait for the commit, required values
/// for `isValid`). Such batches go into a COPY left open across batches
/// (`PostgresConnection.streamCopy`): the server inserts them while the run reads and maps the next
/// records. Exports usually list rows by their key, so a first load goes this way; keys out of
/// order, and tables saved to otherwise, take the checked way (a COPY per batch, under a savepoint).
extension PostgresStore {
    /// One value of a unique key, ordered so that "higher" implies "different" for the index:
    /// integers by value, text by Swift's string order (strings it orders apart differ byte for byte).
    enum KeyPart: Comparable {
        case integer(Int64)
        case text(String)
    }

    /// What is known of the unique keys of a table this run made: per unique index (the primary key
    /// first), its columns and the highest key written so far (`nil`: none yet).
    struct FreshTable {
        let uniqueColumns: [[String]]
        var highest: [[KeyPart]?]
    }

    /// Where a column of a unique key takes a batch insert's value from.
    private enum KeySource {
        case key
        case attribute(Int)
        case foreignKey(Int)
        /// A column the entity does not write: NULL, which no unique index compares.
        case absent
    }

    /// The tables of a new store made inside the run's transaction (`createSchema`).
    func noteFreshTables() {
        for table in schema.tables {
            let unique = schema.indexes.filter { $0.table == table.name && $0.isUnique }.map(\.columns)
            let columns = [[table.keyColumn]] + unique
            freshTables[table.name] = FreshTable(uniqueColumns: columns, highest: columns.map { _ in nil })
        }
    }

    /// A save writes rows of `entity` row by row: its table's keys are no longer followed.
    func forgetFreshness(of entityName: String) {
        guard !freshTables.isEmpty, let entity = model.entity(named: entityName) else { return }
        freshTables[schema.map(for: entity).table.name] = nil
    }

    /// Inserts the rows by the open COPY of their table when no unique key can clash (true), else
    /// nothing (false). The keys written are noted either way the caller goes.
    func streamIfUnclashable(_ rows: Rows, plan: WritePlan) throws -> Bool {
        let name = plan.table.name
        guard var table = freshTables[name] else { return false }
        guard let sources = keySources(of: table, plan: plan, entity: rows.request.entity) else {
            freshTables[name] = nil
            return false
        }
        var ascending = true
        for (index, columns) in sources.enumerated() {
            guard let (highest, inOrder) = highest(of: rows, columns, above: table.highest[index]) else {
                freshTables[name] = nil  // a key this store cannot order: every batch is checked
                return false
            }
            table.highest[index] = highest
            ascending = ascending && inOrder
        }
        freshTables[name] = table
        guard ascending else { return false }
        let sql = "COPY \(qualified(name)) (\(plan.columnList)) FROM STDIN (FORMAT binary)"
        try connection.streamCopy(sql, restartAfter: streamSeconds) { copy in
            for object in 0..<rows.count { try rows.write(object, to: copy, ordinal: false) }
        }
        return true
    }

    private func keySources(of table: FreshTable, plan: WritePlan, entity: EntityDescription) -> [[KeySource]]? {
        let map = schema.map(for: entity)
        var sources: [[KeySource]] = []
        for columns in table.uniqueColumns {
            var constraint: [KeySource] = []
            for column in columns {
                if column == plan.table.keyColumn {
                    constraint.append(.key)
                } else if let (index, type) = plan.attributes.first(where: {
                    map.attributeColumns[$0.index] == column
                }) {
                    guard [.integer16, .integer32, .integer64, .string].contains(type) else { return nil }
                    constraint.append(.attribute(index))
                } else if let (index, _) = plan.foreignKeys.first(where: {
                    map.foreignKeys[$0.index]?.column == column
                }) {
                    constraint.append(.foreignKey(index))
                } else if plan.columns.contains(column) {
                    return nil  // the entity number: not a key this store orders
                } else {
                    constraint.append(.absent)
                }
            }
            sources.append(constraint)
        }
        return sources
    }

    /// The highest key of the rows and `above`, and whether each row's key is higher than the one
    /// before it (rows with a NULL in the key are passed over: they clash with nothing). `nil` when a
    /// value cannot be ordered (a temporary reference, a value of another type).
    private func highest(
        of rows: Rows, _ columns: [KeySource], above: [KeyPart]?
    ) -> (highest: [KeyPart]?, ascending: Bool)? {
        let request = rows.request
        let width = request.entity.attributes.count, slots = request.entity.relationships.count
        enum Part {
            case value(KeyPart)
            case null
            case unordered
            var value: KeyPart? { if case .value(let value) = self { value } else { nil } }
        }
        func part(_ object: Int, _ source: KeySource) -> Part {
            func reference(_ reference: ManagedObjectID.Reference) -> Part {
                switch reference {
                case .integer(let value): return .value(.integer(value))
                case .string(let value): return .value(.text(value))
                case .temporary: return .unordered
                }
            }
            switch source {
            case .key: return reference(rows.keys[object])
            case .attribute(let index):
                switch request.attributeValues[object * width + index] {
                case .null: return .null
                case .integer(let value): return .value(.integer(value))
                case .string(let value): return .value(.text(value))
                default: return .unordered
                }
            case .foreignKey(let index):
                return request.toOneDestinations[object * slots + index].map { reference($0.reference) } ?? .null
            case .absent: return .null
            }
        }
        // The row holding the highest key so far (`nil`: `above`); compared part by part, no arrays.
        var best: Int?, ascending = true
        rows: for object in 0..<rows.count {
            for source in columns {
                switch part(object, source) {
                case .value: continue
                case .null: continue rows
                case .unordered: return nil
                }
            }
            guard best != nil || above != nil else {
                best = object
                continue
            }
            var higher = false
            for (position, source) in columns.enumerated() {
                let mine = part(object, source).value!
                let theirs = best.map { part($0, source).value! } ?? above![position]
                if mine != theirs {
                    higher = mine > theirs
                    break
                }
            }
            if higher { best = object } else { ascending = false }
        }
        return (best.map { row in columns.map { part(row, $0).value! } } ?? above, ascending)
    }
}
