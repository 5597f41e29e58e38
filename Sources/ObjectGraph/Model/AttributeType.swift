/// The type of an attribute, as model files spell it.
public enum AttributeType: String, Sendable, CaseIterable, CustomStringConvertible {
    case integer16, integer32, integer64, decimal, double, float, string, boolean, date, binary, uuid, uri

    /// Numeric and date types accept min/max value rules.
    public var isOrdered: Bool {
        switch self {
        case .integer16, .integer32, .integer64, .decimal, .double, .float, .date: return true
        default: return false
        }
    }

    public var isInteger: Bool { self == .integer16 || self == .integer32 || self == .integer64 }

    public var description: String { rawValue }
}
