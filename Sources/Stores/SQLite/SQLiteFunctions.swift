import Drivers
import Foundation
import ObjectGraph

/// SQL functions and collations through which the SQLite store evaluates predicates exactly as the
/// context does in memory (they call `PredicateStrings`), registered on each connection:
///
/// - `sluice_string(op, options, s, t)`: 1 or 0 for a string operator (`op` is the operator's raw
///   value, `options` the option bits); 0 when either side is not text, except that `==` holds for
///   two NULLs.
/// - `sluice_fold(s, options)`: `s` folded for `[c]`/`[d]` comparisons (NULL stays NULL).
/// - `COLLATE SLUICE_DECIMAL`: canonical decimal text compared numerically.
/// - `COLLATE SLUICE_NOCASE`: the order of case-insensitive sort descriptors.
enum SQLiteFunctions {
    static func register(on connection: SQLiteConnection) throws {
        final class RegexCache {
            var expressions: [String: NSRegularExpression] = [:]
        }
        let cache = RegexCache()
        try connection.createFunction("sluice_string", argumentCount: 4) { arguments in
            guard case .text(let opName) = arguments[0], let op = PredicateComparison.Operator(rawValue: opName),
                case .integer(let bits) = arguments[1]
            else { return .integer(0) }
            let options = PredicateComparison.Options(rawValue: Int(bits))
            guard case .text(let s) = arguments[2], case .text(let t) = arguments[3] else {
                if op == .equal, arguments[2] == .null, arguments[3] == .null { return .integer(1) }
                return .integer(0)
            }
            if op == .matches {
                let key = "\(bits)/\(t)"
                let expression = try cache.expressions[key] ?? PredicateStrings.regularExpression(t, options)
                if cache.expressions.count > 256 { cache.expressions.removeAll() }
                cache.expressions[key] = expression
                return .integer(PredicateStrings.matches(s, expression, options) ? 1 : 0)
            }
            return .integer(try PredicateStrings.test(op, s, t, options) ? 1 : 0)
        }
        try connection.createFunction("sluice_fold", argumentCount: 2) { arguments in
            guard case .text(let s) = arguments[0], case .integer(let bits) = arguments[1] else { return arguments[0] }
            return .text(PredicateStrings.fold(s, PredicateComparison.Options(rawValue: Int(bits))))
        }
        try connection.createCollation("SLUICE_DECIMAL") { a, b in
            let locale = Locale(identifier: "en_US_POSIX")
            guard let x = Decimal(string: a, locale: locale), let y = Decimal(string: b, locale: locale) else {
                return PredicateStrings.literalOrder(a, b).rawValue
            }
            return x < y ? -1 : (x == y ? 0 : 1)
        }
        try connection.createCollation("SLUICE_NOCASE") { a, b in
            PredicateStrings.caseInsensitiveOrder(a, b).rawValue
        }
    }
}
