import Foundation

/// One comparison: `[modifier] lhs operator[options] rhs`.
public struct PredicateComparison: Sendable, Hashable, CustomStringConvertible {
    public enum Operator: String, Sendable, Hashable {
        case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
        case `in` = "IN", between = "BETWEEN", beginsWith = "BEGINSWITH", endsWith = "ENDSWITH"
        case contains = "CONTAINS", like = "LIKE", matches = "MATCHES"
    }

    public enum Modifier: String, Sendable, Hashable { case direct = "", any = "ANY", all = "ALL", none = "NONE" }

    public struct Options: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let caseInsensitive = Options(rawValue: 1)
        public static let diacriticInsensitive = Options(rawValue: 2)
    }

    public var lhs: PredicateExpression
    public var op: Operator
    public var rhs: PredicateExpression
    public var modifier: Modifier
    public var options: Options

    public init(
        _ lhs: PredicateExpression, _ op: Operator, _ rhs: PredicateExpression, modifier: Modifier = .direct,
        options: Options = []
    ) {
        self.lhs = lhs
        self.op = op
        self.rhs = rhs
        self.modifier = modifier
        self.options = options
    }

    public var description: String {
        var flags = ""
        if options.contains(.caseInsensitive) { flags += "c" }
        if options.contains(.diacriticInsensitive) { flags += "d" }
        let prefix = modifier == .direct ? "" : modifier.rawValue + " "
        return "\(prefix)\(lhs) \(op.rawValue)\(flags.isEmpty ? "" : "[\(flags)]") \(rhs)"
    }
}
