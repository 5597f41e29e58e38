import Foundation

/// A REAL literal of SQL (a number with a point or an exponent) as the value SQLite stores for it:
/// the double nearest it, written in the fewest digits that give that double back —
/// `1.9799999999999999822`, how `sqlite3 .dump` prints 1.98, is `1.98` — and a whole number without
/// a point, as a NUMERIC or INTEGER column keeps it (`3.0` is `3`).
///
/// Dumps hold millions of them, so the common forms skip `strtod` and Swift's shortest printing: a
/// literal of at most 15 significant digits is its own shortest spelling (trailing zeros dropped);
/// one of 16–20 digits is rounded to 15, which is the answer exactly when it gives the same double
/// (the literal held against that double's interval with exact integer products); anything else
/// goes the slow, general way.
enum RealLiteral {
    /// The stored value's text, or `nil` for an integer literal (which stays as written).
    static func text(_ literal: UnsafeBufferPointer<UInt8>) -> String? {
        withBytes(literal) { $0.map { String(decoding: $0, as: UTF8.self) } }
    }

    /// Calls `body` with the stored value's UTF-8 bytes (valid only during the call), or `nil` for
    /// an integer literal; the fast paths build them on the stack.
    static func withBytes<R>(_ literal: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        switch plain(literal) {
        case .integer: return body(nil)
        case .spelled(let digits, let exponent, let isNegative):
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { buffer in
                let count = spell(digits, exponent: exponent, isNegative: isNegative, into: buffer)
                return body(UnsafeBufferPointer(rebasing: buffer[..<count]))
            }
        case .general:
            var text = general(literal)
            return text.withUTF8 { body($0) }
        }
    }

    /// `strtod`, then the shortest spelling.
    static func general(_ literal: UnsafeBufferPointer<UInt8>) -> String {
        let value = withUnsafeTemporaryAllocation(of: CChar.self, capacity: literal.count + 1) { text in
            for (index, byte) in literal.enumerated() { text[index] = CChar(bitPattern: byte) }
            text[literal.count] = 0
            return strtod(text.baseAddress!, nil)
        }
        return SQLValueText.realText(value)
    }

    private static let powersOfTen: [Double] = (0...22).map { pow(10, Double($0)) }

    enum Form {
        /// No point and no exponent.
        case integer
        /// `digits × 10^exponent`, found by a fast path.
        case spelled(UInt64, Int, Bool)
        /// For `general`.
        case general
    }

    /// What a literal is: an integer literal, a value a fast path spells, or one for `general`.
    static func plain(_ literal: UnsafeBufferPointer<UInt8>) -> Form {
        var index = 0, isNegative = false
        if index < literal.count, literal[index] == UInt8(ascii: "-") || literal[index] == UInt8(ascii: "+") {
            isNegative = literal[index] == UInt8(ascii: "-")
            index += 1
        }
        // The significant digits (leading zeros dropped) as one integer — 19 of them in `high`,
        // a 20th in `last` — and how many digits follow the point: the value is w / 10^fraction.
        var high: UInt64 = 0, last: UInt64 = 0, digits = 0, fraction = 0, afterPoint = false
        while index < literal.count {
            let byte = literal[index]
            index += 1
            if byte == UInt8(ascii: ".") {
                afterPoint = true
                continue
            }
            guard byte &- 48 < 10 else {
                // A hex literal is an integer; an exponent makes a REAL.
                if byte | 0x20 == UInt8(ascii: "x") { return .integer }
                return literal[index...].contains { $0 | 0x20 == UInt8(ascii: "x") } ? .integer : .general
            }
            if afterPoint { fraction += 1 }
            guard high != 0 || byte != 48 else { continue }
            digits += 1
            if digits <= 19 {
                high = high &* 10 &+ UInt64(byte - 48)
            } else if digits == 20 {
                last = UInt64(byte - 48)
            }
        }
        // An integer literal beyond 64 bits is a REAL to SQLite (99999999999999999999 is 1e+20).
        guard afterPoint else {
            let limit = UInt64(Int64.max) + (isNegative ? 1 : 0)
            return digits < 19 || (digits == 19 && high <= limit) ? .integer : .general
        }
        guard fraction <= 21, digits <= 20 else { return .general }
        if digits == 0 { return .spelled(0, 0, false) }
        if digits <= 15 { return .spelled(high, -fraction, isNegative) }
        let w = digits == 20 ? UInt128(high) * 10 + UInt128(last) : UInt128(high)
        // Round to 15 digits (half up); that is the shortest spelling when it names the same double.
        // In 64 bits (a 128-bit division costs hundreds of instructions): with 20 digits, `high`
        // holds the first 19, so w / 10^5 = high / 10^4 + (high % 10^4 × 10 + last) / 10^5.
        let w15: UInt64
        if digits == 20 {
            let (quotient, remainder) = high.quotientAndRemainder(dividingBy: 10_000)
            w15 = quotient + (remainder * 10 + last + 50_000) / 100_000
        } else {
            var scale: UInt64 = 1
            for _ in 0..<(digits - 15) { scale *= 10 }
            w15 = (high + scale / 2) / scale
        }
        let exponent15 = digits - 15 - fraction
        guard exponent15 < 0, -exponent15 <= 22 else { return .general }
        // w15 < 2^53 and 10^k exact: one division rounds correctly (Clinger's fast path).
        let rounded = Double(w15) / powersOfTen[-exponent15]
        if let isNearest = isNearest(rounded, to: w, fraction: fraction) {
            return isNearest ? .spelled(w15, exponent15, isNegative) : .general
        }
        guard let exact = nearestDouble(w, fraction: fraction), rounded == exact else { return .general }
        return .spelled(w15, exponent15, isNegative)
    }

