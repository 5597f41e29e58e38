import Foundation

/// A predicate checked against an entity and turned into closures, ready to test many subjects.
public struct CompiledPredicate {
    let test: (any PredicateSubject) -> Bool
    public func evaluate(_ subject: any PredicateSubject) -> Bool { test(subject) }
}

extension FetchPredicate {
    /// Checks every key path against `entity` and prepares the predicate for evaluation.
    /// - Throws: `FetchRequestError` for unknown keys or unsubstituted variables.
    public func compiled(for entity: EntityDescription) throws -> CompiledPredicate {
        CompiledPredicate(test: try PredicateCompiler(entity: entity).compile(self))
    }
}

private struct PredicateCompiler {
    let entity: EntityDescription
    typealias Test = (any PredicateSubject) -> Bool
    typealias Operand = (any PredicateSubject) -> PredicateValue

    func compile(_ predicate: FetchPredicate) throws -> Test {
        switch predicate {
        case .constant(let value): return { _ in value }
        case .and(let parts):
            let tests = try parts.map(compile)
            return { subject in tests.allSatisfy { $0(subject) } }
        case .or(let parts):
            let tests = try parts.map(compile)
            return { subject in tests.contains { $0(subject) } }
        case .not(let inner):
            let test = try compile(inner)
            return { !test($0) }
        case .comparison(let comparison):
            return try compile(comparison)
        }
    }

    private func check(_ path: [String]) throws -> Bool { try entity.checkKeyPath(path) }

    private func operand(_ expression: PredicateExpression) throws -> (Operand, isCollection: Bool) {
        switch expression {
        case .keyPath(let path):
            let isCollection = try check(path)
            return ({ KeyPathEvaluator.value(of: path, in: $0) }, isCollection)
        case .evaluatedObject:
            return ({ .subject($0) }, false)
        case .constant(let value):
            return ({ _ in .value(value) }, false)
        case .objectID(let id):
            return ({ _ in .objectID(id) }, false)
        case .variable(let name):
            throw FetchRequestError(
                "variable $\(name) has no value: call substituting(_:) on the predicate before fetching")
        case .aggregate(let items):
            let operands = try items.map { try operand($0).0 }
            return ({ subject in .collection(operands.map { $0(subject) }) }, true)
        }
    }

    private func compile(_ comparison: PredicateComparison) throws -> Test {
        let (lhs, lhsIsCollection) = try operand(comparison.lhs)
        let (rhs, _) = try operand(comparison.rhs)
        var regex: NSRegularExpression?
        if comparison.op == .matches, case .constant(.string(let pattern)) = comparison.rhs {
            regex = try PredicateStrings.regularExpression(pattern, comparison.options)
        }
        let op = comparison.op, options = comparison.options
        let compiledRegex = regex
        let elementTest: (PredicateValue, PredicateValue) -> Bool = { l, r in
            Self.test(op, l, r, options, compiledRegex)
        }
        var modifier = comparison.modifier
        // A to-many key path compared without a modifier means ANY (CONTAINS/IN handle collections themselves).
        if modifier == .direct, lhsIsCollection, op != .contains {
            modifier = .any
        }
        switch modifier {
        case .direct:
            return { subject in elementTest(lhs(subject), rhs(subject)) }
        case .any, .all, .none:
            return { subject in
                let left = lhs(subject), right = rhs(subject)
                let items: [PredicateValue]
                if case .collection(let list) = left { items = list } else { items = [left] }
                switch modifier {
                case .any: return items.contains { elementTest($0, right) }
                case .all: return items.allSatisfy { elementTest($0, right) }
                default: return !items.contains { elementTest($0, right) }
                }
            }
        }
    }

    static func equals(_ l: PredicateValue, _ r: PredicateValue, _ options: PredicateComparison.Options) -> Bool {
        if let a = l.identity {
            return r.identity == a
        }
        if r.identity != nil { return false }
        guard let x = l.scalar, let y = r.scalar else { return false }
        if !options.isEmpty, case .string(let s) = x, case .string(let t) = y {
            return PredicateStrings.equals(s, t, options)
        }
        return x.isEqualForPredicate(y)
    }

    static func test(
        _ op: PredicateComparison.Operator, _ l: PredicateValue, _ r: PredicateValue,
        _ options: PredicateComparison.Options, _ regex: NSRegularExpression?
    ) -> Bool {
        switch op {
        case .equal: return equals(l, r, options)
        case .notEqual: return !equals(l, r, options)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard let x = l.scalar, let y = r.scalar, let order = x.compare(to: y) else { return false }
            switch op {
            case .less: return order == .orderedAscending
            case .lessOrEqual: return order != .orderedDescending
            case .greater: return order == .orderedDescending
            default: return order != .orderedAscending
            }
        case .between:
            guard case .collection(let bounds) = r, bounds.count == 2, let x = l.scalar,
                let lo = bounds[0].scalar, let hi = bounds[1].scalar,
                let a = x.compare(to: lo), let b = x.compare(to: hi)
            else { return false }
            return a != .orderedAscending && b != .orderedDescending
        case .in:
            if case .collection(let items) = r {
                if case .collection(let lefts) = l {
                    return lefts.contains { left in items.contains { equals(left, $0, options) } }
                }
                return items.contains { equals(l, $0, options) }
            }
            if case .value(.string(let haystack)) = r, case .value(.string(let needle)) = l {
                return (try? PredicateStrings.test(.in, needle, haystack, options)) ?? false
            }
            return false
        case .contains:
            if case .collection(let items) = l { return items.contains { equals($0, r, options) } }
            fallthrough
        case .beginsWith, .endsWith, .like, .matches:
            guard case .value(.string(let s)) = l, case .value(.string(let t)) = r else { return false }
            if op == .matches {
                guard let expression = regex ?? (try? PredicateStrings.regularExpression(t, options)) else {
                    return false
                }
                return PredicateStrings.matches(s, expression, options)
            }
            return (try? PredicateStrings.test(op, s, t, options)) ?? false
        }
    }
}
