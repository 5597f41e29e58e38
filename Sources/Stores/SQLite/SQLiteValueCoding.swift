import Drivers
import Foundation
import ObjectGraph

/// Attribute values to and from SQLite storage classes, exactly (a value read back equals the value
/// written), for one store's layout:
///
/// | type | graph layout | plain layout |
/// |---|---|---|
/// | integers | INTEGER | INTEGER |
/// | boolean | INTEGER 0/1 | INTEGER 0/1 (`BOOLEAN` column) |
/// | double, float | REAL | REAL |
/// | date | REAL seconds since 2001 | TEXT `YYYY-MM-DD HH:MM:SS[.fff]` UTC (`SQLDateText`), or unix seconds |
/// | calendarDate | REAL seconds since 2001 | TEXT `YYYY-MM-DD` (`DATE` column), with either date storage |
/// | decimal | TEXT, canonical | INTEGER or REAL where that is exact, else the canonical text as a BLOB |
/// | string, UUID, URI | TEXT | TEXT |
/// | binary | BLOB | BLOB |
///
/// A double NaN, which SQLite would turn into NULL, is stored as the text `NaN`. A plain decimal
/// column has NUMERIC affinity, which would round a text of more than 15 digits to a REAL: such
/// a value goes in as a BLOB of its digits instead, and SQL no longer orders that column right
/// (nor a date column holding a date outside years 0000–9999, or a unix date no REAL holds
/// exactly, kept as text). The store records such types (`unorderedTypes`) and has those
/// comparisons and sorts finished in memory.
final class SQLiteValueCoding {
    let layout: SQLiteLayout
    /// Types of which some stored value does not order right in SQL (see above).
    private(set) var unorderedTypes: Set<AttributeType>
    /// Whether `unorderedTypes` grew since the store last wrote it.
    var unorderedTypesChanged = false

    /// Seconds from 1970-01-01 to 2001-01-01.
    private static let unixOffset: Int64 = 978_307_200

    init(layout: SQLiteLayout, unorderedTypes: Set<AttributeType> = []) {
        self.layout = layout
        self.unorderedTypes = unorderedTypes
    }

    private func noteUnordered(_ type: AttributeType) {
        guard !unorderedTypes.contains(type) else { return }
        unorderedTypes.insert(type)
        unorderedTypesChanged = true
    }

    /// Binds `value` as a column of `type` stores it (the type matters only to calendar dates).
    func bind(_ value: AttributeValue, as type: AttributeType, to statement: SQLiteStatement, at index: Int32) {
        switch value {
        case .null: statement.bindNull(at: index)
        case .integer(let v): statement.bind(v, at: index)
        case .boolean(let v): statement.bind(Int64(v ? 1 : 0), at: index)
        case .double(let v): if v.isNaN { statement.bind("NaN", at: index) } else { statement.bind(v, at: index) }
        case .float(let v):
            if v.isNaN { statement.bind("NaN", at: index) } else { statement.bind(Double(v), at: index) }
        case .date(let v):
            if layout.isGraph {
                statement.bind(v.timeIntervalSinceReferenceDate, at: index)
            } else if type == .calendarDate {
                if !SQLDateText.isOrderable(v) { noteUnordered(.calendarDate) }
                SQLDateText.withDayUTF8(v) { statement.bindText(utf8: $0, at: index) }
            } else if case .plain(let options) = layout, options.dates == .iso8601 {
                if !SQLDateText.isOrderable(v) { noteUnordered(.date) }
                SQLDateText.withUTF8(v) { statement.bindText(utf8: $0, at: index) }
            } else {
                statement.bind(storedDate(v, noting: true), at: index)
            }
        case .decimal(let v):
            if layout.isGraph {
                DecimalText.withCanonicalUTF8(v) { statement.bindText(utf8: $0, at: index) }
            } else {
                bindPlainDecimal(v, to: statement, at: index)
            }
        case .string(let v): statement.bind(v, at: index)
        case .binary(let v): statement.bind(v, at: index)
        case .uuid(let v): statement.bind(v.uuidString, at: index)
        case .uri(let v): statement.bind(v.absoluteString, at: index)
        }
    }