    private static let powersOfTen128: [UInt128] = (0...21).map { power in
        (0..<power).reduce(UInt128(1)) { value, _ in value * 10 }
    }

    /// Whether w / 10^fraction (fraction ≤ 21) rounds, half to even, to `double`: whether it lies in
    /// the interval of the numbers nearer `double` than its neighbours, compared exactly with 128-bit
    /// products (no division). `nil` when that does not fit: `double` a power of two (its interval
    /// is lopsided), not normal, 2 or more times its last unit, or products beyond 127 bits.
    static func isNearest(_ double: Double, to w: UInt128, fraction: Int) -> Bool? {
        guard double.isNormal, double > 0, double.significandBitPattern != 0 else { return nil }
        // double = m × 2^e; the interval is (2m − 1) × 2^(e−1) … (2m + 1) × 2^(e−1).
        let m = UInt128(double.significandBitPattern | 1 << 52)
        let shift = 53 - Int(double.exponent)  // 1 − e
        guard shift >= 0, shift + (128 - w.leadingZeroBitCount) <= 127 else { return nil }
        let scaled = w << shift, ten = powersOfTen128[fraction]
        let low = (2 * m - 1) * ten, high = (2 * m + 1) * ten
        let even = m & 1 == 0
        return (scaled > low || (scaled == low && even)) && (scaled < high || (scaled == high && even))
    }

    /// The double nearest w / 10^fraction (w < 10^20, fraction ≤ 21), rounded half to even, from
    /// 128-bit integer division; `nil` when the numbers do not fit.
    static func nearestDouble(_ w: UInt128, fraction: Int) -> Double? {
        var divisor: UInt128 = 1
        for _ in 0..<fraction { divisor *= 10 }
        let wBits = 128 - w.leadingZeroBitCount, divisorBits = 128 - divisor.leadingZeroBitCount
        // Shift so that the quotient has at least 55 bits: 53 to keep, one to round, one to spare.
        let shift = max(0, 55 + divisorBits - wBits)
        guard wBits + shift <= 127 else { return nil }
        let numerator = w << shift
        let quotient = numerator / divisor
        let sticky = numerator % divisor != 0
        let quotientBits = 128 - quotient.leadingZeroBitCount
        let drop = quotientBits - 53
        var mantissa = quotient >> drop
        let dropped = quotient & ((1 << drop) - 1)
        let half: UInt128 = 1 << (drop - 1)
        if dropped > half || (dropped == half && (sticky || mantissa & 1 == 1)) { mantissa += 1 }
        return Double(sign: .plus, exponent: drop - shift, significand: Double(UInt64(mantissa)))
    }

    /// `digits × 10^exponent` written into `buffer` (64 bytes): trailing zeros dropped, a whole
    /// number without a point; returns the length.
    static func spell(
        _ digits: UInt64, exponent: Int, isNegative: Bool, into buffer: UnsafeMutableBufferPointer<UInt8>
    ) -> Int {
        var digits = digits, exponent = exponent
        if digits == 0 {
            exponent = 0
        } else {
            // Trailing zeros off, eight, four, two, one at a time.
            while exponent <= -8, digits % 100_000_000 == 0 {
                digits /= 100_000_000
                exponent += 8
            }
            if exponent <= -4, digits % 10_000 == 0 {
                digits /= 10_000
                exponent += 4
            }
            if exponent <= -2, digits % 100 == 0 {
                digits /= 100
                exponent += 2
            }
            if exponent <= -1, digits % 10 == 0 {
                digits /= 10
                exponent += 1
            }
        }
        var count = 0
        if isNegative && digits != 0 {
            buffer[0] = UInt8(ascii: "-")
            count = 1
        }
        var length = 1, rest = digits
        while rest >= 10 {
            rest /= 10
            length += 1
        }
        let integerDigits = length + exponent
        /// Writes the digits from `start`, with a point before digit `point` (none when out of range).
        func writeDigits(at start: Int, pointBefore point: Int) {
            var value = digits
            for digit in stride(from: length - 1, through: 0, by: -1) {
                buffer[start + digit + (digit >= point ? 1 : 0)] = UInt8(48 + value % 10)
                value /= 10
            }
            if point < length { buffer[start + point] = UInt8(ascii: ".") }
        }
        if exponent >= 0 {
            writeDigits(at: count, pointBefore: length)
            count += length
            for _ in 0..<exponent {
                buffer[count] = 48
                count += 1
            }
        } else if integerDigits <= 0 {
            buffer[count] = 48
            buffer[count + 1] = UInt8(ascii: ".")
            count += 2
            for _ in 0..<(-integerDigits) {
                buffer[count] = 48
                count += 1
            }
            writeDigits(at: count, pointBefore: length)
            count += length
        } else {
            writeDigits(at: count, pointBefore: integerDigits)
            count += length + 1
        }
        return count
    }
}
