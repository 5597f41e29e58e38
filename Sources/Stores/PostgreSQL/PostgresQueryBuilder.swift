import Drivers
import Foundation
import ObjectGraph

/// Compiles fetch requests to PostgreSQL: AND/OR/NOT; comparisons of an attribute with constants
/// (`==`, `!=`, orderings, IN, BETWEEN, BEGINSWITH/ENDSWITH/CONTAINS without options); a to-one
/// relationship against an object or nil; sorts on attributes. Strings compare and sort by code
/// point (`COLLATE "C"`), nulls sort first, as in memory. Whatever else a request holds is widened
/// (TRUE where an even number of NOTs is above it, FALSE under an odd number) and the store
/// applies the whole request to the rows in memory (`isExact` false), so the answer is the same.
final class PostgresQueryBuilder {
    let store: PostgresStore
    private(set) var parameters: [PostgresValue] = []
    private(set) var isExact = true

    init(store: PostgresStore) { self.store = store }

    /// Where a leaf sits: `positive` under an even number of NOTs, `nullSafe` when no NOT is above it
    /// (so a NULL result acts as false, as it does in memory).
    struct Position {
        var positive = true
        var nullSafe = true
        var negated: Position { Position(positive: !positive, nullSafe: false) }
        func guarded(_ sql: String) -> String { nullSafe ? sql : "coalesce(\(sql), FALSE)" }
    }

    /// `SELECT columns FROM table t0 WHERE … ORDER BY … LIMIT … OFFSET …`.
    func select(_ request: StoreFetchRequest, columns: String, sorted: Bool = true) throws -> String {
        let map = store.schema.map(for: request.entity)
        var conditions: [String] = []
        if request.includesSubentities {
            if let kinds = map.kindFilter("t0") { conditions.append(kinds) }
        } else if map.sharesTable || map.kindNumbers.count > 1, let column = map.table.entityColumn {
            conditions.append("t0.\(quote(column)) = \(map.number)")
        }
        if let predicate = request.predicate { conditions.append(try compile(predicate, map, Position())) }
        var order: [String] = []
        if sorted {
            for descriptor in request.sortDescriptors {
                guard let term = sortTerm(descriptor, map) else {
                    isExact = false
                    order = []
                    break
                }
                order.append(term)
            }
            order.append("t0.\(quote(map.table.keyColumn))")
        }
        var sql = "SELECT \(columns) FROM \(store.qualified(map.table.name)) t0"
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        if !order.isEmpty { sql += " ORDER BY " + order.joined(separator: ", ") }
        if isExact, sorted, request.fetchLimit > 0 || request.fetchOffset > 0 {
            if request.fetchLimit > 0 { sql += " LIMIT \(request.fetchLimit)" }
            sql += " OFFSET \(request.fetchOffset)"
        }
        return sql
    }

    private func sortTerm(_ descriptor: FetchSortDescriptor, _ map: SQLiteSchema.EntityMap) -> String? {
        guard !descriptor.keyPath.contains("."), let attribute = map.entity.attribute(named: descriptor.keyPath),
            let column = map.attributeColumns[attribute.index], attribute.type != .uuid, attribute.type != .uri,
            !(descriptor.caseInsensitive && attribute.type == .string)
        else { return nil }
        let collation = attribute.type == .string ? " COLLATE \"C\"" : ""
        return "t0.\(quote(column))\(collation) \(descriptor.ascending ? "ASC NULLS FIRST" : "DESC NULLS LAST")"
    }

    private func parameter(_ value: PostgresValue) -> String {
        parameters.append(value)
        return "$\(parameters.count)"
    }

    private func inexact(_ position: Position) -> String {
        isExact = false
        return position.positive ? "TRUE" : "FALSE"
    }

    // MARK: Predicates

    func compile(_ predicate: FetchPredicate, _ map: SQLiteSchema.EntityMap, _ position: Position) throws -> String {
        switch predicate {
        case .constant(let value): return value ? "TRUE" : "FALSE"
        case .and(let parts):
            return parts.isEmpty
                ? "TRUE" : "(" + (try parts.map { try compile($0, map, position) }).joined(separator: " AND ") + ")"
        case .or(let parts):
            return parts.isEmpty
                ? "FALSE" : "(" + (try parts.map { try compile($0, map, position) }).joined(separator: " OR ") + ")"
        case .not(let inner):
            return "NOT (" + (try compile(inner, map, position.negated)) + ")"
        case .comparison(let comparison):
            if case .keyPath(let path) = comparison.lhs { _ = try map.entity.checkKeyPath(path) }
            if case .keyPath(let path) = comparison.rhs { _ = try map.entity.checkKeyPath(path) }
            return comparisonSQL(comparison, map, position) ?? inexact(position)
        }
    }

