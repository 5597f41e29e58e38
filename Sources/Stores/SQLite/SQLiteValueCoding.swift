import Drivers
import Foundation
import ObjectGraph

/// Attribute values to and from SQLite storage classes, exactly: integers and booleans as INTEGER,
/// doubles, floats and dates (seconds since 2001-01-01 GMT) as REAL, decimals as canonical decimal
/// text, strings, UUIDs and URIs as TEXT, data as BLOB. A double NaN, which SQLite would turn into
/// NULL, is stored as the text `NaN`.
enum SQLiteValueCoding {
    static func bind(_ value: AttributeValue, to statement: SQLiteStatement, at index: Int32) {
        switch value {
        case .null: statement.bindNull(at: index)
        case .integer(let v): statement.bind(v, at: index)
        case .boolean(let v): statement.bind(Int64(v ? 1 : 0), at: index)
        case .double(let v): if v.isNaN { statement.bind("NaN", at: index) } else { statement.bind(v, at: index) }
        case .float(let v):
            if v.isNaN { statement.bind("NaN", at: index) } else { statement.bind(Double(v), at: index) }
        case .date(let v): statement.bind(v.timeIntervalSinceReferenceDate, at: index)
        case .decimal(let v): DecimalText.withCanonicalUTF8(v) { statement.bindText(utf8: $0, at: index) }
        case .string(let v): statement.bind(v, at: index)
        case .binary(let v): statement.bind(v, at: index)
        case .uuid(let v): statement.bind(v.uuidString, at: index)
        case .uri(let v): statement.bind(v.absoluteString, at: index)
        }
    }

    /// The attribute value of a stored value, or `nil` when the stored value cannot be one of `type`
    /// (a file written by another program): the caller reports it as a corrupt row.
    static func attributeValue(_ stored: SQLiteValue, as type: AttributeType) -> AttributeValue? {
        switch (type, stored) {
        case (_, .null): return .null
        case (.integer16, .integer(let v)), (.integer32, .integer(let v)), (.integer64, .integer(let v)):
            let value = AttributeValue.integer(v)
            return value.fitsRange(of: type) ? value : nil
        case (.boolean, .integer(let v)): return v == 0 || v == 1 ? .boolean(v == 1) : nil
        case (.double, .real(let v)): return .double(v)
        case (.double, .integer(let v)): return .double(Double(v))
        case (.double, .text("NaN")): return .double(.nan)
        case (.float, .real(let v)): return .float(Float(v))
        case (.float, .integer(let v)): return .float(Float(v))
        case (.float, .text("NaN")): return .float(.nan)
        case (.date, .real(let v)): return .date(Date(timeIntervalSinceReferenceDate: v))
        case (.date, .integer(let v)): return .date(Date(timeIntervalSinceReferenceDate: Double(v)))
        case (.decimal, .text(let v)): return DecimalText.parse(v).map { .decimal($0) }
        case (.decimal, .integer(let v)): return .decimal(Decimal(v))
        case (.string, .text(let v)): return .string(v)
        case (.binary, .blob(let v)): return .binary(v)
        case (.uuid, .text(let v)): return UUID(uuidString: v).map { .uuid($0) }
        case (.uri, .text(let v)): return URL(string: v).map { .uri($0) }
        default: return nil
        }
    }

    /// A predicate constant as the column of `type` stores it, for comparing in SQL.
    enum Binding {
        case value(SQLiteValue)
        /// The constant never compares with values of the type (equality is false, ordering false).
        case incomparable
        /// SQL cannot reproduce the in-memory comparison exactly; evaluate in memory.
        case inexact
    }

    static func binding(_ constant: AttributeValue, for type: AttributeType) -> Binding {
        if constant.isNull { return .value(.null) }
        switch type {
        case .integer16, .integer32, .integer64, .boolean, .double, .float:
            switch constant {
            case .integer(let v): return .value(.integer(v))
            case .boolean(let v): return .value(.integer(v ? 1 : 0))
            case .double(let v): return v.isNaN ? .inexact : .value(.real(v))
            case .float(let v): return v.isNaN ? .inexact : .value(.real(Double(v)))
            case .decimal(let v):
                if let exact = Int64(exactly: NSDecimalNumber(decimal: v).doubleValue), Decimal(exact) == v {
                    return .value(.integer(exact))
                }
                return .inexact
            default: return .incomparable
            }
        case .decimal:
            switch constant {
            case .decimal(let v): return .value(.text(DecimalText.canonical(v)))
            case .integer(let v): return .value(.text(DecimalText.canonical(Decimal(v))))
            case .boolean(let v): return .value(.text(v ? "1" : "0"))
            case .double(let v):
                return v.isFinite
                    ? Decimal(string: "\(v)").map { .value(.text(DecimalText.canonical($0))) } ?? .inexact : .inexact
            case .float(let v):
                return v.isFinite
                    ? Decimal(string: "\(Double(v))").map { .value(.text(DecimalText.canonical($0))) } ?? .inexact
                    : .inexact
            default: return .incomparable
            }
        case .string: if case .string(let v) = constant { return .value(.text(v)) } else { return .incomparable }
        case .date:
            if case .date(let v) = constant {
                return .value(.real(v.timeIntervalSinceReferenceDate))
            } else {
                return .incomparable
            }
        case .binary: if case .binary(let v) = constant { return .value(.blob(v)) } else { return .incomparable }
        case .uuid: if case .uuid(let v) = constant { return .value(.text(v.uuidString)) } else { return .incomparable }
        case .uri:
            if case .uri(let v) = constant { return .value(.text(v.absoluteString)) } else { return .incomparable }
        }
    }
}
