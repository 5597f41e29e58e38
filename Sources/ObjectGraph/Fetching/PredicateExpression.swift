import Foundation

/// An operand of a comparison.
public indirect enum PredicateExpression: Sendable, Hashable, CustomStringConvertible {
    /// `a.b.@count`: property names and `@` operators.
    case keyPath([String])
    /// `SELF`: the object being tested.
    case evaluatedObject
    case constant(AttributeValue)
    case objectID(ManagedObjectID)
    /// `$NAME`, to be substituted.
    case variable(String)
    /// `{a, b, c}`.
    case aggregate([PredicateExpression])

    init(_ argument: PredicateArgument) {
        switch argument {
        case .value(let value): self = .constant(value)
        case .objectID(let id): self = .objectID(id)
        case .list(let items): self = .aggregate(items.map(PredicateExpression.init))
        }
    }

    func substituting(_ variables: [String: PredicateArgument]) throws -> PredicateExpression {
        switch self {
        case .variable(let name):
            if let value = variables[name] { return PredicateExpression(value) }
            throw PredicateSyntaxError(
                message: "no value was given for variable $\(name)", column: 0, format: "$\(name)")
        case .aggregate(let items): return .aggregate(try items.map { try $0.substituting(variables) })
        default: return self
        }
    }

    var variableNames: Set<String> {
        switch self {
        case .variable(let name): return [name]
        case .aggregate(let items): return items.reduce(into: []) { $0.formUnion($1.variableNames) }
        default: return []
        }
    }

    public var description: String {
        switch self {
        case .keyPath(let parts): return parts.joined(separator: ".")
        case .evaluatedObject: return "SELF"
        case .constant(.string(let s)): return "'" + s.replacingOccurrences(of: "'", with: "\\'") + "'"
        case .constant(.null): return "NULL"
        case .constant(let value): return value.description
        case .objectID(let id): return "<\(id)>"
        case .variable(let name): return "$" + name
        case .aggregate(let items): return "{" + items.map(\.description).joined(separator: ", ") + "}"
        }
    }
}
