import Foundation

/// PostgreSQL's type OIDs for the types Sluice reads and writes in binary format.
public enum PostgresType: UInt32, Sendable {
    case boolean = 16
    case bytea = 17
    case bigint = 20
    case smallint = 21
    case integer = 23
    case text = 25
    case real = 700
    case double = 701
    case date = 1082
    case timestamptz = 1184
    case numeric = 1700
    case uuid = 2950
    case booleanArray = 1000
    case byteaArray = 1001
    case smallintArray = 1005
    case integerArray = 1007
    case textArray = 1009
    case bigintArray = 1016
    case realArray = 1021
    case doubleArray = 1022
    case dateArray = 1182
    case timestamptzArray = 1185
    case numericArray = 1231
    case uuidArray = 2951

    /// The one-dimensional array type of this element type (`nil` for array types).
    public var arrayType: PostgresType? {
        switch self {
        case .boolean: return .booleanArray
        case .bytea: return .byteaArray
        case .smallint: return .smallintArray
        case .integer: return .integerArray
        case .text: return .textArray
        case .bigint: return .bigintArray
        case .real: return .realArray
        case .double: return .doubleArray
        case .date: return .dateArray
        case .timestamptz: return .timestamptzArray
        case .numeric: return .numericArray
        case .uuid: return .uuidArray
        default: return nil
        }
    }

    /// The SQL name of the type, for casts (`bigint[]`).
    public var sqlName: String {
        switch self {
        case .boolean: return "boolean"
        case .bytea: return "bytea"
        case .bigint: return "bigint"
        case .smallint: return "smallint"
        case .integer: return "integer"
        case .text: return "text"
        case .real: return "real"
        case .double: return "double precision"
        case .date: return "date"
        case .timestamptz: return "timestamptz"
        case .numeric: return "numeric"
        case .uuid: return "uuid"
        case .booleanArray: return "boolean[]"
        case .byteaArray: return "bytea[]"
        case .smallintArray: return "smallint[]"
        case .integerArray: return "integer[]"
        case .textArray: return "text[]"
        case .bigintArray: return "bigint[]"
        case .realArray: return "real[]"
        case .doubleArray: return "double precision[]"
        case .dateArray: return "date[]"
        case .timestamptzArray: return "timestamptz[]"
        case .numericArray: return "numeric[]"
        case .uuidArray: return "uuid[]"
        }
    }
}

/// A value in PostgreSQL's binary format with its type (`bytes` nil: NULL): what statements take as
/// parameters and `COPY … (FORMAT binary)` takes as fields. Every encoding is the server's own
/// `*send`/`*recv` format, so no value is ever spliced into SQL text.
public struct PostgresValue: Sendable, Equatable {
    public var type: PostgresType
    public var bytes: [UInt8]?

    public init(type: PostgresType, bytes: [UInt8]?) {
        self.type = type
        self.bytes = bytes
    }

    public static func null(_ type: PostgresType) -> PostgresValue { PostgresValue(type: type, bytes: nil) }

    public static func bigint(_ value: Int64) -> PostgresValue {
        PostgresValue(type: .bigint, bytes: PostgresBinary.bytes(of: UInt64(bitPattern: value)))
    }

    public static func integer(_ value: Int32) -> PostgresValue {
        PostgresValue(type: .integer, bytes: PostgresBinary.bytes(of: UInt32(bitPattern: value)))
    }

    public static func text(_ value: String) -> PostgresValue { PostgresValue(type: .text, bytes: Array(value.utf8)) }

    /// A one-dimensional array of values of one element type (NULL elements allowed).
    public static func array(of elements: [PostgresValue], type: PostgresType) -> PostgresValue {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20 + elements.reduce(0) { $0 + 4 + ($1.bytes?.count ?? 0) })
        let hasNull = elements.contains { $0.bytes == nil }
        for word in [1, hasNull ? 1 : 0, Int32(bitPattern: type.rawValue), Int32(elements.count), 1] as [Int32] {
            bytes += PostgresBinary.bytes(of: UInt32(bitPattern: word))
        }
        for element in elements {
            guard let value = element.bytes else {
                bytes += PostgresBinary.bytes(of: UInt32.max)
                continue
            }
            bytes += PostgresBinary.bytes(of: UInt32(value.count))
            bytes += value
        }
        return PostgresValue(type: type.arrayType ?? type, bytes: bytes)
    }
}

