import Foundation

/// Canonical decimal text (no exponent, no trailing zeros: `1.5`, `-0.0001`, `1000`), the form
/// decimals are stored in, so that equal values are equal text (and unique indexes see them equal).
///
/// Same output as `Decimal.description`, about 8x faster: it reads the value's fixed 20-byte layout
/// (exponent; length, sign; sixteen mantissa bytes, up to 38 digits) and writes digits
/// into a stack buffer. A self-check at first use compares it with `description` and falls back to
/// `description` if the layout differs.
public enum DecimalText {
    public static func canonical(_ value: Decimal) -> String {
        withCanonicalUTF8(value) { String(decoding: $0, as: UTF8.self) }
    }

    /// The canonical text with at least `scale` digits after the point (`2684` → `2684.00` for 2): how
    /// a decimal of a declared scale is printed. Digits beyond the scale are kept, never rounded.
    public static func text(_ value: Decimal, scale: Int?) -> String {
        let text = canonical(value)
        guard let scale, scale > 0 else { return text }
        let have = fractionDigits(text)
        if have >= scale { return text }
        return text + (have == 0 ? "." : "") + String(repeating: "0", count: scale - have)
    }

    /// The digits after the point of the canonical text (`1.50` has 1, `1000` none).
    public static func fractionDigits(of value: Decimal) -> Int { fractionDigits(canonical(value)) }

    private static func fractionDigits(_ text: String) -> Int {
        guard let point = text.utf8.firstIndex(of: UInt8(ascii: ".")) else { return 0 }
        return text.utf8.distance(from: point, to: text.utf8.endIndex) - 1
    }