    /// A plain decimal: INTEGER when whole and within 64 bits, REAL when the double's shortest
    /// spelling is the same number, else its canonical digits as a BLOB.
    private func bindPlainDecimal(_ value: Decimal, to statement: SQLiteStatement, at index: Int32) {
        switch DecimalText.exactNumber(value) {
        case .integer(let integer)?: return statement.bind(integer, at: index)
        case .double(let real)?: return statement.bind(real, at: index)
        case nil: break
        }
        DecimalText.withCanonicalUTF8(value) { bytes in
            switch Self.plainDecimal(bytes) {
            case .integer(let integer): statement.bind(integer, at: index)
            case .real(let real): statement.bind(real, at: index)
            default:
                noteUnordered(.decimal)
                statement.bind(Data(bytes), at: index)
            }
        }
    }

    /// The INTEGER or REAL that holds a canonical decimal text exactly, or `.blob` of its digits.
    static func plainDecimal(_ bytes: UnsafeBufferPointer<UInt8>) -> SQLiteValue {
        var significant = 0, seenNonZero = false, hasPoint = false
        var integer: Int64 = 0, overflow = false
        for byte in bytes {
            if byte == UInt8(ascii: ".") {
                hasPoint = true
            } else if byte >= 48 && byte <= 57 {
                if byte != 48 { seenNonZero = true }
                if seenNonZero { significant += 1 }
                if !hasPoint {
                    let (times, o1) = integer.multipliedReportingOverflow(by: 10)
                    let (plus, o2) = times.addingReportingOverflow(Int64(byte - 48))
                    integer = plus
                    overflow = overflow || o1 || o2
                }
            }
        }
        let isNegative = bytes.first == UInt8(ascii: "-")
        if !hasPoint, !overflow { return .integer(isNegative ? -integer : integer) }
        // strtod of a NUL-terminated copy: the double nearest the text.
        let real = withUnsafeTemporaryAllocation(of: CChar.self, capacity: bytes.count + 1) { text in
            for (index, byte) in bytes.enumerated() { text[index] = CChar(bitPattern: byte) }
            text[bytes.count] = 0
            return strtod(text.baseAddress!, nil)
        }
        guard real.isFinite else { return .blob(Data(bytes)) }
        // Up to 15 significant digits always come back from the nearest double; more only sometimes.
        if significant <= 15 { return .real(real) }
        let text = String(decoding: bytes, as: UTF8.self)
        if let back = DecimalText.parse("\(real)"), DecimalText.canonical(back) == text { return .real(real) }
        return .blob(Data(bytes))
    }

    /// A plain date as stored: ISO text, or unix seconds (INTEGER when whole, REAL when exact, else
    /// the ISO text). With `noting`, a stored form SQL cannot order is recorded.
    private func storedDate(_ date: Date, noting: Bool) -> SQLiteValue {
        guard case .plain(let options) = layout else { return .real(date.timeIntervalSinceReferenceDate) }
        let iso = { () -> SQLiteValue in
            if noting, !SQLDateText.isOrderable(date) { self.noteUnordered(.date) }
            return .text(SQLDateText.format(date))
        }
        guard options.dates == .unix else { return iso() }
        let interval = date.timeIntervalSinceReferenceDate
        if interval.rounded(.down) == interval, abs(interval) < 9e15 {
            return .integer(Int64(interval) + Self.unixOffset)
        }
        let unix = interval + Double(Self.unixOffset)
        if unix - Double(Self.unixOffset) == interval { return .real(unix) }
        if noting { noteUnordered(.date) }
        return .text(SQLDateText.format(date))
    }

