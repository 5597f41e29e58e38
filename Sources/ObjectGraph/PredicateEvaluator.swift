import Foundation

/// Something a predicate can be evaluated against: a managed object, or a store's row.
///
/// Stores that evaluate predicates in memory (the in-memory store, atomic stores) wrap their rows in
/// a type conforming to this protocol and use `FetchPredicate.compiled(for:)`, so every store answers
/// exactly as the context does for pending changes.
public protocol PredicateSubject {
    var predicateObjectID: ManagedObjectID { get }
    /// The value of one property: `.value` for attributes and empty to-ones, `.subject` for a to-one
    /// destination, `.collection` of subjects for to-many relationships.
    func predicateValue(forKey key: String) -> PredicateValue
}

/// A value met while evaluating a predicate.
public enum PredicateValue {
    case value(AttributeValue)
    case subject(any PredicateSubject)
    case objectID(ManagedObjectID)
    case collection([PredicateValue])

    var scalar: AttributeValue? { if case .value(let v) = self { return v } else { return nil } }

    var identity: ManagedObjectID? {
        switch self {
        case .subject(let s): return s.predicateObjectID
        case .objectID(let id): return id
        default: return nil
        }
    }
}

/// An error in a fetch that only shows against the model: a key path naming no property, a to-many
/// relationship used where a value is needed, a variable left unsubstituted.
public struct FetchRequestError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

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

/// Evaluates key paths and sorts subjects with the predicate semantics.
enum KeyPathEvaluator {
    static func value(of path: [String], in subject: any PredicateSubject) -> PredicateValue {
        var current: PredicateValue = .subject(subject)
        var index = 0
        while index < path.count {
            let key = path[index]
            switch key {
            case "@count":
                if case .collection(let items) = current {
                    current = .value(.integer(Int64(items.count)))
                } else {
                    current = .value(.integer(current.scalar?.isNull == false || current.identity != nil ? 1 : 0))
                }
            case "@sum", "@avg", "@min", "@max":
                let attribute = path[index + 1]
                index += 1
                let items: [PredicateValue]
                if case .collection(let list) = current { items = list } else { items = [current] }
                let values = items.compactMap { item -> AttributeValue? in
                    guard case .subject(let s) = item, case .value(let v) = s.predicateValue(forKey: attribute),
                        !v.isNull
                    else { return nil }
                    return v
                }
                current = .value(aggregate(key, values))
            default:
                current = step(current, key)
            }
            index += 1
        }
        return current
    }

    private static func step(_ value: PredicateValue, _ key: String) -> PredicateValue {
        switch value {
        case .subject(let s): return s.predicateValue(forKey: key)
        case .collection(let items):
            var out: [PredicateValue] = []
            for item in items {
                let next = step(item, key)
                if case .collection(let inner) = next { out += inner } else { out.append(next) }
            }
            return .collection(out)
        default: return .value(.null)
        }
    }

    private static func aggregate(_ op: String, _ values: [AttributeValue]) -> AttributeValue {
        switch op {
        case "@min": return values.min { ($0.compare(to: $1) ?? .orderedSame) == .orderedAscending } ?? .null
        case "@max": return values.max { ($0.compare(to: $1) ?? .orderedSame) == .orderedAscending } ?? .null
        default:
            let numbers = values.compactMap(\.numeric)
            if op == "@sum", numbers.allSatisfy({ if case .integer = $0 { return true } else { return false } }) {
                var total: Int64 = 0
                for case .integer(let v) in numbers {
                    let (sum, overflow) = total.addingReportingOverflow(v)
                    if overflow { return .double(numbers.reduce(0) { $0 + $1.asDouble }) }
                    total = sum
                }
                return .integer(total)
            }
            if numbers.contains(where: { if case .decimal = $0 { return true } else { return false } }) {
                let total = numbers.reduce(Decimal(0)) { $0 + ($1.asDecimal ?? 0) }
                if op == "@avg" { return numbers.isEmpty ? .null : .decimal(total / Decimal(numbers.count)) }
                return .decimal(total)
            }
            let total = numbers.reduce(0.0) { $0 + $1.asDouble }
            if op == "@avg" { return numbers.isEmpty ? .null : .double(total / Double(numbers.count)) }
            return .double(total)
        }
    }

