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

    /// Microseconds since 2000-01-01 UTC for a date (rounded to the microsecond, PostgreSQL's precision).
    public static func microseconds(of date: Date) -> Int64 {
        Int64(((date.timeIntervalSinceReferenceDate + epochOffset) * 1_000_000).rounded())
    }

    public static func date(microseconds: Int64) -> Date {
        // Whole seconds and the rest apart, so the double is the one a microsecond text would parse to.
        let seconds = microseconds.quotientAndRemainder(dividingBy: 1_000_000)
        return Date(
            timeIntervalSinceReferenceDate: Double(seconds.quotient) - epochOffset + Double(seconds.remainder) / 1e6)
    }

    /// Days since 2000-01-01 for a date at midnight UTC.
    public static func days(of date: Date) -> Int32 {
        Int32(((date.timeIntervalSinceReferenceDate + epochOffset) / 86_400).rounded(.down))
    }

    public static func date(days: Int32) -> Date {
        Date(timeIntervalSinceReferenceDate: Double(days) * 86_400 - epochOffset)
    }

    /// A decimal number in plain text (`-123.4500`, `0.5`; no exponent) as PostgreSQL's binary numeric.
    /// `nil` when the text is not such a number.
    public static func numeric(fromPlainText text: String) -> [UInt8]? {
        var out: [UInt8] = []
        var text = text
        return text.withUTF8 { appendNumeric(plainUTF8: $0, to: &out) } ? out : nil
    }

    /// Appends the binary numeric of plain decimal text (`-123.4500`) to `out`, without allocating;
    /// false (nothing appended) when the text is not such a number.
    public static func appendNumeric(plainUTF8 text: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) -> Bool {
        var start = 0
        var negative = false
        if let first = text.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            start = 1
        }
        var point = text.count
        for index in start..<text.count {
            let byte = text[index]
            if byte == UInt8(ascii: ".") {
                guard point == text.count else { return false }
                point = index
            } else if byte < 48 || byte > 57 {
                return false
            }
        }
        let wholeCount = point - start, scale = point == text.count ? 0 : text.count - point - 1
        guard wholeCount + scale > 0 else { return false }
        // Digit `i` of the number padded to whole groups of four on both sides of the point.
        let leading = (4 - wholeCount % 4) % 4
        let wholeGroups = (wholeCount + leading) / 4, fractionGroups = (scale + 3) / 4
        func digit(_ position: Int) -> Int16 {
            let wholePosition = position - leading
            if wholePosition < 0 { return 0 }
            if wholePosition < wholeCount { return Int16(text[start + wholePosition] - 48) }
            let fractionPosition = wholePosition - wholeCount
            return fractionPosition < scale ? Int16(text[point + 1 + fractionPosition] - 48) : 0
        }
        func group(_ index: Int) -> Int16 {
            (0..<4).reduce(Int16(0)) { $0 * 10 + digit(index * 4 + $1) }
        }
        var first = 0, last = wholeGroups + fractionGroups - 1
        while first <= last, group(first) == 0 { first += 1 }
        while last >= first, group(last) == 0 { last -= 1 }
        let count = max(0, last - first + 1)
        let weight = count == 0 ? 0 : wholeGroups - 1 - first
        out += bytes(of: UInt16(count))
        out += bytes(of: UInt16(bitPattern: Int16(weight)))
        out += bytes(of: UInt16(negative && count > 0 ? 0x4000 : 0))
        out += bytes(of: UInt16(scale))
        if count > 0 { for index in first...last { out += bytes(of: UInt16(bitPattern: group(index))) } }
        return true
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
