import Foundation
import ObjectGraph

/// Predicates in SQL: AND/OR/NOT, comparisons, ANY/ALL/NONE over to-many key paths as EXISTS
/// subqueries, and the operands key paths resolve to (columns through LEFT JOINs, `@count` and
/// aggregate subqueries, identities of rows).
extension SQLiteQueryBuilder {
    // MARK: Predicates

    func compile(_ predicate: FetchPredicate, _ scope: Scope, _ position: Position) throws -> String {
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
            // A transient relationship has no column: the store cannot follow it (memory finishes).
            guard let relationship = entity.relationship(named: path[index]), !relationship.isTransient else {
                return inexact(position)
            }
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
    func resolve(_ path: [String], _ scope: Scope) throws -> Operand {
        var alias = scope.alias, entity = scope.entity, index = 0
        while index < path.count {
            let key = path[index], isLast = index == path.count - 1
            let map = schema.map(for: entity)
            if let attribute = entity.attribute(named: key) {
                guard isLast else { return .unsupported }
                guard let column = map.attributeColumns[attribute.index] else { return .scalar("NULL", attribute.type) }
                return .scalar("\(alias).\(quote(column))", attribute.type)
            }
            guard let relationship = entity.relationship(named: key), !relationship.isTransient else {
                return .unsupported
            }
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
}
