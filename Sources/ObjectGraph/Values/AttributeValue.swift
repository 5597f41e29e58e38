import Foundation

/// The value of one attribute of a managed object or a store row.
///
/// One case per storage class rather than `Any`, so values are `Sendable`, compare without dynamic
/// casts, and sit in a flat array per object. Integers of every width are `.integer`; the model's
/// attribute type (integer16/32/64) decides the allowed range, checked by validation.
public enum AttributeValue: Sendable, Hashable, CustomStringConvertible {
    case null
    case integer(Int64)
    case decimal(Decimal)
    case double(Double)
    case float(Float)
    case string(String)
    case boolean(Bool)
    case date(Date)
    case binary(Data)
    case uuid(UUID)
    case uri(URL)

    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// The value of an `.integer`, else `nil`.
    public var asInteger: Int64? { if case .integer(let value) = self { return value } else { return nil } }

    /// Whether two values are the same storage: a quick, conservative `==` (decimals compare by
    /// representation, so `1.5` and `1.50` are not the same here though `==`).
    func isSame(as other: AttributeValue) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case (.integer(let a), .integer(let b)): return a == b
        case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern
        case (.float(let a), .float(let b)): return a.bitPattern == b.bitPattern
        case (.boolean(let a), .boolean(let b)): return a == b
        case (.date(let a), .date(let b)):
            return a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
        case (.decimal(var a), .decimal(var b)):
            return withUnsafeBytes(of: &a) { x in withUnsafeBytes(of: &b) { y in x.elementsEqual(y) } }
        case (.string(let a), .string(let b)): return ExactText.equal(a, b)
        default: return self == other
        }
    }

    /// Converts a plain Swift value (`Int`, `String`, `Date`, `Decimal`, ..., or `nil`) to an attribute value.
    /// Returns `nil` when the value has no attribute representation.
    public init?(_ any: Any?) {
        switch any {
        case nil, is NSNull: self = .null
        case let value as AttributeValue: self = value
        case let value as Int: self = .integer(Int64(value))
        case let value as Int64: self = .integer(value)
        case let value as Int32: self = .integer(Int64(value))
        case let value as Int16: self = .integer(Int64(value))
        case let value as Int8: self = .integer(Int64(value))
        case let value as UInt32: self = .integer(Int64(value))
        case let value as Decimal: self = .decimal(value)
        case let value as Double: self = .double(value)
        case let value as Float: self = .float(value)
        case let value as String: self = .string(value)
        case let value as Substring: self = .string(String(value))
        case let value as Bool: self = .boolean(value)
        case let value as Date: self = .date(value)
        case let value as Data: self = .binary(value)
        case let value as UUID: self = .uuid(value)
        case let value as URL: self = .uri(value)
        default: return nil
        }
    }

    /// The plain Swift value (`Int64`, `Decimal`, `Double`, `Float`, `String`, `Bool`, `Date`, `Data`,
    /// `UUID`, `URL`), or `nil` for `.null`.
    public var anyValue: Any? {
        switch self {
        case .null: return nil
        case .integer(let v): return v
        case .decimal(let v): return v
        case .double(let v): return v
        case .float(let v): return v
        case .string(let v): return v
        case .boolean(let v): return v
        case .date(let v): return v
        case .binary(let v): return v
        case .uuid(let v): return v
        case .uri(let v): return v
        }
    }

    /// Whether this value may be stored in an attribute of `type` (null always may; optionality is a
    /// separate rule). Integer ranges are checked by `fitsRange(of:)`.
    public func isStorable(as type: AttributeType) -> Bool {
        switch (self, type) {
        case (.null, _): return true
        case (.integer, .integer16), (.integer, .integer32), (.integer, .integer64): return true
        case (.decimal, .decimal), (.double, .double), (.float, .float), (.string, .string),
            (.boolean, .boolean), (.date, .date), (.binary, .binary), (.uuid, .uuid), (.uri, .uri):
            return true
        case (.date(let v), .calendarDate): return SQLDateText.isWholeDay(v)
        default: return false
        }
    }

    /// For integer types, whether the value is inside the type's range.
    public func fitsRange(of type: AttributeType) -> Bool {
        guard case .integer(let v) = self else { return true }
        switch type {
        case .integer16: return v >= Int64(Int16.min) && v <= Int64(Int16.max)
        case .integer32: return v >= Int64(Int32.min) && v <= Int64(Int32.max)
        default: return true
        }
    }

    /// A numeric view used for cross-type comparison (integer vs double vs decimal vs boolean).
    var numeric: Numeric? {
        switch self {
        case .integer(let v): return .integer(v)
        case .double(let v): return .double(v)
        case .float(let v): return .double(Double(v))
        case .decimal(let v): return .decimal(v)
        case .boolean(let v): return .integer(v ? 1 : 0)
        default: return nil
        }
    }

    enum Numeric {
        case integer(Int64), double(Double), decimal(Decimal)

        var asDouble: Double {
            switch self {
            case .integer(let v): return Double(v)
            case .double(let v): return v
            case .decimal(let v): return NSDecimalNumber(decimal: v).doubleValue
            }
        }

        var asDecimal: Decimal? {
            switch self {
            case .integer(let v): return Decimal(v)
            case .decimal(let v): return v
            case .double(let v): return v.isFinite ? Decimal(string: "\(v)") : nil
            }
        }
    }

    /// Orders two values of compatible kinds: numbers with numbers (exactly when decimals or two
    /// integers are involved), strings (by code point), dates, UUIDs, URIs, data. Returns `nil` when either is null or
    /// the kinds do not compare.
    public func compare(to other: AttributeValue) -> ComparisonResult? {
        if let a = numeric, let b = other.numeric { return Self.compareNumbers(a, b) }
        switch (self, other) {
        case (.string(let a), .string(let b)): return PredicateStrings.literalOrder(a, b)
        case (.date(let a), .date(let b)): return a.compare(b)
        case (.uuid(let a), .uuid(let b)): return Self.order(a.uuidString, b.uuidString)
        case (.uri(let a), .uri(let b)): return Self.order(a.absoluteString, b.absoluteString)
        case (.binary(let a), .binary(let b)):
            return a == b ? .orderedSame : (a.lexicographicallyPrecedes(b) ? .orderedAscending : .orderedDescending)
        default: return nil
        }
    }

    private static func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
        a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
    }

    private static func compareNumbers(_ a: Numeric, _ b: Numeric) -> ComparisonResult? {
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return order(x, y)
        case (.decimal, _), (_, .decimal):
            if let x = a.asDecimal, let y = b.asDecimal { return order(x, y) }
            return order(a.asDouble, b.asDouble)
        default:
            let x = a.asDouble, y = b.asDouble
            if x.isNaN || y.isNaN { return nil }
            return order(x, y)
        }
    }

    /// Equality as predicates see it: numbers compare by value across kinds, strings literally (by code
    /// point), null equals only null.
    public func isEqualForPredicate(_ other: AttributeValue) -> Bool {
        if case .null = self { return other.isNull }
        if case .null = other { return false }
        if numeric != nil, other.numeric != nil { return compare(to: other) == .orderedSame }
        if case .string(let a) = self, case .string(let b) = other { return ExactText.equal(a, b) }
        return self == other
    }

    public var description: String {
        switch self {
        case .null: return "nil"
        case .integer(let v): return String(v)
        case .decimal(let v): return v.description
        case .double(let v): return String(v)
        case .float(let v): return String(v)
        case .string(let v): return v.debugDescription
        case .boolean(let v): return v ? "true" : "false"
        case .date(let v): return Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(v)
        case .binary(let v): return "<\(v.count) bytes>"
        case .uuid(let v): return v.uuidString
        case .uri(let v): return v.absoluteString
        }
    }
}

/// Literals for the common cases: `object["name"] = "Ada"`, `object["age"] = 36`.
extension AttributeValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
}