    /// Orders two subjects by sort descriptors; nulls sort first in ascending order.
    static func areInIncreasingOrder(
        _ a: any PredicateSubject, _ b: any PredicateSubject,
        _ sorts: [(path: [String], descriptor: FetchSortDescriptor)]
    ) -> Bool {
        for (path, descriptor) in sorts {
            let order = compareForSort(
                value(of: path, in: a), value(of: path, in: b), caseInsensitive: descriptor.caseInsensitive)
            if order == .orderedSame { continue }
            return descriptor.ascending ? order == .orderedAscending : order == .orderedDescending
        }
        return false
    }

    /// `items` sorted by the descriptors (ties keep their order), then `offset` skipped and at most
    /// `limit` kept (0: no limit). The one ordering and paging rule for contexts and in-memory stores.
    static func sortedAndPaged<T>(
        _ items: [T], by sorts: [(path: [String], descriptor: FetchSortDescriptor)],
        offset: Int, limit: Int, subject: (T) -> any PredicateSubject
    ) -> [T] {
        var ordered = items
        if !sorts.isEmpty {
            ordered = items.enumerated().sorted { a, b in
                let x = subject(a.element), y = subject(b.element)
                if areInIncreasingOrder(x, y, sorts) { return true }
                if areInIncreasingOrder(y, x, sorts) { return false }
                return a.offset < b.offset
            }.map(\.element)
        }
        let start = min(offset, ordered.count)
        let end = limit > 0 ? min(ordered.count, start + limit) : ordered.count
        return Array(ordered[start..<end])
    }

    static func compareForSort(_ a: PredicateValue, _ b: PredicateValue, caseInsensitive: Bool) -> ComparisonResult {
        let x = a.scalar ?? .null, y = b.scalar ?? .null
        switch (x.isNull, y.isNull) {
        case (true, true): return .orderedSame
        case (true, false): return .orderedAscending
        case (false, true): return .orderedDescending
        default: break
        }
        if caseInsensitive, case .string(let s) = x, case .string(let t) = y {
            return PredicateStrings.caseInsensitiveOrder(s, t)
        }
        return x.compare(to: y) ?? .orderedSame
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

extension EntityDescription {
    /// Checks that a key path (`department.name`, `orders.@count`, `lines.@sum.quantity`) is valid
    /// from this entity; returns whether it yields a collection (it passes through a to-many relationship).
    /// - Throws: `FetchRequestError` naming the first component that does not exist.
    public func checkKeyPath(_ path: [String]) throws -> Bool {
        var current: EntityDescription? = self
        var isCollection = false
        var index = 0
        let text = path.joined(separator: ".")
        while index < path.count {
            let key = path[index]
            if key == "@count" {
                isCollection = false
                index += 1
                continue
            }
            if ["@sum", "@avg", "@min", "@max"].contains(key) {
                guard let target = current, target.attribute(named: path[index + 1]) != nil else {
                    throw FetchRequestError(
                        "key path '\(text)' is not valid for entity \(name): \(path[index + 1]) is not an attribute "
                            + "of \(current?.name ?? "a value")"
                    )
                }
                isCollection = false
                index += 2
                continue
            }
            guard let here = current else {
                throw FetchRequestError(
                    "key path '\(text)' is not valid for entity \(name): \(path[index - 1]) is an attribute, it has "
                        + "no property \(key)"
                )
            }
            if here.attribute(named: key) != nil {
                current = nil
            } else if let relationship = here.relationship(named: key) {
                current = relationship.destinationEntity
                if relationship.isToMany { isCollection = true }
            } else {
                throw FetchRequestError(
                    "key path '\(text)' is not valid for entity \(name): \(here.name) has no property \(key)")
            }
            index += 1
        }
        return isCollection
    }

}