    /// The attribute value of a stored value, or `nil` when the stored value cannot be one of `type`
    /// (a file written by another program): the caller reports it as a corrupt row.
    func attributeValue(_ stored: SQLiteValue, as type: AttributeType) -> AttributeValue? {
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
        case (.calendarDate, .text(let v)):
            return SQLDateText.parse(v).flatMap { SQLDateText.isWholeDay($0) ? .date($0) : nil }
        case (.calendarDate, .real), (.calendarDate, .integer):
            return attributeValue(stored, as: .date).flatMap { $0.isStorable(as: .calendarDate) ? $0 : nil }
        case (.date, .real(let v)):
            return .date(
                layout.isGraph
                    ? Date(timeIntervalSinceReferenceDate: v)
                    : Date(timeIntervalSinceReferenceDate: v - Double(Self.unixOffset)))
        case (.date, .integer(let v)):
            return .date(
                layout.isGraph
                    ? Date(timeIntervalSinceReferenceDate: Double(v))
                    : Date(timeIntervalSinceReferenceDate: Double(v - Self.unixOffset)))
        case (.date, .text(let v)): return SQLDateText.parse(v).map { .date($0) }
        case (.decimal, .text(let v)): return DecimalText.parse(v).map { .decimal($0) }
        case (.decimal, .blob(let v)): return DecimalText.parse(String(decoding: v, as: UTF8.self)).map { .decimal($0) }
        case (.decimal, .integer(let v)): return .decimal(Decimal(v))
        case (.decimal, .real(let v)): return v.isFinite ? DecimalText.parse("\(v)").map { .decimal($0) } : nil
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

    /// A constant for `==`/`IN` (`ordering` false) or `<`, `>`, BETWEEN (`ordering` true) against a
    /// column of `type`.
    func binding(_ constant: AttributeValue, for type: AttributeType, ordering: Bool) -> Binding {
        if constant.isNull { return .value(.null) }
        if ordering, !layout.isGraph, unorderedTypes.contains(type) { return .inexact }
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
            let decimal: Decimal
            switch constant {
            case .decimal(let v): decimal = v
            case .integer(let v): decimal = Decimal(v)
            case .boolean(let v): decimal = v ? 1 : 0
            case .double(let v):
                guard v.isFinite, let parsed = Decimal(string: "\(v)") else { return .inexact }
                decimal = parsed
            case .float(let v):
                guard v.isFinite, let parsed = Decimal(string: "\(Double(v))") else { return .inexact }
                decimal = parsed
            default: return .incomparable
            }
            if layout.isGraph { return .value(.text(DecimalText.canonical(decimal))) }
            let stored = DecimalText.withCanonicalUTF8(decimal) { Self.plainDecimal($0) }
            if ordering, case .blob = stored { return .inexact }
            return .value(stored)
        case .string: if case .string(let v) = constant { return .value(.text(v)) } else { return .incomparable }
        case .date:
            guard case .date(let v) = constant else { return .incomparable }
            if layout.isGraph { return .value(.real(v.timeIntervalSinceReferenceDate)) }
            let stored = storedDate(v, noting: false)
            if ordering, case .text = stored, !SQLDateText.isOrderable(v) || isUnixLayout { return .inexact }
            return .value(stored)
        case .calendarDate:
            // `YYYY-MM-DD` text orders before the same day's `YYYY-MM-DD HH:MM:SS`, as midnight does
            // before any time of that day: a constant with a time compares right as text too.
            guard case .date(let v) = constant else { return .incomparable }
            if layout.isGraph { return .value(.real(v.timeIntervalSinceReferenceDate)) }
            if ordering, !SQLDateText.isOrderable(v) { return .inexact }
            return .value(.text(SQLDateText.formatDay(v)))
        case .binary: if case .binary(let v) = constant { return .value(.blob(v)) } else { return .incomparable }
        case .uuid: if case .uuid(let v) = constant { return .value(.text(v.uuidString)) } else { return .incomparable }
        case .uri:
            if case .uri(let v) = constant { return .value(.text(v.absoluteString)) } else { return .incomparable }
        }
    }

    private var isUnixLayout: Bool {
        if case .plain(let options) = layout { return options.dates == .unix }
        return false
    }

    /// Whether `ORDER BY` a column of `type` (with the collation `collation(for:)` gives) orders
    /// values as the in-memory sort does.
    func sortsInSQL(_ type: AttributeType) -> Bool {
        layout.isGraph || !unorderedTypes.contains(type)
    }

    /// The collation comparisons and sorts of a column of `type` need (graph decimals are text).
    func collation(for type: AttributeType) -> String {
        layout.isGraph && type == .decimal ? " COLLATE SLUICE_DECIMAL" : ""
    }
}
