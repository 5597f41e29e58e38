import Foundation
import Testing

@testable import Readers

/// The fast paths of `RealLiteral` give exactly what `strtod` and Swift's shortest printing give,
/// in value and — where the fast path applies — in spelling.
@Suite struct RealLiteralTests {
    static func text(_ literal: String) -> String? {
        var literal = literal
        return literal.withUTF8 { RealLiteral.text($0) }
    }

    static func general(_ literal: String) -> String {
        var literal = literal
        return literal.withUTF8 { RealLiteral.general($0) }
    }

    @Test func dumpSpellingsBecomeTheShortestOnes() {
        #expect(Self.text("1.9799999999999999822") == "1.98")
        #expect(Self.text("611.66999999999995905") == "611.67")
        #expect(Self.text("0.10000000000000000555") == "0.1")
        #expect(Self.text("19.50") == "19.5")
        #expect(Self.text("3.0") == "3")
        #expect(Self.text("-0.0") == "0")
        #expect(Self.text(".5") == "0.5")
        #expect(Self.text("42") == nil, "an integer literal stays as written")
        #expect(Self.text("0x1F") == nil)
        #expect(Self.text("0.30000000000000004441") == "0.30000000000000004", "17 digits when the double needs them")
    }

    /// Random doubles printed as `sqlite3 .dump` does (`%!.20g`), with 17 and with 15 digits, and
    /// random decimal texts of 1 to 20 digits: the fast result is the general one, and both name
    /// the same double.
    @Test func theFastPathsAgreeWithStrtodAndShortestPrinting() {
        var generator = SystemRandomNumberGenerator()
        var literals: [String] = []
        for _ in 0..<20_000 {
            let magnitude = pow(10, Double(Int.random(in: -6...12, using: &generator)))
            let value = Double.random(in: 0..<1, using: &generator) * magnitude * (Bool.random() ? 1 : -1)
            for format in ["%.20f", "%.17g", "%.15g", "%.2f", "%.20g"] {
                var text = String(format: format, value)
                if !text.contains(".") && !text.contains("e") { text += ".0" }
                literals.append(text)
            }
            let digits = (0..<Int.random(in: 1...20, using: &generator)).map { _ in String(Int.random(in: 0...9)) }
            let point = Int.random(in: 0...digits.count, using: &generator)
            literals.append(digits[..<point].joined() + "." + digits[point...].joined())
        }
        var fast = 0
        for literal in literals {
            let result = Self.text(literal), expected = Self.general(literal)
            guard let result else {
                Issue.record("\(literal) gave nil")
                continue
            }
            #expect(Double(result) == Double(expected), "\(literal): \(result) vs \(expected)")
            if result == expected { fast += 1 }
            // Both are shortest spellings of one double: same digits unless one uses an exponent.
            if !expected.contains("e") && !result.contains("e") {
                #expect(result == expected, "\(literal): \(result) vs \(expected)")
            }
        }
        #expect(fast > literals.count / 2)
    }

    /// A random literal of 16 to 20 digits (`digits` of them in `w`, `fraction` after the point)
    /// rounded to 15 digits half up in 128 bits: the digits, their exponent and the double they name.
    static func randomLong(
        using generator: inout SystemRandomNumberGenerator
    ) -> (w: UInt128, digits: Int, fraction: Int, w15: UInt64, exponent: Int, rounded: Double) {
        let digits = Int.random(in: 16...20, using: &generator)
        var w = UInt128(Int.random(in: 1...9, using: &generator))
        for _ in 1..<digits { w = w * 10 + UInt128(Int.random(in: 0...9, using: &generator)) }
        let fraction = Int.random(in: (digits - 14)...21, using: &generator)
        var scale: UInt128 = 1
        for _ in 0..<(digits - 15) { scale *= 10 }
        let w15 = UInt64((w + scale / 2) / scale), exponent = digits - 15 - fraction
        return (w, digits, fraction, w15, exponent, Double(w15) / pow(10, Double(-exponent)))
    }

    /// The interval test of the 16–20 digit path answers as the exact division does: for random
    /// literals of 16 to 20 digits, rounded to 15, and for the literals one unit beside them.
    @Test func theNearestDoubleTestAgreesWithExactDivision() {
        var generator = SystemRandomNumberGenerator()
        var decided = 0
        for _ in 0..<50_000 {
            let (w, _, fraction, _, _, rounded) = Self.randomLong(using: &generator)
            for near in [w, w - 1, w + 1] {
                guard let answer = RealLiteral.isNearest(rounded, to: near, fraction: fraction) else { continue }
                decided += 1
                let exact = RealLiteral.nearestDouble(near, fraction: fraction)
                #expect(answer == (exact == rounded), "\(near) / 10^\(fraction) against \(rounded)")
            }
        }
        #expect(decided > 100_000)
    }

    /// `plain` of 16–20 digit literals decides as the exact rule: round to 15 digits (half up, in
    /// 128 bits), and spell that when it names the double nearest the literal (exact division).
    @Test func longLiteralsAreSpelledExactlyWhenTheRuleSaysSo() {
        var generator = SystemRandomNumberGenerator()
        var spelled = 0
        for _ in 0..<30_000 {
            let (w, digits, fraction, w15, exponent, rounded) = Self.randomLong(using: &generator)
            // Zeros after the point when the fraction is longer than the digits (`0.00123…`).
            let text = String(repeating: "0", count: max(0, fraction - digits)) + String(w)
            let literal = text.prefix(text.count - fraction) + "." + text.suffix(fraction)
            let expected = RealLiteral.nearestDouble(w, fraction: fraction) == rounded
            var bytes = Array(literal.utf8)
            let form = bytes.withUnsafeMutableBufferPointer { RealLiteral.plain(UnsafeBufferPointer($0)) }
            switch form {
            case .spelled(let digits, let exponent15, let isNegative):
                #expect(expected && digits == w15 && exponent15 == exponent && !isNegative, "\(literal)")
                spelled += 1
            case .general: #expect(!expected, "\(literal)")
            case .integer: Issue.record("\(literal) read as an integer")
            }
        }
        #expect(spelled > 1_000)
    }
}
