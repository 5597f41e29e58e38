import Foundation
import Testing

@testable import ObjectGraph

@Suite struct DecimalTextTests {
    @Test func canonicalTextMatchesFoundationForManyValues() {
        var generator = SystemRandomNumberGenerator()
        var values: [Decimal] = [
            0, 1, -1, .nan, Decimal(string: "1.50")!, Decimal(string: "-0.000100")!, Decimal(string: "1e30")!,
            Decimal(string: "12345678901234567890.123456789")!, Decimal(sign: .plus, exponent: -2, significand: 150),
        ]
        for _ in 0..<20_000 {
            let mantissa = UInt64.random(
                in: 0...(UInt64.max >> UInt64.random(in: 0...63, using: &generator)), using: &generator)
            values.append(
                Decimal(
                    sign: Bool.random() ? .plus : .minus, exponent: Int.random(in: -30...30),
                    significand: Decimal(mantissa)))
        }
        for value in values { #expect(DecimalText.canonical(value) == value.description) }
        #expect(
            DecimalText.canonical(Decimal(sign: .plus, exponent: -2, significand: 150)) == "1.5", "no trailing zeros")
    }

    @Test func parsingStoredTextMatchesFoundation() {
        let posix = Locale(identifier: "en_US_POSIX")
        var texts = [
            "0", "1", "-1", "1.5", "-0.0001", "1000", "9999999999999999999", "10000000000000000000", "0.5", "-12.25",
            "12345678901234567890.123456789", "1e5", "", "-", "1.", ".5", "1.2.3", "abc", "--1", "00012", "1.50", "NaN",
        ]
        for _ in 0..<20_000 {
            let value = Decimal(
                sign: Bool.random() ? .plus : .minus, exponent: Int.random(in: -20...5),
                significand: Decimal(UInt64.random(in: 0...UInt64(9_999_999_999_999_999_999))))
            texts.append(DecimalText.canonical(value))
        }
        for text in texts {
            let expected = Decimal(string: text, locale: posix)
            let parsed = DecimalText.parse(text)
            #expect(parsed == expected && parsed?.description == expected?.description, "\(text.debugDescription)")
        }
    }

    /// Mantissas of 65 to 128 bits (20 to 38 digits, such as the 20-digit reals of `sqlite3 .dump`)
    /// take the fast paths too, and agree with Foundation both ways.
    @Test func wideMantissasRoundTripLikeFoundation() {
        let posix = Locale(identifier: "en_US_POSIX")
        #expect(DecimalText.layoutIsKnown && DecimalText.parserIsKnown, "the fast paths are in use on this platform")
        var texts = [
            "611.66999999999995905", "-18446744073709551616", "18446744073709551616",
            "12345678901234567890123456789012345678",
            "-0.00000000000000000000000000000000000001", "99999999999999999999999999999999999999",
            "1234567890123456789.0123456789",
        ]
        for _ in 0..<20_000 {
            let digits = Int.random(in: 20...38)
            var text = String((0..<digits).map { _ in "0123456789".randomElement()! }).drop { $0 == "0" }
            if text.isEmpty { text = "7" }
            let point = Int.random(in: 0...text.count)
            var placed = String(text)
            if point > 0 && point < text.count {
                placed.insert(".", at: placed.index(placed.startIndex, offsetBy: point))
            }
            texts.append((Bool.random() ? "-" : "") + placed)
        }
        for text in texts {
            let expected = Decimal(string: text, locale: posix)!
            #expect(DecimalText.parsePlain(text) == expected, "\(text)")
            #expect(
                withUnsafeBytes(of: DecimalText.parsePlain(text)!, Array.init)
                    == withUnsafeBytes(of: expected, Array.init), "same layout: \(text)")
            #expect(DecimalText.canonical(expected) == expected.description, "\(text)")
        }
        #expect(
            DecimalText.parsePlain("123456789012345678901234567890123456789") == nil,
            "39 digits do not fit: the caller refuses them")
    }
}
