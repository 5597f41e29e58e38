import Foundation

/// Turns text from a config, model or fixture file into an attribute value of a given type — exactly,
/// or not at all: no rounding, no silent truncation.
public enum AttributeValueParser {
    /// The value `text` denotes for `type`, or `nil` when it is not a valid value of that type.
    /// Integers must fit the type's width; decimals keep every digit; dates are ISO 8601
    /// (`2024-01-31`, `2024-01-31T12:00:00Z`, fractional seconds allowed); binary is base64.
    public static func parse(_ text: String, as type: AttributeType) -> AttributeValue? {
        switch type {
        case .integer16, .integer32, .integer64:
            guard let value = Int64(text) else { return nil }
            let parsed = AttributeValue.integer(value)
            return parsed.fitsRange(of: type) ? parsed : nil
        case .decimal:
            guard isDecimalNumber(text),
                let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
            else { return nil }
            return .decimal(value)
        case .double: return Double(text).map { .double($0) }
        case .float: return Float(text).map { .float($0) }
        case .string: return .string(text)
        case .boolean:
            switch text.lowercased() {
            case "true", "yes": return .boolean(true)
            case "false", "no": return .boolean(false)
            default: return nil
            }
        case .date: return DateText.parseISO8601(text).map { .date($0) }
        case .calendarDate: return DateText.parseISO8601(text).flatMap { SQLDateText.isWholeDay($0) ? .date($0) : nil }
        case .binary: return Data(base64Encoded: text).map { .binary($0) }
        case .uuid: return UUID(uuidString: text).map { .uuid($0) }
        case .uri: return URL(string: text).map { .uri($0) }
        }
    }

    /// A short hint on how to write a value of `type`, for error messages.
    public static func formatHint(for type: AttributeType) -> String {
        switch type {
        case .date: return " (write dates as ISO 8601: 2024-01-31 or 2024-01-31T12:00:00Z)"
        case .calendarDate: return " (write calendar dates as 2024-01-31)"
        case .binary: return " (write binary values as base64)"
        case .integer16, .integer32, .integer64: return " (a whole number that fits \(type))"
        case .decimal: return " (a decimal number such as 19.99)"
        case .boolean: return " (true or false)"
        default: return ""
        }
    }

    /// Whether `text` is a decimal number as written in data: `[+-]digits[.digits][e[+-]digits]` or
    /// `[+-].digits[…]` — what `Decimal(string:)` may then read (it would also read a number at the
    /// start of any text, `12abc` included).
    package static func isDecimalNumber(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            var index = 0
            func digits() -> Int {
                let start = index
                while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 { index += 1 }
                return index - start
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            var mantissa = digits()
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                mantissa += digits()
            }
            guard mantissa > 0 else { return false }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    index += 1
                }
                guard digits() > 0 else { return false }
            }
            return index == bytes.count
        }
    }
}
