import Foundation

/// A filter for fetch requests, in Core Data's predicate format syntax, parsed once into a tree.
///
/// ```swift
/// let p = try FetchPredicate(format: "age >= %@ AND name BEGINSWITH[cd] $prefix", 18)
/// let q = try p.substituting(["prefix": "Jo"])      // no re-parse
/// ```
///
/// Supported: `== = != <> < <= =< > >= =>`, `IN`, `BETWEEN {lo, hi}`, `BEGINSWITH`, `ENDSWITH`,
/// `CONTAINS`, `LIKE` (`*` and `?`), `MATCHES` (ICU regular expression, whole string), each with
/// `[c]` (case-insensitive), `[d]` (diacritic-insensitive) or `[cd]`; `AND && OR || NOT !`;
/// `ANY SOME ALL NONE` on to-many key paths; key paths through relationships (`department.name`);
/// `@count`, `@sum`, `@avg`, `@min`, `@max` (`orders.@count > 2`, `lines.@sum.quantity`);
/// `SELF`; `TRUEPREDICATE`, `FALSEPREDICATE`; literals `'text'`, `"text"`, numbers, `NULL`/`NIL`,
/// `TRUE`/`YES`, `FALSE`/`NO`, `{a, b}`; `%@` (argument value), `%K` (argument key path), `$NAME`.
///
/// Null semantics are those of Core Data's in-memory evaluation, and every store must match them:
/// `x == nil` holds only for null; `x != 5` holds when `x` is null; ordering and string operators
/// are false when either side is null.
public indirect enum FetchPredicate: Sendable, Hashable, CustomStringConvertible {
    case constant(Bool)
    case and([FetchPredicate])
    case or([FetchPredicate])
    case not(FetchPredicate)
    case comparison(PredicateComparison)

    /// Parses `format`, taking `%@` and `%K` values from `arguments` in order.
    /// - Throws: `PredicateSyntaxError` naming the column.
    public init(format: String, _ arguments: any PredicateArgumentConvertible...) throws {
        try self.init(format: format, argumentArray: arguments.map(\.predicateArgument))
    }

    public init(format: String, argumentArray: [PredicateArgument]) throws {
        var parser = PredicateParser(format: format, arguments: argumentArray)
        self = try parser.parse()
    }

    /// A copy with each `$NAME` replaced by its value.
    /// - Throws: `PredicateSyntaxError` when a variable has no value.
    public func substituting(_ variables: [String: any PredicateArgumentConvertible]) throws -> FetchPredicate {
        try substituting(variables.mapValues(\.predicateArgument))
    }

    func substituting(_ variables: [String: PredicateArgument]) throws -> FetchPredicate {
        switch self {
        case .constant: return self
        case .and(let parts): return .and(try parts.map { try $0.substituting(variables) })
        case .or(let parts): return .or(try parts.map { try $0.substituting(variables) })
        case .not(let inner): return .not(try inner.substituting(variables))
        case .comparison(var comparison):
            comparison.lhs = try comparison.lhs.substituting(variables)
            comparison.rhs = try comparison.rhs.substituting(variables)
            return .comparison(comparison)
        }
    }

    /// Names of the `$` variables still in the predicate.
    public var variableNames: Set<String> {
        switch self {
        case .constant: return []
        case .and(let parts), .or(let parts): return parts.reduce(into: []) { $0.formUnion($1.variableNames) }
        case .not(let inner): return inner.variableNames
        case .comparison(let c): return c.lhs.variableNames.union(c.rhs.variableNames)
        }
    }

    public var description: String {
        switch self {
        case .constant(let value): return value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .and(let parts): return "(" + parts.map(\.description).joined(separator: " AND ") + ")"
        case .or(let parts): return "(" + parts.map(\.description).joined(separator: " OR ") + ")"
        case .not(let inner): return "NOT \(inner)"
        case .comparison(let c): return c.description
        }
    }
}

/// A value passed to a predicate: `%@` arguments and `$VAR` substitutions.
public enum PredicateArgument: Sendable, Hashable {
    case value(AttributeValue)
    case objectID(ManagedObjectID)
    case list([PredicateArgument])
}

/// Types usable as predicate arguments: numbers, strings, dates, data, UUIDs, URLs, attribute
/// values, object IDs, managed objects (by ID), arrays of these, and optionals (nil is NULL).
public protocol PredicateArgumentConvertible {
    var predicateArgument: PredicateArgument { get }
}

extension AttributeValue: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { .value(self) }
}
extension ManagedObjectID: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { .objectID(self) }
}
extension PredicateArgument: PredicateArgumentConvertible { public var predicateArgument: PredicateArgument { self } }
extension Int: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { .value(.integer(Int64(self))) }
}
extension Int64: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { .value(.integer(self)) }
}
extension Int32: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { .value(.integer(Int64(self))) }
}
extension Int16: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { .value(.integer(Int64(self))) }
}
extension Double: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { .value(.double(self)) }
}
extension Float: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { .value(.float(self)) }
}
extension Decimal: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { .value(.decimal(self)) }
}
extension String: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { .value(.string(self)) }
}
extension Bool: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { .value(.boolean(self)) }
}
extension Date: PredicateArgumentConvertible { public var predicateArgument: PredicateArgument { .value(.date(self)) } }
extension Data: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { .value(.binary(self)) }
}
extension UUID: PredicateArgumentConvertible { public var predicateArgument: PredicateArgument { .value(.uuid(self)) } }
extension URL: PredicateArgumentConvertible { public var predicateArgument: PredicateArgument { .value(.uri(self)) } }
extension Array: PredicateArgumentConvertible where Element: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { .list(map(\.predicateArgument)) }
}
extension Set: PredicateArgumentConvertible where Element: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { .list(map(\.predicateArgument)) }
}
extension Optional: PredicateArgumentConvertible where Wrapped: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { self?.predicateArgument ?? .value(.null) }
}
