import Foundation

/// The string tests of predicates, public so that every store answers exactly as the context does.
///
/// Without options strings compare literally, by Unicode code points (as SQLite's BINARY collation
/// and Core Data's SQLite store do): `"é"` precomposed and `"e\u{301}"` differ. With `[c]` and/or
/// `[d]` both sides are folded (case, diacritics) and brought to Unicode canonical composition first,
/// so `"CAFÉ" ==[cd] "cafe\u{301}"` holds.
///
/// A store that runs predicates in a database registers these functions there (the SQLite store
/// does) instead of approximating them with the database's own operators.
public enum PredicateStrings {
    /// `s` as `[c]`/`[d]` comparisons see it; unchanged without options.
    public static func fold(_ s: String, _ options: PredicateComparison.Options) -> String {
        guard !options.isEmpty else { return s }
        var foldOptions: String.CompareOptions = []
        if options.contains(.caseInsensitive) { foldOptions.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { foldOptions.insert(.diacriticInsensitive) }
        return s.folding(options: foldOptions, locale: nil).precomposedStringWithCanonicalMapping
    }

    /// Literal (code point) equality, or equality of the folded forms with options.
    public static func equals(_ s: String, _ t: String, _ options: PredicateComparison.Options) -> Bool {
        fold(s, options).utf8.elementsEqual(fold(t, options).utf8)
    }

    /// Code point order (what SQLite's BINARY collation gives for UTF-8 text).
    public static func literalOrder(_ s: String, _ t: String) -> ComparisonResult {
        var a = s.utf8.makeIterator(), b = t.utf8.makeIterator()
        while true {
            switch (a.next(), b.next()) {
            case (nil, nil): return .orderedSame
            case (nil, _): return .orderedAscending
            case (_, nil): return .orderedDescending
            case let (x?, y?): if x != y { return x < y ? .orderedAscending : .orderedDescending }
            }
        }
    }

    /// The order of case-insensitive sort descriptors.
    public static func caseInsensitiveOrder(_ s: String, _ t: String) -> ComparisonResult {
        let order = s.compare(t, options: [.caseInsensitive])
        return order == .orderedSame ? literalOrder(s, t) : order
    }

    /// `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE`, `MATCHES`, `==`, and `IN` with a string on the
    /// right (`needle IN haystack`, here `s IN t`), for two strings.
    /// - Throws: `FetchRequestError` for a MATCHES pattern that is not a regular expression.
    public static func test(
        _ op: PredicateComparison.Operator, _ s: String, _ t: String,
        _ options: PredicateComparison.Options
    ) throws -> Bool {
        switch op {
        case .equal: return equals(s, t, options)
        case .notEqual: return !equals(s, t, options)
        case .beginsWith: return fold(s, options).utf8.starts(with: fold(t, options).utf8)
        case .endsWith:
            let a = fold(s, options).utf8, b = fold(t, options).utf8
            return a.count >= b.count && a.suffix(b.count).elementsEqual(b)
        case .contains: return t.isEmpty || contains(fold(s, options), fold(t, options))
        case .in: return s.isEmpty || contains(fold(t, options), fold(s, options))
        case .like: return like(Array(fold(s, options)), Array(fold(t, options)))
        case .matches: return matches(s, try regularExpression(t, options), options)
        case .less, .lessOrEqual, .greater, .greaterOrEqual, .between:
            preconditionFailure("\(op.rawValue) is not a string operator")
        }
    }

    /// A `MATCHES` pattern compiled once: ICU syntax, the whole string must match.
    /// - Throws: `FetchRequestError` when the pattern does not compile.
    public static func regularExpression(
        _ pattern: String, _ options: PredicateComparison.Options
    ) throws -> NSRegularExpression {
        do {
            return try NSRegularExpression(
                pattern: "^(?:\(pattern))$", options: options.contains(.caseInsensitive) ? [.caseInsensitive] : [])
        } catch {
            throw FetchRequestError("MATCHES pattern \(pattern.debugDescription) is not a valid regular expression")
        }
    }

    /// `s MATCHES` a compiled pattern (diacritics folded first with `[d]`).
    public static func matches(
        _ s: String, _ expression: NSRegularExpression, _ options: PredicateComparison.Options
    ) -> Bool {
        let text = options.contains(.diacriticInsensitive) ? fold(s, [.diacriticInsensitive]) : s
        return expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }

    private static func contains(_ haystack: String, _ needle: String) -> Bool {
        haystack.utf8.firstRange(of: needle.utf8) != nil
    }

    /// LIKE: `*` matches any run of characters, `?` one character, `\` escapes; the whole string must match.
    static func like(_ s: [Character], _ p: [Character]) -> Bool {
        var si = 0, pi = 0, starP = -1, starS = 0
        while si < s.count {
            if pi < p.count, p[pi] == "\\", pi + 1 < p.count, p[pi + 1] == s[si] {
                si += 1
                pi += 2
                continue
            }
            if pi < p.count, p[pi] == "?" || (p[pi] == s[si] && p[pi] != "*" && p[pi] != "\\") {
                si += 1
                pi += 1
                continue
            }
            if pi < p.count, p[pi] == "*" {
                starP = pi
                starS = si
                pi += 1
                continue
            }
            if starP >= 0 {
                pi = starP + 1
                starS += 1
                si = starS
                continue
            }
            return false
        }
        while pi < p.count, p[pi] == "*" { pi += 1 }
        return pi == p.count
    }
}
