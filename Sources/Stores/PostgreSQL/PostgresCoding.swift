import Drivers
import Foundation
import ObjectGraph

/// How attribute values are kept in PostgreSQL: the column type of each attribute type, and the
/// value in binary format both ways (parameters, COPY fields, binary results).
///
/// `bigint`/`integer`/`smallint`, `boolean`, `double precision`, `real`, `timestamptz` (dates, to the
/// microsecond), `date` (calendar dates), `numeric` (`numeric(38, s)` with a declared scale), `text`
/// (strings, URIs), `uuid`, `bytea`.
enum PostgresCoding {
    static func columnType(of attribute: AttributeDescription) -> String {
        switch attribute.type {
        case .integer16: return "smallint"
        case .integer32: return "integer"
        case .integer64: return "bigint"
        case .boolean: return "boolean"
        case .double: return "double precision"
        case .float: return "real"
        case .date: return "timestamptz"
        case .calendarDate: return "date"
        case .decimal: return attribute.scale.map { "numeric(38, \($0))" } ?? "numeric"
        case .string, .uri: return "text"
        case .uuid: return "uuid"
        case .binary: return "bytea"
        }
    }

    static func wireType(_ type: AttributeType) -> PostgresType {
        switch type {
        case .integer16: return .smallint
        case .integer32: return .integer
        case .integer64: return .bigint
        case .boolean: return .boolean
        case .double: return .double
        case .float: return .real
        case .date: return .timestamptz
        case .calendarDate: return .date
        case .decimal: return .numeric
        case .string, .uri: return .text
        case .uuid: return .uuid
        case .binary: return .bytea
        }
    }

    /// Why a value cannot be kept in a column of `type`.
    struct Refusal: Error {
        let reason: String
    }

    /// The value in binary format for a column of `type`.
    /// - Throws: `Refusal` for a value PostgreSQL cannot hold as it is (a NUL character in text, an
    ///   integer outside the column's range, a value of another type).
    static func encode(_ value: AttributeValue, as type: AttributeType, scale: Int? = nil) throws -> PostgresValue {
        let wire = wireType(type)
        guard let bytes = try bytes(of: value, as: type, scale: scale) else { return .null(wire) }
        return PostgresValue(type: wire, bytes: bytes)
    }

    /// The binary bytes of a value (`nil`: NULL).
    static func bytes(of value: AttributeValue, as type: AttributeType, scale: Int? = nil) throws -> [UInt8]? {
        switch (value, type) {
        case (.null, _): return nil
        case (.integer(let v), .integer16):
            guard let narrow = Int16(exactly: v) else { throw Refusal(reason: "\(v) is outside a smallint's range") }
            return PostgresBinary.bytes(of: UInt16(bitPattern: narrow))
        case (.integer(let v), .integer32):
            guard let narrow = Int32(exactly: v) else { throw Refusal(reason: "\(v) is outside an integer's range") }
            return PostgresBinary.bytes(of: UInt32(bitPattern: narrow))
        case (.integer(let v), .integer64): return PostgresBinary.bytes(of: UInt64(bitPattern: v))
        case (.boolean(let v), .boolean): return [v ? 1 : 0]
        case (.double(let v), .double): return PostgresBinary.bytes(of: v.bitPattern)
        case (.float(let v), .float): return PostgresBinary.bytes(of: v.bitPattern)
        case (.date(let v), .date): return PostgresBinary.bytes(of: UInt64(bitPattern: try microseconds(of: v)))
        case (.date(let v), .calendarDate): return PostgresBinary.bytes(of: UInt32(bitPattern: try days(of: v)))
        case (.decimal(let v), .decimal):
            let parts = try numericParts(of: v, scale: scale)
            return PostgresBinary.numeric(
                mantissa: parts.mantissa, exponent: parts.exponent, isNegative: parts.isNegative)
        case (.string(let v), .string): return try text(v)
        case (.uri(let v), .uri): return try text(v.absoluteString)
        case (.uuid(let v), .uuid): return withUnsafeBytes(of: v.uuid) { Array($0) }
        case (.binary(let v), .binary): return Array(v)
        default: throw Refusal(reason: "\(value) is not a \(type) value")
        }
    }

    /// Writes a value straight into a COPY row, as `bytes(of:as:)` encodes it, without building
    /// arrays for the common types (the bulk load's hot path).
    static func append(_ value: AttributeValue, as type: AttributeType, scale: Int? = nil, to copy: PostgresCopy) throws
    {
        switch (value, type) {
        case (.null, _): copy.addNull()
        case (.integer(let v), .integer64): copy.add(bigint: v)
        case (.integer(let v), .integer32):
            guard let narrow = Int32(exactly: v) else { throw Refusal(reason: "\(v) is outside an integer's range") }
            copy.add(integer: narrow)
        case (.integer(let v), .integer16):
            guard let narrow = Int16(exactly: v) else { throw Refusal(reason: "\(v) is outside a smallint's range") }
            copy.add(smallint: narrow)
        case (.double(let v), .double): copy.add(bits: v.bitPattern)
        case (.float(let v), .float): copy.add(bits: v.bitPattern)
        case (.date(let v), .date): copy.add(bigint: try microseconds(of: v))
        case (.date(let v), .calendarDate): copy.add(integer: try days(of: v))
        case (.string(let v), .string):
            guard !v.utf8.contains(0) else {
                throw Refusal(reason: "PostgreSQL text cannot hold the character U+0000 (NUL)")
            }
            copy.add(v.utf8)
        case (.decimal(let v), .decimal):
            let parts = try numericParts(of: v, scale: scale)
            copy.add(numericMantissa: parts.mantissa, exponent: parts.exponent, isNegative: parts.isNegative)
        default:
            if let bytes = try bytes(of: value, as: type, scale: scale) { copy.add(bytes) } else { copy.addNull() }
        }
    }

