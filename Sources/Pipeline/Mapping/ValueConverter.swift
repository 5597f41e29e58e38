import Foundation
import ObjectGraph
import Readers

/// Why a field's text could not become its attribute's value: the rule it broke, the text, and one
/// sentence for the rejects file.
public struct ConversionFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Rule: String, Sendable {
        case integer, range, decimal, number, boolean, date, uuid, binary, uri, transform
    }
    public let rule: Rule
    public let raw: String
    public let message: String
    public var description: String { message }
}

/// The text of one field of a record turned into a value of one attribute, as a pipeline field
/// says: null markers, transforms, then an exact conversion to the attribute's type — never
/// rounding, truncating or guessing. Built once per source (patterns and expressions compiled
/// here), then called per record; not thread-safe (each importing thread builds its own).
public final class ValueConverter {
    public let attribute: AttributeDescription
    private let field: PipelineConfig.Field
    private let nulls: Set<String>
    /// The null markers' lengths in bytes: text of another length is not looked up in `nulls`.
    private let nullLengths: [Int]
    /// The null markers' bytes (for `convert(_:field:)`).
    private let nullBytes: [[UInt8]]
    /// The field's bytes convert without becoming a `String` first (no transforms; an integer,
    /// decimal, or a date read by `DateText` or a compiled pattern).
    private let readsBytes: Bool
    private let trueWords: Set<String>, falseWords: Set<String>
    private let captures: [NSRegularExpression?]
    /// The field's date formats, tried in order (ISO 8601 when it names none).
    private let dateReaders: [DateReader]

    /// One date format, ready to read.
    private enum DateReader {
        case iso8601, unixSeconds
        case compiled(DatePattern, pattern: String)
        /// A pattern `DatePattern` does not compile: Foundation reads it, strictly.
        case formatter(DateFormatter, pattern: String)

        init(_ format: PipelineConfig.DateFormat) {
            switch format {
            case .iso8601, .any: self = .iso8601
            case .unixSeconds: self = .unixSeconds
            case .pattern(let pattern):
                if let compiled = DatePattern(pattern) {
                    self = .compiled(compiled, pattern: pattern)
                } else {
                    let formatter = DateFormatter()
                    formatter.locale = Locale(identifier: "en_US_POSIX")
                    formatter.timeZone = TimeZone(identifier: "UTC")
                    formatter.dateFormat = pattern
                    formatter.isLenient = false
                    self = .formatter(formatter, pattern: pattern)
                }
            }
        }

        /// Whether it reads a field's bytes (no `String` made).
        var readsBytes: Bool {
            switch self {
            case .iso8601, .compiled: return true
            case .unixSeconds, .formatter: return false
            }
        }

        func date(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
            switch self {
            case .iso8601: return DateText.parseISO8601(bytes: bytes)
            case .compiled(let pattern, _): return pattern.date(bytes: bytes)
            case .unixSeconds, .formatter: return nil
            }
        }

        func date(_ text: String) -> Date? {
            switch self {
            case .iso8601: return DateText.parseISO8601(text)
            case .unixSeconds: return DateText.parseUnixSeconds(text)
            case .compiled(let pattern, _): return pattern.date(from: text)
            case .formatter(let formatter, _):
                // Parsed strictly: the text must read back the same (no "2024-02-30" becoming March 1st).
                guard let date = formatter.date(from: text), formatter.string(from: date) == text else { return nil }
                return date
            }
        }

        var hint: String {
            switch self {
            case .iso8601: return "in ISO 8601 (2024-01-31 or 2024-01-31T12:00:00Z)"
            case .unixSeconds: return "in Unix seconds"
            case .compiled(_, let pattern), .formatter(_, let pattern): return "in the pattern \(pattern)"
            }
        }
    }

    /// - Parameters:
    ///   - sourceNulls: the source's own null markers (CSV `null:`), on top of the field's.
    public init(field: PipelineConfig.Field, attribute: AttributeDescription, sourceNulls: [String] = []) throws {
        self.field = field
        self.attribute = attribute
        nulls = Set(field.nulls + sourceNulls)
        nullLengths = Array(Set(nulls.map(\.utf8.count)))
        nullBytes = nulls.map { Array($0.utf8) }
        trueWords = Set(field.trueWords.map { $0.lowercased() })
        falseWords = Set(field.falseWords.map { $0.lowercased() })
        captures = try field.transforms.map { transform in
            if case .capture(let pattern) = transform { return try NSRegularExpression(pattern: pattern) }
            return nil
        }
        dateReaders = (field.date?.formats ?? [.iso8601]).map(DateReader.init)
        switch attribute.type {
        case .integer16, .integer32, .integer64, .decimal: readsBytes = field.transforms.isEmpty
        case .date, .calendarDate:
            readsBytes = field.transforms.isEmpty && dateReaders.allSatisfy(\.readsBytes)
        default: readsBytes = false
        }
    }

