import Drivers
import Foundation
import ObjectGraph

/// The SQL test of one comparison between operands: identities (rows, object IDs) and scalars
/// (columns, constants, subqueries), with the in-memory evaluator's null semantics.
extension SQLiteQueryBuilder {
    private static let stringOperators: Set<PredicateComparison.Operator> = [
        .beginsWith, .endsWith, .contains, .like, .matches,
    ]

    func test(
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
        let folds = !options.isEmpty && type == .string
        // String operators (and == / != / IN with [c]/[d]) run through the Swift implementation.
        if Self.stringOperators.contains(op) || (folds && (op == .equal || op == .notEqual))
            || (op == .in && !isList(other))
        {
            return stringTest(sql, type, op, other, options, position, reversed: reversed)
        }
        switch op {
        case .equal, .notEqual:
            return equalityTest(sql, type, collation, op, other, position)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            return orderingTest(sql, type, collation, op, other, position, reversed: reversed)
        case .between:
            return rangeTest(sql, type, collation, other, position, reversed: reversed)
        case .in:
            return membershipTest(sql, type, collation, other, options, folds: folds, position, reversed: reversed)
        default:
            return inexact(position)
        }
    }

    /// A string operator, or `==` / `!=` / `IN` with `[c]`/`[d]`, or `IN` a string, through
    /// `sluice_string` (the Swift implementation); false where either side is no string.
    private func stringTest(
        _ sql: String, _ type: AttributeType, _ op: PredicateComparison.Operator, _ other: Operand,
        _ options: PredicateComparison.Options, _ position: Position, reversed: Bool
    ) -> String {
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

    /// `==` / `!=` as `IS` / `IS NOT` (a null equals a null), with a constant or another scalar.
    private func equalityTest(
        _ sql: String, _ type: AttributeType, _ collation: String, _ op: PredicateComparison.Operator,
        _ other: Operand, _ position: Position
    ) -> String {
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
    }

    /// `<`, `<=`, `>`, `>=` with a constant or with a scalar that orders in SQL (turned around when
    /// `reversed`); false with a null.
    private func orderingTest(
        _ sql: String, _ type: AttributeType, _ collation: String, _ op: PredicateComparison.Operator,
        _ other: Operand, _ position: Position, reversed: Bool
    ) -> String {
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
            case .value(let bound): return position.guarded("\(sql) \(symbol) \(parameter(bound))\(collation)")
            case .incomparable: return "0"
            case .inexact: return inexact(position)
            }
        case .scalar(let otherSQL, let otherType)
        where Self.comparable(type, otherType) && store.coding.sortsInSQL(type)
            && store.coding.sortsInSQL(otherType):
            return position.guarded("\(sql) \(symbol) \(otherSQL)\(collation)")
        case .objectID: return "0"
        default: return inexact(position)
        }
    }

    /// `BETWEEN` two constants, as `>= AND <=`; false with a null bound.
    private func rangeTest(
        _ sql: String, _ type: AttributeType, _ collation: String, _ other: Operand, _ position: Position,
        reversed: Bool
    ) -> String {
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
        return position.guarded(
            "(\(sql) >= \(placeholders[0])\(collation) AND \(sql) <= \(placeholders[1])\(collation))")
    }

    /// `IN` a list of constants (folded with `[c]`/`[d]`, `folds`); a null in the list matches a null.
    private func membershipTest(
        _ sql: String, _ type: AttributeType, _ collation: String, _ other: Operand,
        _ options: PredicateComparison.Options, folds: Bool, _ position: Position, reversed: Bool
    ) -> String {
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
            parts.append(position.guarded("\(subject) IN (\(placeholders.joined(separator: ", ")))"))
        }
        if matchesNull { parts.append("\(sql) IS NULL") }
        return parts.isEmpty ? "0" : "(" + parts.joined(separator: " OR ") + ")"
    }

    private func isList(_ operand: Operand) -> Bool { if case .list = operand { return true } else { return false } }

    /// Whether two column types compare in SQL exactly as their values compare in memory.
    private static func comparable(_ a: AttributeType, _ b: AttributeType) -> Bool {
        let numeric: Set<AttributeType> = [.integer16, .integer32, .integer64, .boolean, .double, .float]
        if numeric.contains(a) && numeric.contains(b) { return true }
        return a == b
    }
}