    private static func text(_ text: String) throws -> [UInt8] {
        let bytes = Array(text.utf8)
        guard !bytes.contains(0) else {
            throw Refusal(reason: "PostgreSQL text cannot hold the character U+0000 (NUL)")
        }
        return bytes
    }

    /// The attribute value of binary `bytes` read from a column of `type`; `nil` when they are not one.
    static func decode(_ bytes: UnsafeRawBufferPointer, as type: AttributeType) -> AttributeValue? {
        switch type {
        case .integer16, .integer32, .integer64: return PostgresBinary.anyInteger(bytes).map { .integer($0) }
        case .boolean: return bytes.count == 1 ? .boolean(bytes[0] != 0) : nil
        case .double:
            guard bytes.count == 8 else { return nil }
            return .double(Double(bitPattern: PostgresBinary.integer(bytes, as: UInt64.self)))
        case .float:
            guard bytes.count == 4 else { return nil }
            return .float(Float(bitPattern: PostgresBinary.integer(bytes, as: UInt32.self)))
        case .date:
            guard bytes.count == 8 else { return nil }
            let micros = Int64(bitPattern: PostgresBinary.integer(bytes, as: UInt64.self))
            guard micros != .max, micros != .min else { return nil }
            return .date(PostgresBinary.date(microseconds: micros))
        case .calendarDate:
            guard bytes.count == 4 else { return nil }
            let days = Int32(bitPattern: PostgresBinary.integer(bytes, as: UInt32.self))
            guard days != .max, days != .min else { return nil }
            return .date(PostgresBinary.date(days: days))
        case .decimal:
            return PostgresBinary.plainText(ofNumeric: bytes).flatMap(DecimalText.parsePlain).map { .decimal($0) }
        case .string: return .string(String(decoding: bytes, as: UTF8.self))
        case .uri: return URL(string: String(decoding: bytes, as: UTF8.self)).map { .uri($0) }
        case .uuid:
            guard bytes.count == 16 else { return nil }
            var uuid = UUID().uuid
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: bytes) }
            return .uuid(UUID(uuid: uuid))
        case .binary: return .binary(Data(bytes))
        }
    }

    /// A decimal's parts, refused when a `numeric(38, scale)` column would not keep it as it is:
    /// more digits after the point than the scale (PostgreSQL would round them away), or more before
    /// it than the 38 − scale the column has room for.
    static func numericParts(of value: Decimal, scale: Int?) throws -> DecimalText.Parts {
        guard let parts = DecimalText.parts(value) else { throw Refusal(reason: "\(value) is not a finite decimal") }
        guard let scale, parts.mantissa != 0 else { return parts }
        let fraction = max(0, -parts.exponent)
        guard fraction <= scale else {
            throw Refusal(
                reason: "\(DecimalText.canonical(value)) has \(fraction) digits after the point; the column keeps "
                    + "\(scale) (numeric(38, \(scale)))")
        }
        var digits = 1, power: UInt128 = 10
        while digits < 39, parts.mantissa >= power {
            digits += 1
            if digits < 39 { power *= 10 }
        }
        let whole = max(0, digits + parts.exponent)
        guard whole <= 38 - scale else {
            throw Refusal(
                reason: "\(DecimalText.canonical(value)) has \(whole) digits before the point; numeric(38, \(scale)) "
                    + "keeps \(38 - scale)")
        }
        return parts
    }

    static func microseconds(of date: Date) throws -> Int64 {
        guard let microseconds = PostgresBinary.microseconds(of: date) else {
            throw Refusal(reason: "\(described(date)) is outside the dates PostgreSQL holds (4713 BC to 294276 AD)")
        }
        return microseconds
    }

    /// A date far outside the calendar, as seconds from 1970 (Foundation cannot print it).
    private static func described(_ date: Date) -> String {
        "the date \(String(format: "%.0f", date.timeIntervalSince1970)) seconds from 1970-01-01"
    }

    static func days(of date: Date) throws -> Int32 {
        guard let days = PostgresBinary.days(of: date) else {
            throw Refusal(
                reason: "\(described(date)) is outside the calendar dates PostgreSQL holds (4713 BC to 5874897 AD)")
        }
        return days
    }

    /// A row key as a parameter: `bigint` or `text`.
    static func key(_ reference: ManagedObjectID.Reference) -> PostgresValue {
        switch reference {
        case .integer(let key): return .bigint(key)
        case .string(let key): return .text(key)
        case .temporary: return .null(.bigint)
        }
    }

    /// A row key as a COPY field.
    static func append(key reference: ManagedObjectID.Reference, to copy: PostgresCopy) {
        switch reference {
        case .integer(let key): copy.add(bigint: key)
        case .string(let key): copy.add(key.utf8)
        case .temporary: copy.addNull()
        }
    }

    /// A row key read from a `bigint` or `text` key column.
    static func reference(_ bytes: UnsafeRawBufferPointer, isText: Bool) -> ManagedObjectID.Reference? {
        if isText { return .string(String(decoding: bytes, as: UTF8.self)) }
        return PostgresBinary.anyInteger(bytes).map { .integer($0) }
    }
}
