import Foundation

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

    static func aggregate(_ op: String, _ values: [AttributeValue]) -> AttributeValue {
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
                guard index + 1 < path.count else {
                    throw FetchRequestError(
                        "key path '\(text)' is not valid for entity \(name): \(key) needs an attribute after it")
                }
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
