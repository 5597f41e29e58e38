import Foundation
import ObjectGraph
import Testing

@testable import ModelFiles

/// Inference reads a value as a number in one pass over its bytes (`NumberShape`); these tests hold
/// it to the rules as they read on the whole text: each value alone, and the flags of a column of
/// many values, come out as the rules say.
@Suite struct ColumnNumberTests {
    /// The rules, on the text (what `observe` decided before it scanned bytes).
    struct Expected: Equatable, CustomStringConvertible {
        var integer = true, decimal = true, double = true, fraction = 0

        init(_ text: String) {
            let digits = text.utf8.drop { $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "+") }
            let leadingZero =
                digits.first == UInt8(ascii: "0") && digits.dropFirst().first.map { $0 >= 48 && $0 <= 57 } == true
            integer = !leadingZero && Int64(text).map { String($0) == text } == true
            decimal = !leadingZero && ModelInference.Column.isPlainDecimal(text) && text != "-0"
            double =
                !leadingZero && text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || "+-.eE".utf8.contains($0) }
                && Double(text)?.isFinite == true && !ModelInference.Column.losesDigits(asDouble: text)
            if decimal {
                fraction =
                    text.utf8.firstIndex(of: UInt8(ascii: ".")).map {
                        text.utf8.distance(from: $0, to: text.utf8.endIndex) - 1
                    }
                    ?? 0
            }
        }

        var description: String { "integer \(integer), decimal \(decimal), double \(double), fraction \(fraction)" }
    }

    static func observed(_ text: String) -> Expected {
        var column = ModelInference.Column(source: "value", keyCandidate: false)
        column.observe(text)
        var seen = Expected("")
        (seen.integer, seen.decimal, seen.double) = (column.integer, column.decimal, column.double)
        seen.fraction = column.decimal ? column.maxFractionDigits : 0
        return seen
    }

    static let values = [
        "0", "-0", "+0", "7", "-7", "+7", "007", "-007", "--7", "+-7", "0.5", ".5", "5.", "-.5", "-5.", ".", "-", "+",
        "1e5", "1E5", "-1.5e-3", "1e400", "-1e400", "1e", "e5", "12.34.56", "1,5", " 5", "5 ", "0x1F", "inf", "nan",
        "NaN", "Infinity", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
        "-9223372036854775809", "123456789012345", "1234567890123456", "12345678901234567890123",
        "1234567890123456.5", "0.123456789012345", "0.1234567890123456789", "00", "0.0", "-0.0", "00.5", "10",
        "100.00", "19.99", "2684.00", "1.10", "٣", "１２", "12a", "a12", "", "12-3", "1-", "1+1", "1.5E+10",
        String(repeating: "9", count: 38), String(repeating: "9", count: 39), "0." + String(repeating: "1", count: 37),
    ]

    @Test func eachValueReadsAsTheRulesSay() {
        for text in Self.values where !text.isEmpty {
            #expect(Self.observed(text) == Expected(text), "\(text.debugDescription)")
        }
    }

    @Test func randomNumberLikeValuesReadAsTheRulesSay() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789.-+eE".utf8) + [UInt8(ascii: "0"), UInt8(ascii: "1"), UInt8(ascii: "9")]
        for _ in 0..<20_000 {
            let length = Int.random(in: 1...22, using: &generator)
            let text = String(
                decoding: (0..<length).map { _ in alphabet.randomElement(using: &generator)! }, as: UTF8.self)
            #expect(Self.observed(text) == Expected(text), "\(text.debugDescription)")
        }
    }

    @Test func aColumnKeepsWhatEveryValueAllows() {
        var column = ModelInference.Column(source: "price", keyCandidate: false)
        for text in ["19.99", "5.00", "100.10"] { column.observe(text) }
        #expect(column.type == .decimal && column.scale == 2)
        column.observe("7.5")
        #expect(column.type == .decimal && column.scale == nil && column.maxFractionDigits == 2)
        column.observe("1e3")
        #expect(column.type == .double)
        column.observe("007")
        #expect(column.type == .string)
    }
}