    /// The value of field `field` of `record` (absent or null: as `convert(nil)`; but see below). Integers, plain
    /// decimals and dates are read from the field's bytes; whatever that does not take (and every
    /// failure) goes through `convert(_:)` with the field's text, so results and messages are the same.
    /// A null the input states (JSON's `null`) stays null: `default` fills only what it leaves out.
    public func convert(_ record: Record, field: Int) -> Result<AttributeValue, ConversionFailure> {
        guard field < record.count, !record.isNull(field) else {
            return field < record.count && record.isStatedNull(field) ? .success(.null) : convert(nil)
        }
        // A SQL BLOB (a database file's or a dump's) is its bytes, whatever the field's text encoding.
        if attribute.type == .binary, record.isBlob(field), self.field.transforms.isEmpty,
            let bytes = Self.hex(record.string(field) ?? "")
        {
            return .success(.binary(bytes))
        }
        // A decimal a store kept as a BLOB of its digits (more than a double holds): those digits.
        if attribute.type == .decimal, record.isBlob(field), let digits = Self.hex(record.string(field) ?? "") {
            return convert(String(decoding: digits, as: UTF8.self))
        }
        if readsBytes,
            let value = record.withBytes(field, { raw in value(of: raw.assumingMemoryBound(to: UInt8.self)) })
        {
            return .success(value)
        }
        return convert(record.string(field))
    }

    /// The value of a field's bytes for the types `readsBytes` covers; `nil` for a null marker and
    /// for anything these fast paths do not read.
    private func value(of bytes: UnsafeBufferPointer<UInt8>) -> AttributeValue? {
        if nullLengths.contains(bytes.count), nullBytes.contains(where: { $0.elementsEqual(bytes) }) { return nil }
        switch attribute.type {
        case .integer16, .integer32, .integer64:
            guard let number = IntegerText.value(bytes), AttributeValue.integer(number).fitsRange(of: attribute.type)
            else {
                return nil
            }
            return .integer(number)
        case .decimal:
            return DecimalText.parsePlain(bytes: bytes).map { .decimal($0) }
        case .date, .calendarDate:
            for reader in dateReaders {
                if let date = reader.date(bytes: bytes) {
                    return attribute.type == .date || SQLDateText.isWholeDay(date) ? .date(date) : nil
                }
            }
            return nil
        default:
            return nil
        }
    }

    /// The value for a field's text (`nil`: the field is null or absent).
    public func convert(_ raw: String?) -> Result<AttributeValue, ConversionFailure> {
        guard let raw, !isNullMarker(raw) else { return .success(field.defaultValue ?? .null) }
        var text = raw
        for (index, transform) in field.transforms.enumerated() {
            switch transform {
            case .trim: text = text.trimmingCharacters(in: .whitespacesAndNewlines)
            case .lowercase: text = text.lowercased()
            case .uppercase: text = text.uppercased()
            case .replace(let from, let to): text = text.replacingOccurrences(of: from, with: to)
            case .capture:
                let expression = captures[index]!
                let range = NSRange(text.startIndex..., in: text)
                guard let match = expression.firstMatch(in: text, range: range) else {
                    return .failure(failure(.transform, raw, "does not match \(expression.pattern.debugDescription)"))
                }
                let group = match.numberOfRanges > 1 ? match.range(at: 1) : match.range
                text = Range(group, in: text).map { String(text[$0]) } ?? ""
            }
        }
        if !field.transforms.isEmpty, isNullMarker(text) { return .success(field.defaultValue ?? .null) }
        // An empty value is an absent one for every type but text and bytes (`<qty></qty>`, a quoted
        // empty CSV field), as inference takes it.
        if text.isEmpty, attribute.type != .string, attribute.type != .binary {
            return .success(field.defaultValue ?? .null)
        }
        return value(of: text, raw: raw)
    }

