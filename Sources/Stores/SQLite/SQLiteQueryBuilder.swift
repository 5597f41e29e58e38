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
    private let store: SQLiteStore
    private var schema: SQLiteSchema { store.schema }
    private var arguments: [SQLiteValue] = []
    private var isExact = true
    private var aliasCount = 0
    private var tables: Set<String> = []

    init(store: SQLiteStore) { self.store = store }

    /// A table reference for FROM or JOIN, recorded in `tables`.
    private func table(_ name: String, as alias: String) -> String {
        tables.insert(name)
        return "\(quote(name)) AS \(alias)"
    }

    /// A table alias with the LEFT JOINs its key paths needed.
    private final class Scope {
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
    private struct Position {
        var positive = true
        var nullSafe = true
        var negated: Position { Position(positive: !positive, nullSafe: false) }
        var insideExists: Position { Position(positive: positive, nullSafe: true) }
    }

    private indirect enum Operand {
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

    private func makeAlias() -> String {
        defer { aliasCount += 1 }
        return "t\(aliasCount)"
    }

    /// Appends a value and returns its numbered placeholder (numbering makes textual order irrelevant).
    private func parameter(_ value: SQLiteValue) -> String {
        arguments.append(value)
        return "?\(arguments.count)"
    }

    /// A part the SQL cannot reproduce exactly: widen (TRUE where positive, FALSE under an odd number
    /// of NOTs) and let the store filter in memory.
    private func inexact(_ position: Position) -> String {
        isExact = false
        return position.positive ? "1" : "0"
    }

    // MARK: Predicates

    private func compile(_ predicate: FetchPredicate, _ scope: Scope, _ position: Position) throws -> String {
        switch predicate {
        case .constant(let value): return value ? "1" : "0"
        case .and(let parts):
            return parts.isEmpty
                ? "1" : "(" + (try parts.map { try compile($0, scope, position) }).joined(separator: " AND ") + ")"
        case .or(let parts):
            return parts.isEmpty
                ? "0" : "(" + (try parts.map { try compile($0, scope, position) }).joined(separator: " OR ") + ")"
        case .not(let inner):
            return "NOT (" + (try compile(inner, scope, position.negated)) + ")"
        case .comparison(let comparison):
            return try compile(comparison, scope, position)
        }
    }

    private func isCollection(_ expression: ObjectGraph.PredicateExpression, _ entity: EntityDescription) throws -> Bool
    {
        switch expression {
        case .keyPath(let path): return try entity.checkKeyPath(path)
        case .aggregate: return true
        case .variable(let name):
            throw FetchRequestError(
                "variable $\(name) has no value: call substituting(_:) on the predicate before fetching")
        default: return false
        }
    }

    private func compile(_ comparison: PredicateComparison, _ scope: Scope, _ position: Position) throws -> String {
        let lhsIsCollection = try isCollection(comparison.lhs, scope.entity)
        let rhsIsCollection = try isCollection(comparison.rhs, scope.entity)
        if lhsIsCollection {
            guard case .keyPath(let path) = comparison.lhs else { return inexact(position) }
            var modifier = comparison.modifier, op = comparison.op
            if modifier == .direct {
                modifier = .any
                if op == .contains { op = .equal }
            }
            return try quantified(modifier, path, scope, position) { element, elementPosition in
                try self.test(element, op, self.operand(comparison.rhs, scope), comparison.options, elementPosition)
            }
        }
        if rhsIsCollection, comparison.op == .in, case .keyPath(let path) = comparison.rhs {
            // `value IN toManyPath`: some element equals the value.
            let lhs = try operand(comparison.lhs, scope)
            return try quantified(.any, path, scope, position) { element, elementPosition in
                try self.test(element, .equal, lhs, comparison.options, elementPosition)
            }
        }
        let lhs = try operand(comparison.lhs, scope), rhs = try operand(comparison.rhs, scope)
        if comparison.modifier == .none {
            return "NOT (" + (try test(lhs, comparison.op, rhs, comparison.options, position.negated)) + ")"
        }
        return try test(lhs, comparison.op, rhs, comparison.options, position)
    }

    /// ANY/ALL/NONE over the elements a to-many key path reaches (nested to-many paths flatten, as in
    /// memory). `elementTest` gets each element as an operand in the innermost subquery.
    private func quantified(
        _ modifier: PredicateComparison.Modifier, _ path: [String], _ scope: Scope, _ position: Position,
        _ elementTest: @escaping (Operand, Position) throws -> String
    ) throws -> String {
        switch modifier {
        case .all:
            return "NOT "
                + (try exists(path, scope, position.negated.insideExists) { element, p in
                    "NOT (" + (try elementTest(element, p.negated)) + ")"
                })
        case .none:
            return "NOT " + (try exists(path, scope, position.negated.insideExists, elementTest))
        case .any, .direct:
            return try exists(path, scope, position.insideExists, elementTest)
        }
    }

    private func exists(
        _ path: [String], _ scope: Scope, _ position: Position,
        _ elementTest: @escaping (Operand, Position) throws -> String
    ) throws -> String {
        // Walk to-one relationships to the first to-many one.
        var alias = scope.alias, entity = scope.entity, index = 0
        while index < path.count {
            guard let relationship = entity.relationship(named: path[index]) else { return inexact(position) }
            if relationship.isToMany { break }
            alias = join(relationship, from: alias, in: scope)
            entity = relationship.destinationEntity
            index += 1
        }
        guard index < path.count, let relationship = entity.relationship(named: path[index]) else {
            return inexact(position)
        }
        let inner = Scope(alias: makeAlias(), entity: relationship.destinationEntity)
        let (from, link) = self.link(relationship, owner: alias, destination: inner.alias)
        let rest = Array(path[(index + 1)...])
        let condition: String
        if try !rest.isEmpty && inner.entity.checkKeyPath(rest) {
            condition = try exists(rest, inner, position, elementTest)
        } else {
            let element = rest.isEmpty ? identity(of: inner) : try resolve(rest, inner)
            condition = try elementTest(element, position)
        }
        let joins = inner.joinClauses.isEmpty ? "" : " " + inner.joinClauses.joined(separator: " ")
        return "EXISTS (SELECT 1 FROM \(from)\(joins) WHERE \(link) AND \(condition))"
    }

    /// FROM clause and link condition reaching the destinations of `relationship` from the row `owner`.
    private func link(
        _ relationship: RelationshipDescription, owner: String, destination: String
    ) -> (from: String, condition: String) {
        let ownerKey = schema.map(for: relationship.entity).table.key(owner)
        switch schema.map(for: relationship.entity).toMany[relationship.index]! {
        case .foreignKey(let table, let key, _):
            return (self.table(table.name, as: destination), "\(destination).\(quote(key.column)) = \(ownerKey)")
        case .joinTable(let join, let isSource):
            let side = join.side(isSource: isSource)
            let linkAlias = makeAlias()
            let target = schema.map(for: relationship.destinationEntity).table
            return (
                "\(table(join.name, as: linkAlias)) JOIN \(table(target.name, as: destination)) ON "
                    + "\(target.key(destination)) = \(linkAlias).\(quote(side.far))",
                "\(linkAlias).\(quote(side.near)) = \(ownerKey)"
            )
        }
    }

    /// The alias of the row a to-one relationship of `alias` points to, joining it once per scope.
    private func join(_ relationship: RelationshipDescription, from alias: String, in scope: Scope) -> String {
        let key = "\(alias).\(relationship.name)"
        if let existing = scope.joins[key] { return existing }
        let target = makeAlias()
        let column = schema.map(for: relationship.entity).foreignKeys[relationship.index]!.column
        let destination = schema.map(for: relationship.destinationEntity).table
        scope.joinClauses.append(
            "LEFT JOIN \(table(destination.name, as: target)) ON \(destination.key(target)) = \(alias).\(quote(column))"
        )
        scope.joins[key] = target
        return target
    }

    // MARK: Operands

    private func operand(_ expression: ObjectGraph.PredicateExpression, _ scope: Scope) throws -> Operand {
        switch expression {
        case .keyPath(let path): return try resolve(path, scope)
        case .evaluatedObject:
            return identity(of: scope)
        case .constant(let value): return .constant(value)
        case .objectID(let id): return .objectID(id)
        case .aggregate(let items): return .list(try items.map { try operand($0, scope) })
        case .variable(let name):
            throw FetchRequestError(
                "variable $\(name) has no value: call substituting(_:) on the predicate before fetching")
        }
    }

    /// The row of `scope` itself as an operand: its key and, where the table has one, entity column.
    private func identity(of scope: Scope) -> Operand {
        let table = schema.map(for: scope.entity).table
        return .identity(
            key: table.key(scope.alias), entityColumn: table.entityColumn.map { "\(scope.alias).\(quote($0))" },
            entity: scope.entity)
    }

    /// A key path that yields one value per row: attributes through to-one joins, to-one
    /// relationships as identities, `@count` and aggregates of a to-many relationship.
    private func resolve(_ path: [String], _ scope: Scope) throws -> Operand {
        var alias = scope.alias, entity = scope.entity, index = 0
        while index < path.count {
            let key = path[index], isLast = index == path.count - 1
            let map = schema.map(for: entity)
            if let attribute = entity.attribute(named: key) {
                guard isLast else { return .unsupported }
                guard let column = map.attributeColumns[attribute.index] else { return .scalar("NULL", attribute.type) }
                return .scalar("\(alias).\(quote(column))", attribute.type)
            }
            guard let relationship = entity.relationship(named: key) else { return .unsupported }
            if !relationship.isToMany {
                let foreignKey = map.foreignKeys[relationship.index]!
                if isLast {
                    return .identity(
                        key: "\(alias).\(quote(foreignKey.column))",
                        entityColumn: foreignKey.entityColumn.map { "\(alias).\(quote($0))" },
                        entity: relationship.destinationEntity)
                }
                alias = join(relationship, from: alias, in: scope)
                entity = relationship.destinationEntity
                index += 1
                continue
            }
            // A to-many relationship gives one value only through @count or an aggregate.
            let inner = makeAlias()
            let (from, link) = self.link(relationship, owner: alias, destination: inner)
            let rest = path[(index + 1)...]
            if rest.count == 1, rest.first == "@count" {
                return .scalar("(SELECT count(*) FROM \(from) WHERE \(link))", .integer64)
            }
            guard rest.count == 2, let attribute = relationship.destinationEntity.attribute(named: path[index + 2]),
                let column = schema.map(for: relationship.destinationEntity).attributeColumns[attribute.index]
            else { return .unsupported }
            let value = "\(inner).\(quote(column))"
            let isInteger = [.integer16, .integer32, .integer64, .boolean].contains(attribute.type)
            let isReal = attribute.type == .double || attribute.type == .float
            let aggregate: (String, AttributeType)
            switch path[index + 1] {
            case "@sum" where isInteger: aggregate = ("coalesce(sum(\(value)), 0)", .integer64)
            case "@sum" where isReal: aggregate = ("total(\(value))", .double)
            case "@avg" where isInteger || isReal: aggregate = ("avg(\(value))", .double)
            case "@min", "@max":
                guard store.coding.sortsInSQL(attribute.type) else { return .unsupported }
                let collation = store.coding.collation(for: attribute.type)
                aggregate = ("\(path[index + 1] == "@min" ? "min" : "max")(\(value)\(collation))", attribute.type)
            default: return .unsupported
            }
            return .scalar("(SELECT \(aggregate.0) FROM \(from) WHERE \(link))", aggregate.1)
        }
        return .unsupported
    }

    // MARK: Tests

    private static let stringOperators: Set<PredicateComparison.Operator> = [
        .beginsWith, .endsWith, .contains, .like, .matches,
    ]

    private func test(
        _ lhs: Operand, _ op: PredicateComparison.Operator, _ rhs: Operand,
        _ options: PredicateComparison.Options, _ position: Position
    ) throws -> String {
        switch (lhs, rhs) {
        case (.unsupported, _), (_, .unsupported):
            return inexact(position)
        case (.identity(let key, let entityColumn, let entity), _):
            return identityTest(key, entityColumn, entity, op, rhs, position)
        case (_, .identity(let key, let entityColumn, let entity)) where op == .equal || op == .notEqual:
            return identityTest(key, entityColumn, entity, op, lhs, position)
        case (.scalar(let sql, let type), _):
            return scalarTest(sql, type, op, rhs, options, position, reversed: false)
        case (.constant, .scalar(let sql, let type)):
            return scalarTest(sql, type, op, lhs, options, position, reversed: true)
        default:
            return inexact(position)
        }
    }

    private func identityTest(
        _ key: String, _ entityColumn: String?, _ entity: EntityDescription,
        _ op: PredicateComparison.Operator, _ other: Operand, _ position: Position
    ) -> String {
        func matches(_ operand: Operand) -> String? {
            switch operand {
            case .constant(.null): return "\(key) IS NULL"
            case .objectID(let id):
                guard let primaryKey = store.primaryKey(of: id), let target = schema.model.entity(named: id.entityName),
                    target.isKind(of: entity)
                else { return "0" }
                if let entityColumn {
                    return
                        "(\(key) IS \(parameter(primaryKey.sqlValue)) AND \(entityColumn) IS "
                        + "\(schema.map(for: target).number))"
                }
                return target === entity ? "\(key) IS \(parameter(primaryKey.sqlValue))" : "0"
            case .constant: return "0"
            default: return nil
            }
        }
        switch (op, other) {
        case (.equal, _):
            return matches(other) ?? inexact(position)
        case (.notEqual, _):
            return matches(other).map { "NOT \($0)" } ?? inexact(position)
        case (.in, .list(let items)):
            let parts = items.map(matches)
            if parts.contains(where: { $0 == nil }) { return inexact(position) }
            return parts.isEmpty ? "0" : "(" + parts.map { $0! }.joined(separator: " OR ") + ")"
        case (.in, .constant), (.in, .objectID), (.contains, _), (.beginsWith, _), (.endsWith, _), (.like, _),
            (.matches, _),
            (.less, _), (.lessOrEqual, _), (.greater, _), (.greaterOrEqual, _), (.between, _):
            return "0"
        default:
            return inexact(position)
        }
    }

    /// `sql` (a value of `type`) compared with `other`; `reversed` when `other` was the left operand.
    private func scalarTest(
        _ sql: String, _ type: AttributeType, _ op: PredicateComparison.Operator, _ other: Operand,
        _ options: PredicateComparison.Options, _ position: Position, reversed: Bool
    ) -> String {
        let collation = store.coding.collation(for: type)
        func guarded(_ expression: String) -> String { position.nullSafe ? expression : "coalesce(\(expression), 0)" }
        let folds = !options.isEmpty && type == .string
        // String operators (and == / != / IN with [c]/[d]) run through the Swift implementation.
        if Self.stringOperators.contains(op) || (folds && (op == .equal || op == .notEqual))
            || (op == .in && !isList(other))
        {
            let otherSQL: String
            switch other {
            case .constant(.string(let text)): otherSQL = parameter(.text(text))
            case .scalar(let text, .string): otherSQL = text
            case .constant, .objectID, .scalar: return op == .notEqual ? "1" : "0"
            default: return inexact(position)
            }
            guard type == .string else { return op == .notEqual ? "1" : "0" }
            let name = op == .notEqual ? PredicateComparison.Operator.equal : op
            let (s, t) = reversed ? (otherSQL, sql) : (sql, otherSQL)
            let call = "sluice_string('\(name.rawValue)', \(options.rawValue), \(s), \(t))"
            return op == .notEqual ? "NOT \(call)" : call
        }
        switch op {
        case .equal, .notEqual:
            let keyword = op == .equal ? "IS" : "IS NOT"
            switch other {
            case .constant(let value):
                switch store.coding.binding(value, for: type, ordering: false) {
                case .value(let bound): return "\(sql) \(keyword) \(parameter(bound))\(collation)"
                case .incomparable: return op == .equal ? "0" : "1"
                case .inexact: return inexact(position)
                }
            case .scalar(let otherSQL, let otherType) where Self.comparable(type, otherType):
                return "\(sql) \(keyword) \(otherSQL)\(collation)"
            case .objectID: return op == .equal ? "0" : "1"
            default: return inexact(position)
            }
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            var symbol: String
            switch op {
            case .less: symbol = "<"
            case .lessOrEqual: symbol = "<="
            case .greater: symbol = ">"
            default: symbol = ">="
            }
            if reversed { symbol = ["<": ">", "<=": ">=", ">": "<", ">=": "<="][symbol]! }
            switch other {
            case .constant(let value):
                if value.isNull { return "0" }
                switch store.coding.binding(value, for: type, ordering: true) {
                case .value(let bound): return guarded("\(sql) \(symbol) \(parameter(bound))\(collation)")
                case .incomparable: return "0"
                case .inexact: return inexact(position)
                }
            case .scalar(let otherSQL, let otherType)
            where Self.comparable(type, otherType) && store.coding.sortsInSQL(type)
                && store.coding.sortsInSQL(otherType):
                return guarded("\(sql) \(symbol) \(otherSQL)\(collation)")
            case .objectID: return "0"
            default: return inexact(position)
            }
        case .between:
            guard !reversed, case .list(let bounds) = other, bounds.count == 2 else { return inexact(position) }
            var placeholders: [String] = []
            for bound in bounds {
                guard case .constant(let value) = bound else { return inexact(position) }
                if value.isNull { return "0" }
                switch store.coding.binding(value, for: type, ordering: true) {
                case .value(let bound): placeholders.append(parameter(bound))
                case .incomparable: return "0"
                case .inexact: return inexact(position)
                }
            }
            return guarded("(\(sql) >= \(placeholders[0])\(collation) AND \(sql) <= \(placeholders[1])\(collation))")
        case .in:
            guard !reversed, case .list(let items) = other else { return inexact(position) }
            var placeholders: [String] = []
            var matchesNull = false
            for item in items {
                switch item {
                case .constant(.null): matchesNull = true
                case .constant(.string(let text)) where folds:
                    placeholders.append(parameter(.text(PredicateStrings.fold(text, options))))
                case .constant(let value):
                    switch store.coding.binding(value, for: type, ordering: false) {
                    case .value(let bound): placeholders.append(parameter(bound))
                    case .incomparable: continue
                    case .inexact: return inexact(position)
                    }
                case .objectID: continue
                default: return inexact(position)
                }
            }
            var parts: [String] = []
            if !placeholders.isEmpty {
                let subject = folds ? "sluice_fold(\(sql), \(options.rawValue))" : "(\(sql)\(collation))"
                parts.append(guarded("\(subject) IN (\(placeholders.joined(separator: ", ")))"))
            }
            if matchesNull { parts.append("\(sql) IS NULL") }
            return parts.isEmpty ? "0" : "(" + parts.joined(separator: " OR ") + ")"
        default:
            return inexact(position)
        }
    }

    private func isList(_ operand: Operand) -> Bool { if case .list = operand { return true } else { return false } }

    /// Whether two column types compare in SQL exactly as their values compare in memory.
    private static func comparable(_ a: AttributeType, _ b: AttributeType) -> Bool {
        let numeric: Set<AttributeType> = [.integer16, .integer32, .integer64, .boolean, .double, .float]
        if numeric.contains(a) && numeric.contains(b) { return true }
        return a == b
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