    /// The comparison in SQL, or `nil` when it is not one this builder writes.
    private func comparisonSQL(
        _ comparison: PredicateComparison, _ map: SQLiteSchema.EntityMap, _ position: Position
    ) -> String? {
        guard comparison.modifier == .direct, comparison.options.isEmpty, case .keyPath(let path) = comparison.lhs,
            path.count == 1
        else { return nil }
        if let relationship = map.entity.relationship(named: path[0]) {
            return relationshipSQL(relationship, comparison, map, position)
        }
        guard let attribute = map.entity.attribute(named: path[0]),
            let column = map.attributeColumns[attribute.index].map({ "t0.\(quote($0))" })
        else { return nil }
        let type = attribute.type
        func value(_ expression: ObjectGraph.PredicateExpression) -> PostgresValue? {
            guard case .constant(let constant) = expression else { return nil }
            return Self.parameterValue(constant, for: type)
        }
        let ordered = type == .string ? "\(column) COLLATE \"C\"" : column
        switch comparison.op {
        case .equal, .notEqual:
            if case .constant(.null) = comparison.rhs {
                return "\(column) IS \(comparison.op == .equal ? "" : "NOT ")NULL"
            }
            guard let value = value(comparison.rhs) else { return nil }
            if comparison.op == .notEqual { return "\(column) IS DISTINCT FROM \(parameter(value))" }
            return position.guarded("\(column) = \(parameter(value))")
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard
                [.integer16, .integer32, .integer64, .double, .float, .decimal, .date, .calendarDate, .string]
                    .contains(type), let value = value(comparison.rhs)
            else { return nil }
            return position.guarded("\(ordered) \(comparison.op.rawValue) \(parameter(value))")
        case .in:
            guard case .aggregate(let items) = comparison.rhs, !items.isEmpty else { return nil }
            let values = items.compactMap(value)
            guard values.count == items.count else { return nil }
            return position.guarded("\(column) IN (\(values.map(parameter).joined(separator: ", ")))")
        case .between:
            guard type != .string, type != .boolean, case .aggregate(let items) = comparison.rhs, items.count == 2,
                let low = value(items[0]), let high = value(items[1])
            else { return nil }
            return position.guarded("\(column) BETWEEN \(parameter(low)) AND \(parameter(high))")
        case .beginsWith, .endsWith, .contains:
            guard type == .string, case .constant(.string(let text)) = comparison.rhs, !text.isEmpty else { return nil }
            let needle = parameter(.text(text))
            switch comparison.op {
            case .beginsWith: return position.guarded("starts_with(\(column), \(needle))")
            case .endsWith: return position.guarded("right(\(column), length(\(needle))) = \(needle)")
            default: return position.guarded("strpos(\(column), \(needle)) > 0")
            }
        case .like, .matches:
            return nil
        }
    }

    /// A to-one relationship compared with an object of this store or with nil.
    private func relationshipSQL(
        _ relationship: RelationshipDescription, _ comparison: PredicateComparison, _ map: SQLiteSchema.EntityMap,
        _ position: Position
    ) -> String? {
        guard let key = map.foreignKeys[relationship.index], key.entityColumn == nil,
            comparison.op == .equal || comparison.op == .notEqual
        else { return nil }
        let column = "t0.\(quote(key.column))"
        switch comparison.rhs {
        case .constant(.null): return "\(column) IS \(comparison.op == .equal ? "" : "NOT ")NULL"
        case .objectID(let id):
            guard let reference = store.primaryKey(of: id) else { return nil }
            let value = parameter(PostgresCoding.key(reference))
            if comparison.op == .notEqual { return "\(column) IS DISTINCT FROM \(value)" }
            return position.guarded("\(column) = \(value)")
        default: return nil
        }
    }

    /// A constant as a parameter compared with a column of `type`, when the comparison means the
    /// same in SQL as in memory (numbers of a kind the column's type compares exactly, strings, …).
    static func parameterValue(_ constant: AttributeValue, for type: AttributeType) -> PostgresValue? {
        switch (constant, type) {
        case (.integer(let v), .integer16), (.integer(let v), .integer32), (.integer(let v), .integer64):
            return .bigint(v)
        case (.integer(let v), .double), (.integer(let v), .float):
            guard v.magnitude < 1 << 53 else { return nil }
            return try? PostgresCoding.encode(.double(Double(v)), as: .double)
        case (.double(let v), .double), (.double(let v), .float):
            guard !v.isNaN else { return nil }
            return try? PostgresCoding.encode(.double(v), as: .double)
        case (.integer(let v), .decimal): return try? PostgresCoding.encode(.decimal(Decimal(v)), as: .decimal)
        case (.decimal, .decimal): return try? PostgresCoding.encode(constant, as: .decimal)
        case (.date, .date), (.date, .calendarDate): return try? PostgresCoding.encode(constant, as: .date)
        case (.string, .string), (.boolean, .boolean), (.uuid, .uuid):
            return try? PostgresCoding.encode(constant, as: type)
        case (.uri(let url), .uri): return .text(url.absoluteString)
        default: return nil
        }
    }
}