    /// Calls `body` with the canonical text's UTF-8 bytes (valid only during the call).
    public static func withCanonicalUTF8<R>(
        _ value: Decimal, _ body: (UnsafeBufferPointer<UInt8>) throws -> R
    ) rethrows -> R {
        guard layoutIsKnown, let (mantissa, exponent, isNegative) = parts(of: value) else {
            var text = value.description
            return try text.withUTF8(body)
        }
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 192) { buffer in
            try body(UnsafeBufferPointer(rebasing: buffer[..<format(mantissa, exponent, isNegative, into: buffer)]))
        }
    }

    /// A decimal as a number SQL holds exactly: a whole value within 64 bits as an integer, one of
    /// at most 15 significant digits as the double nearest it (which gives those digits back).
    public enum ExactNumber: Equatable, Sendable {
        case integer(Int64)
        case double(Double)
    }

    /// `value` as an `ExactNumber` without going through text, for the common cases; `nil` for the
    /// rest (more digits, larger exponents, NaN), which callers decide on from the canonical text.
    /// The double is found exactly: a mantissa below 10^15 and a power of ten up to 10^22 are both
    /// doubles, and one division of doubles is correctly rounded.
    public static func exactNumber(_ value: Decimal) -> ExactNumber? {
        guard layoutIsKnown, let (mantissa, exponent, isNegative) = parts(of: value) else { return nil }
        if mantissa == 0 { return .integer(0) }
        if exponent >= 0 {
            guard exponent <= 18, mantissa <= UInt128(Int64.max) else { return nil }
            let (whole, overflow) = Int64(mantissa).multipliedReportingOverflow(by: integerPowersOfTen[exponent])
            guard !overflow else { return nil }
            return .integer(isNegative ? -whole : whole)
        }
        guard mantissa < 1_000_000_000_000_000, exponent >= -22 else { return nil }
        let magnitude = Double(UInt64(mantissa)) / doublePowersOfTen[-exponent]
        return .double(isNegative ? -magnitude : magnitude)
    }

    private static let integerPowersOfTen: [Int64] = (0...18).map { power in
        (0..<power).reduce(Int64(1)) { product, _ in product * 10 }
    }
    private static let doublePowersOfTen: [Double] = (0...22).map { pow(10, Double($0)) }

    /// The decimal a stored text holds: canonical text with at most 38 digits is read directly (about
    /// 20x faster than `Decimal(string:)`, which the rest goes through); `nil` for text that is not
    /// a decimal number.
    public static func parse(_ text: String) -> Decimal? {
        if parserIsKnown, let value = parsePlain(text) { return value }
        return Decimal(string: text, locale: posix)
    }

    private static let posix = Locale(identifier: "en_US_POSIX")

    /// `[-]digits[.digits]`, at most 38 significant digits (what a `Decimal` holds), read exactly; `nil` for any other
    /// text (which may still be a decimal: callers go on to `Decimal(string:)` after checking its form).
    public static func parsePlain(_ text: String) -> Decimal? {
        var text = text
        return text.withUTF8(parsePlain(bytes:))
    }

    /// `parsePlain` of UTF-8 bytes.
    public static func parsePlain(bytes: UnsafeBufferPointer<UInt8>) -> Decimal? {
        plainParts(bytes: bytes).map { make($0.mantissa, exponent: $0.exponent, isNegative: $0.isNegative) }
    }

    /// A decimal as `mantissa` × 10^`exponent`, the mantissa without trailing decimal zeros (zero:
    /// mantissa and exponent 0): what a store writing its own number format starts from.
    public struct Parts: Equatable, Sendable {
        public let mantissa: UInt128
        public let exponent: Int
        public let isNegative: Bool
    }

    /// The parts of `value`; `nil` for NaN.
    public static func parts(_ value: Decimal) -> Parts? {
        if layoutIsKnown {
            return parts(of: value).map { Parts(mantissa: $0.0, exponent: $0.1, isNegative: $0.2) }
        }
        var text = value.description
        return text.withUTF8(plainParts(bytes:))
    }

    /// The parts of `[-]digits[.digits]` with at most 38 significant digits; `nil` for any other text.
    private static func plainParts(bytes: UnsafeBufferPointer<UInt8>) -> Parts? {
        guard !bytes.isEmpty else { return nil }
        var index = 0, isNegative = false
        if bytes[0] == UInt8(ascii: "-") {
            isNegative = true
            index = 1
        }
        var mantissa: UInt128 = 0, digits = 0, significant = 0, fraction = 0, seenPoint = false
        var small: UInt64 = 0  // the mantissa while it has at most 19 digits (64-bit arithmetic)
        guard index < bytes.count else { return nil }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: ".") {
                guard !seenPoint, index + 1 < bytes.count, digits > 0 else { return nil }
                seenPoint = true
            } else {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), significant < 38 else { return nil }
                let digit = byte - UInt8(ascii: "0")
                if significant < 19 {
                    small = small &* 10 &+ UInt64(digit)
                    if small != 0 { significant += 1 }  // leading zeros take no room
                } else {
                    if significant == 19 { mantissa = UInt128(small) }
                    mantissa = mantissa * 10 + UInt128(digit)
                    significant += 1
                }
                digits += 1
                if seenPoint { fraction += 1 }
            }
            index += 1
        }
        guard digits > 0 else { return nil }
        let (compact, zeros) = droppingTrailingZeros(significant <= 19 ? UInt128(small) : mantissa)
        return Parts(mantissa: compact, exponent: compact == 0 ? 0 : zeros - fraction, isNegative: isNegative)
    }

    /// Whether `value` is a multiple of ten, without a 128-bit division (2^64 leaves 6 modulo 10).
    @inline(__always) private static func isMultipleOfTen(_ value: UInt128) -> Bool {
        let high = UInt64(truncatingIfNeeded: value >> 64), low = UInt64(truncatingIfNeeded: value)
        return ((high % 10) * 6 + low % 10) % 10 == 0
    }

    /// `value` without its trailing decimal zeros, and how many there were.
    @inline(__always) private static func droppingTrailingZeros(_ value: UInt128) -> (UInt128, Int) {
        var value = value, zeros = 0
        guard value != 0 else { return (0, 0) }
        while isMultipleOfTen(value) {
            value = value >> 64 == 0 ? UInt128(UInt64(truncatingIfNeeded: value) / 10) : value / 10
            zeros += 1
        }
        return (value, zeros)
    }

    /// A decimal from its parts, compact (no trailing zeros in the mantissa), as Foundation builds them.
    private static func make(_ mantissa: UInt128, exponent: Int, isNegative: Bool) -> Decimal {
        if mantissa == 0 { return Decimal() }
        let (mantissa, zeros) = droppingTrailingZeros(mantissa)
        let exponent = exponent + zeros
        guard MemoryLayout<Decimal>.size == 20, exponent >= -128, exponent <= 127 else {
            return Decimal(string: (isNegative ? "-" : "") + "\(mantissa)e\(exponent)", locale: posix) ?? Decimal.nan
        }
        // The layout `parts(of:)` reads: exponent byte; length (high nibble), sign (0x08) and compact
        // (0x04) flags; two reserved bytes; the mantissa as little-endian 16-bit words.
        let length = UInt8((128 - mantissa.leadingZeroBitCount + 15) / 16)
        var head = UInt32(UInt8(bitPattern: Int8(exponent))) | UInt32(length << 4 | (isNegative ? 0x08 : 0) | 0x04) << 8
        var words = mantissa.littleEndian
        var value = Decimal()
        withUnsafeMutableBytes(of: &value) { target in
            withUnsafeBytes(of: &head) { source in
                UnsafeMutableRawBufferPointer(rebasing: target[0..<4]).copyMemory(from: source)
            }
            withUnsafeBytes(of: &words) { source in
                UnsafeMutableRawBufferPointer(rebasing: target[4..<20]).copyMemory(from: source)
            }
        }
        return value
    }

    /// Whether `parseCanonical` agrees with `Decimal(string:)` here (checked once; otherwise unused).
    static let parserIsKnown: Bool = {
        let samples = [
            "0", "1", "-1", "1.5", "-0.0001", "1000", "123456789.987654321", "9999999999999999999", "-3.25", "0.1",
            "65536", "4294967296",
            "611.66999999999995905", "-18446744073709551616", "12345678901234567890123456789012345678",
            "0.00000000000000000000000000000000000001",
        ]
        return samples.allSatisfy { text in
            guard let slow = Decimal(string: text, locale: posix), let fast = parsePlain(text) else { return false }
            return fast == slow && fast.description == slow.description
                && withUnsafeBytes(of: fast, Array.init) == withUnsafeBytes(of: slow, Array.init)
        }
    }()

    static let layoutIsKnown: Bool = {
        guard MemoryLayout<Decimal>.size == 20 else { return false }
        let samples = [
            "0", "1", "-1", "1.5", "-0.0001", "1000", "123456789.987654321", "18446744073709551615", "-3e-20",
            "611.66999999999995905", "-18446744073709551616", "12345678901234567890123456789012345678", "1e100",
        ]
        return samples.allSatisfy { text in
            guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else { return false }
            guard let (mantissa, exponent, isNegative) = parts(of: value) else { return true }
            let fast = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 192) { buffer in
                String(decoding: buffer[..<format(mantissa, exponent, isNegative, into: buffer)], as: UTF8.self)
            }
            return fast == value.description
        }
    }()

    /// Mantissa without trailing zeros, exponent, sign; `nil` for NaN.
    private static func parts(of value: Decimal) -> (UInt128, Int, Bool)? {
        var words: (UInt32, UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0, 0)
        withUnsafeBytes(of: value) { raw in withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: raw) } }
        let flags = words.0
        let lengthAndSign = (flags >> 8) & 0xFF
        let length = lengthAndSign >> 4, isNegative = lengthAndSign & 0x08 != 0
        if length == 0 { return isNegative ? nil : (0, 0, false) }  // NaN has length 0 and the sign bit
        guard length <= 8 else { return nil }
        let (mantissa, zeros) = droppingTrailingZeros(
            UInt128(words.1) | UInt128(words.2) << 32 | UInt128(words.3) << 64 | UInt128(words.4) << 96)
        return (mantissa, Int(Int8(truncatingIfNeeded: flags)) + zeros, isNegative)
    }

    /// Writes the text into `buffer` (at least 192 bytes); returns its length.
    private static func format(
        _ mantissa: UInt128, _ exponent: Int, _ isNegative: Bool, into buffer: UnsafeMutableBufferPointer<UInt8>
    ) -> Int {
        var digits: (UInt128, UInt128, UInt128) = (0, 0, 0)  // 48 bytes: room for 39 digits
        let count = withUnsafeMutableBytes(of: &digits) { raw -> Int in
            // Nineteen digits at a time in 64-bit arithmetic; between them one 128-by-64-bit division
            // (a 128-bit one when the quotient would not fit in 64 bits).
            let tenToThe19: UInt64 = 10_000_000_000_000_000_000
            var n = mantissa, end = 48
            repeat {
                var chunk: UInt64
                let high = UInt64(truncatingIfNeeded: n >> 64)
                if high == 0 {
                    let low = UInt64(truncatingIfNeeded: n)
                    (n, chunk) = (UInt128(low / tenToThe19), low % tenToThe19)
                } else if high < tenToThe19 {
                    let (quotient, remainder) = tenToThe19.dividingFullWidth(
                        (high: high, low: UInt64(truncatingIfNeeded: n)))
                    (n, chunk) = (UInt128(quotient), remainder)
                } else {
                    (n, chunk) = (n / UInt128(tenToThe19), UInt64(n % UInt128(tenToThe19)))
                }
                for _ in 0..<19 {
                    end -= 1
                    raw[end] = UInt8(ascii: "0") + UInt8(chunk % 10)
                    chunk /= 10
                    if n == 0 && chunk == 0 { break }
                }
            } while n != 0
            let count = 48 - end
            raw.copyBytes(from: raw[end..<48])  // move to the front
            return count
        }
        var length = 0
        func put(_ byte: UInt8) {
            buffer[length] = byte
            length += 1
        }
        if isNegative && mantissa != 0 { put(UInt8(ascii: "-")) }
        withUnsafeBytes(of: &digits) { raw in
            let point = count + exponent  // digits before the decimal point
            if exponent >= 0 {
                for i in 0..<count { put(raw[i]) }
                for _ in 0..<exponent { put(UInt8(ascii: "0")) }
            } else if point > 0 {
                for i in 0..<count {
                    if i == point { put(UInt8(ascii: ".")) }
                    put(raw[i])
                }
            } else {
                put(UInt8(ascii: "0"))
                put(UInt8(ascii: "."))
                for _ in 0..<(-point) { put(UInt8(ascii: "0")) }
                for i in 0..<count { put(raw[i]) }
            }
        }
        return length
    }
}