    /// A double or float: a number too large for a double (`1e400`) is out of range, not
    /// infinity; `inf` and `nan` written as such are what they say.
    private func floatingPoint(_ text: String, raw: String) -> Result<AttributeValue, ConversionFailure> {
        guard let number = Double(text), text.first.map({ !$0.isWhitespace }) == true else {
            return .failure(failure(.number, raw, "is not a number"))
        }
        if !number.isFinite, text.contains(where: \.isNumber) {
            return .failure(failure(.range, raw, "does not fit a double (its magnitude is above 1.8e308)"))
        }
        if attribute.type == .float {
            guard Float(text).map({ $0.isFinite || !number.isFinite }) == true else {
                return .failure(failure(.range, raw, "does not fit a float"))
            }
            return .success(.float(Float(text)!))
        }
        return .success(.double(number))
    }

    private func isNullMarker(_ text: String) -> Bool {
        !nulls.isEmpty && nullLengths.contains(text.utf8.count) && nulls.contains(text)
    }

    private func value(of text: String, raw: String) -> Result<AttributeValue, ConversionFailure> {
        let type = attribute.type
        switch type {
        case .string:
            return .success(.string(text))
        case .integer16, .integer32, .integer64:
            guard let number = Int64(text) else {
                let message =
                    Int64(text.trimmingCharacters(in: .whitespaces)) != nil
                    ? "has spaces around the number"
                    : (text.allSatisfy { $0.isNumber || $0 == "-" || $0 == "+" } && !text.isEmpty
                        ? "does not fit a 64-bit integer" : "is not a whole number")
                return .failure(failure(.integer, raw, message))
            }
            guard AttributeValue.integer(number).fitsRange(of: type) else {
                return .failure(failure(.range, raw, "does not fit \(type)"))
            }
            return .success(.integer(number))
        case .decimal:
            if let decimal = DecimalText.parsePlain(text) { return .success(.decimal(decimal)) }
            guard AttributeValueParser.isDecimalNumber(text),
                let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
            else {
                return .failure(failure(.decimal, raw, "is not a decimal number"))
            }
            // Foundation's Decimal keeps 38 significant digits and rounds beyond: refuse instead.
            let digits = text.prefix { $0 != "e" && $0 != "E" }.filter(\.isNumber).drop { $0 == "0" }
            guard digits.count <= 38 else {
                return .failure(failure(.decimal, raw, "has more than 38 significant digits"))
            }
            return .success(.decimal(decimal))
        case .double, .float:
            return floatingPoint(text, raw: raw)
        case .boolean:
            let word = text.lowercased()
            if trueWords.contains(word) { return .success(.boolean(true)) }
            if falseWords.contains(word) { return .success(.boolean(false)) }
            return .failure(
                failure(
                    .boolean, raw,
                    "is neither a true word (\(field.trueWords.joined(separator: ", "))) nor a false word "
                        + "(\(field.falseWords.joined(separator: ", ")))"
                ))
        case .date:
            return date(text).map { .success(.date($0)) } ?? .failure(failure(.date, raw, "is not a date \(dateHint)"))
        case .calendarDate:
            guard let date = date(text) else { return .failure(failure(.date, raw, "is not a date \(dateHint)")) }
            guard SQLDateText.isWholeDay(date) else {
                return .failure(failure(.date, raw, "has a time of day (UTC), and the attribute is a calendar date"))
            }
            return .success(.date(date))
        case .uuid:
            return UUID(uuidString: text).map { .success(.uuid($0)) } ?? .failure(failure(.uuid, raw, "is not a UUID"))
        case .uri:
            guard let url = URL(string: text), url.scheme != nil else {
                return .failure(failure(.uri, raw, "is not an absolute URI"))
            }
            return .success(.uri(url))
        case .binary:
            switch field.binary ?? .base64 {
            case .base64:
                return Data(base64Encoded: text).map { .success(.binary($0)) }
                    ?? .failure(failure(.binary, raw, "is not base64"))
            case .hex:
                return Self.hex(text).map { .success(.binary($0)) }
                    ?? .failure(failure(.binary, raw, "is not hexadecimal (pairs of 0-9, a-f)"))
            }
        }
    }

    private func date(_ text: String) -> Date? {
        for reader in dateReaders {
            if let date = reader.date(text) { return date }
        }
        return nil
    }

    private var dateHint: String { dateReaders.map(\.hint).joined(separator: ", or ") }

    private func failure(_ rule: ConversionFailure.Rule, _ raw: String, _ what: String) -> ConversionFailure {
        ConversionFailure(rule: rule, raw: raw, message: "\(attribute.name): \(raw.debugDescription) \(what)")
    }

    static func hex(_ text: String) -> Data? { SQLValueText.bytes(fromHex: text).map { Data($0) } }
}
