import Drivers
import Foundation
import ObjectGraph

/// Compiles fetch requests to SQL: key paths through to-one relationships become LEFT JOINs, to-many
/// key paths with ANY/ALL/NONE become EXISTS subqueries, `@count` and `@sum`/`@avg`/`@min`/`@max`
/// become aggregate subqueries, `[c]`/`[d]` and the string operators go through `sluice_string` /
/// `sluice_fold`, decimals compare through `SLUICE_DECIMAL`.
///
/// Null semantics follow the in-memory evaluator: `==`/`!=` use `IS`/`IS NOT`; an ordering or string
/// test with a null side is false, also under NOT (comparisons that can yield NULL are wrapped in
/// `coalesce(…, 0)` wherever a NOT sits between them and their WHERE).
final class SQLiteQueryBuilder {
    let store: SQLiteStore
    var schema: SQLiteSchema { store.schema }
    private var arguments: [SQLiteValue] = []
    private var isExact = true
    private var aliasCount = 0
    private var tables: Set<String> = []

    init(store: SQLiteStore) { self.store = store }

    /// A table reference for FROM or JOIN, recorded in `tables`.
    func table(_ name: String, as alias: String) -> String {
        tables.insert(name)
        return "\(quote(name)) AS \(alias)"
    }

    /// A table alias with the LEFT JOINs its key paths needed.
    final class Scope {
        let alias: String
        let entity: EntityDescription
        var joins: [String: String] = [:]
        var joinClauses: [String] = []
        init(alias: String, entity: EntityDescription) {
            self.alias = alias
            self.entity = entity
        }
    }

    /// Where a predicate leaf sits: `positive` when an even number of NOTs is above it (so replacing
    /// it by TRUE widens the result), `nullSafe` when no NOT sits between it and its WHERE (so NULL
    /// acts as false).
    struct Position {
        var positive = true
        var nullSafe = true
        var negated: Position { Position(positive: !positive, nullSafe: false) }
        var insideExists: Position { Position(positive: positive, nullSafe: true) }

        /// A comparison that can yield NULL, wrapped in `coalesce(…, 0)` unless NULL acts as false here.
        func guarded(_ expression: String) -> String { nullSafe ? expression : "coalesce(\(expression), 0)" }
    }

    indirect enum Operand {
        case scalar(String, AttributeType)
        case identity(key: String, entityColumn: String?, entity: EntityDescription)
        case constant(AttributeValue)
        case objectID(ManagedObjectID)
        case list([Operand])
        case unsupported
    }

    // MARK: Entry point

    func select(_ request: StoreFetchRequest, columns: String, sorted: Bool = true) throws -> SQLiteQuery {
        let map = schema.map(for: request.entity)
        let root = Scope(alias: makeAlias(), entity: request.entity)
        var conditions: [String] = []
        if request.includesSubentities {
            if let kinds = map.kindFilter(root.alias) { conditions.append(kinds) }
        } else if map.sharesTable || map.kindNumbers.count > 1, let column = map.table.entityColumn {
            conditions.append("\(root.alias).\(quote(column)) = \(map.number)")
        }
        if let predicate = request.predicate { conditions.append(try compile(predicate, root, Position())) }
        var order: [String] = []
        if sorted {
            for descriptor in request.sortDescriptors {
                guard let term = try sortTerm(descriptor, root) else {
                    isExact = false
                    order = []
                    break
                }
                order.append(term)
            }
            order.append(map.table.key(root.alias))
        }
        var sql = "SELECT \(columns) FROM \(table(map.table.name, as: root.alias))"
        if !root.joinClauses.isEmpty { sql += " " + root.joinClauses.joined(separator: " ") }
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        if !order.isEmpty { sql += " ORDER BY " + order.joined(separator: ", ") }
        if isExact, sorted, request.fetchLimit > 0 || request.fetchOffset > 0 {
            sql += " LIMIT \(parameter(.integer(request.fetchLimit > 0 ? Int64(request.fetchLimit) : -1)))"
            sql += " OFFSET \(parameter(.integer(Int64(request.fetchOffset))))"
        }
        return SQLiteQuery(sql: sql, arguments: arguments, isExact: isExact, tables: tables)
    }

    func makeAlias() -> String {
        defer { aliasCount += 1 }
        return "t\(aliasCount)"
    }

    /// Appends a value and returns its numbered placeholder (numbering makes textual order irrelevant).
    func parameter(_ value: SQLiteValue) -> String {
        arguments.append(value)
        return "?\(arguments.count)"
    }

    /// A part the SQL cannot reproduce exactly: widen (TRUE where positive, FALSE under an odd number
    /// of NOTs) and let the store filter in memory.
    func inexact(_ position: Position) -> String {
        isExact = false
        return position.positive ? "1" : "0"
    }

    // MARK: Sorting

    private func sortTerm(_ descriptor: FetchSortDescriptor, _ scope: Scope) throws -> String? {
        let path = descriptor.keyPath.split(separator: ".").map(String.init)
        guard case .scalar(let sql, let type) = try resolve(path, scope), !sql.hasPrefix("("),
            store.coding.sortsInSQL(type)
        else { return nil }
        var collation = store.coding.collation(for: type)
        if type == .string, descriptor.caseInsensitive { collation = " COLLATE SLUICE_NOCASE" }
        return "\(sql)\(collation) \(descriptor.ascending ? "ASC" : "DESC")"
    }
}