/// Encoders and decoders of PostgreSQL's binary formats (big-endian integers, IEEE floats, dates as
/// days and timestamps as microseconds since 2000-01-01, numerics as base-10000 digit groups).
public enum PostgresBinary {
    /// Seconds from 2000-01-01 (PostgreSQL's epoch) to 2001-01-01 (Foundation's reference date).
    public static let epochOffset: Double = 366 * 86_400

    public static func bytes<T: FixedWidthInteger>(of value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    public static func integer<T: FixedWidthInteger>(_ bytes: UnsafeRawBufferPointer, as type: T.Type) -> T {
        var value: T = 0
        for byte in bytes.prefix(MemoryLayout<T>.size) { value = value << 8 | T(truncatingIfNeeded: byte) }
        return value
    }

    /// An integer column of any width (2, 4 or 8 bytes).
    public static func anyInteger(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        switch bytes.count {
        case 2: return Int64(Int16(bitPattern: integer(bytes, as: UInt16.self)))
        case 4: return Int64(Int32(bitPattern: integer(bytes, as: UInt32.self)))
        case 8: return Int64(bitPattern: integer(bytes, as: UInt64.self))
        default: return nil
        }
    }

    /// Microseconds since 2000-01-01 UTC for a date (rounded to the microsecond, PostgreSQL's
    /// precision); `nil` outside what `timestamptz` holds (4713 BC to 294276 AD).
    public static func microseconds(of date: Date) -> Int64? {
        let value = ((date.timeIntervalSinceReferenceDate + epochOffset) * 1_000_000).rounded()
        guard let microseconds = Int64(exactly: value), timestampRange.contains(microseconds) else { return nil }
        return microseconds
    }

    /// PostgreSQL's `MIN_TIMESTAMP ..< END_TIMESTAMP`, in microseconds since 2000.
    static let timestampRange: Range<Int64> = -211_813_488_000_000_000..<9_223_371_331_200_000_000

    public static func date(microseconds: Int64) -> Date {
        // Whole seconds and the rest apart, so the double is the one a microsecond text would parse to.
        let seconds = microseconds.quotientAndRemainder(dividingBy: 1_000_000)
        return Date(
            timeIntervalSinceReferenceDate: Double(seconds.quotient) - epochOffset + Double(seconds.remainder) / 1e6)
    }

    /// Days since 2000-01-01 for a date at midnight UTC; `nil` outside what `date` holds (4713 BC to
    /// 5874897 AD).
    public static func days(of date: Date) -> Int32? {
        let value = ((date.timeIntervalSinceReferenceDate + epochOffset) / 86_400).rounded(.down)
        guard let days = Int32(exactly: value), days >= -2_451_545, days < 2_145_031_949 else { return nil }
        return days
    }

    public static func date(days: Int32) -> Date {
        Date(timeIntervalSinceReferenceDate: Double(days) * 86_400 - epochOffset)
    }

    /// The binary numeric of `mantissa` × 10^`exponent`, the mantissa without trailing decimal zeros
    /// (`DecimalText.parts`): base-10000 digits with the display scale of the plain text (`12.5`: 1).
    /// Handed to `emit` as the 16-bit words of the wire format, header first.
    @inline(__always)
    public static func numericWords(mantissa: UInt128, exponent: Int, isNegative: Bool, _ emit: (UInt16) -> Void) {
        let scale = max(0, -exponent)
        // Zero digits after the mantissa's last to reach a group boundary (after the point, or the
        // exponent's remainder): the lowest group holds only the mantissa's last `4 - pad` digits.
        let pad = exponent < 0 ? (4 - scale % 4) % 4 : exponent % 4
        func power(_ exponent: Int) -> UInt64 {
            switch exponent {
            case 0: 1
            case 1: 10
            case 2: 100
            case 3: 1000
            default: 10_000
            }
        }
        /// `value` divided by `divisor` (at most 10,000) with the remainder, 64 bits at a time.
        func divide(_ value: UInt128, by divisor: UInt64) -> (UInt128, UInt64) {
            let high = UInt64(truncatingIfNeeded: value >> 64), low = UInt64(truncatingIfNeeded: value)
            if high == 0 { return (UInt128(low / divisor), low % divisor) }
            let (quotient, remainder) = divisor.dividingFullWidth((high % divisor, low))
            return (UInt128(high / divisor) << 64 | UInt128(quotient), remainder)
        }
        // At most 11 groups: 2^128 has 39 digits, and up to 3 zeros are added.
        withUnsafeTemporaryAllocation(of: UInt16.self, capacity: 12) { groups in
            var count = 0, rest = mantissa
            if pad > 0 && rest != 0 {
                let (quotient, remainder) = divide(rest, by: power(4 - pad))
                groups[0] = UInt16(remainder * power(pad))
                (count, rest) = (1, quotient)
            }
            while rest != 0 {  // least significant group first
                let (quotient, remainder) = divide(rest, by: 10_000)
                groups[count] = UInt16(remainder)
                (count, rest) = (count + 1, quotient)
            }
            let fractionGroups = exponent < 0 ? (scale + pad) / 4 : 0, zeroGroups = exponent > 0 ? exponent / 4 : 0
            emit(UInt16(count))
            emit(UInt16(bitPattern: Int16(count == 0 ? 0 : count - 1 - fractionGroups + zeroGroups)))
            emit(isNegative && count > 0 ? 0x4000 : 0)
            emit(UInt16(scale))
            for index in stride(from: count - 1, through: 0, by: -1) { emit(groups[index]) }
        }
    }

    /// `numericWords` as bytes.
    public static func numeric(mantissa: UInt128, exponent: Int, isNegative: Bool) -> [UInt8] {
        var out: [UInt8] = []
        numericWords(mantissa: mantissa, exponent: exponent, isNegative: isNegative) { word in
            out.append(UInt8(word >> 8))
            out.append(UInt8(word & 0xFF))
        }
        return out
    }

    /// PostgreSQL's binary numeric as plain text with its display scale (`nil`: NaN or infinity,
    /// which no decimal holds, or malformed bytes).
    public static func plainText(ofNumeric bytes: UnsafeRawBufferPointer) -> String? {
        guard bytes.count >= 8 else { return nil }
        func word(_ at: Int) -> UInt16 {
            integer(UnsafeRawBufferPointer(rebasing: bytes[at..<at + 2]), as: UInt16.self)
        }
        let count = Int(word(0)), weight = Int(Int16(bitPattern: word(2))), sign = word(4), scale = Int(word(6))
        guard sign == 0 || sign == 0x4000, bytes.count == 8 + 2 * count else { return nil }
        let groups = (0..<count).map { Int(word(8 + 2 * $0)) }
        var whole = ""
        if weight >= 0 {
            for position in 0...weight {
                let group = position < groups.count ? groups[position] : 0
                let text = String(group)
                whole += position == 0 ? text : String(repeating: "0", count: 4 - text.count) + text
            }
        } else {
            whole = "0"
        }
        var fraction = ""
        var position = weight + 1
        while fraction.count < scale {
            let group = position >= 0 && position < groups.count ? groups[position] : 0
            let text = String(group)
            fraction += String(repeating: "0", count: 4 - text.count) + text
            position += 1
        }
        fraction = String(fraction.prefix(scale))
        let isZero = groups.allSatisfy { $0 == 0 }
        return (sign == 0x4000 && !isZero ? "-" : "") + whole + (scale > 0 ? "." + fraction : "")
    }
}
