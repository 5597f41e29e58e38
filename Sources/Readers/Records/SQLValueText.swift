import Foundation

/// Writes an SQL value as record bytes: integers in decimal, reals in their shortest exact form, text
/// as is, blobs as lowercase hexadecimal (record fields are text; the table's declared type tells a
/// mapping to decode them).
public enum SQLValueText {
    static func hex(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return out
    }

    /// A REAL as text, the same whether it comes from a database file or a dump's literal: the
    /// shortest spelling that gives the double back, a whole number without a point (as a NUMERIC
    /// or INTEGER column keeps it), `Inf`/`-Inf`.
    static func real(_ value: Double) -> [UInt8] { Array(realText(value).utf8) }

    static func realText(_ value: Double) -> String {
        if value.isInfinite { return value > 0 ? "Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 { return String(Int64(value)) }
        // A whole number past 64 bits in digits (its exact value), so that an INTEGER column's
        // 99999999999999999999 — which SQLite keeps as the REAL 1e20 — reads as a whole number.
        if value == value.rounded(), abs(value) < 1e21 { return String(format: "%.0f", value) }
        return value.description
    }

    /// The bytes of hexadecimal text (`00ff`, any case), or `nil` when it is not pairs of hex digits:
    /// how a BLOB read as a field (`hex(_:)`) or written as hex comes back.
    public static func bytes(fromHex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}
