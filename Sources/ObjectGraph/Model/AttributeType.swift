/// The type of an attribute, as model files spell it.
///
/// `date` is a point in time (Core Data's `Date`); `calendarDate` is a day without a time — a
/// birthday, an invoice date — whose values are `.date` at midnight UTC, stored and exported as
/// `YYYY-MM-DD` (Core Data has no such type: an Xcode model's `Date` is `date`).
public enum AttributeType: String, Sendable, CaseIterable, CustomStringConvertible {
    case integer16, integer32, integer64, decimal, double, float, string, boolean, date, calendarDate, binary, uuid, uri

    /// Numeric and date types accept min/max value rules.
    public var isOrdered: Bool {
        switch self {
        case .integer16, .integer32, .integer64, .decimal, .double, .float, .date, .calendarDate: return true
        default: return false
        }
    }

    public var isInteger: Bool { self == .integer16 || self == .integer32 || self == .integer64 }

    /// A timestamp or a calendar date: values are `.date`.
    public var isDate: Bool { self == .date || self == .calendarDate }

    public var description: String { rawValue }
}
