import Foundation
@testable import Stores
import Testing

@Suite struct DecimalTextTests {
    @Test func canonicalTextMatchesFoundationForManyValues() {
        var generator = SystemRandomNumberGenerator()
        var values: [Decimal] = [0, 1, -1, .nan, Decimal(string: "1.50")!, Decimal(string: "-0.000100")!, Decimal(string: "1e30")!,
                                 Decimal(string: "12345678901234567890.123456789")!, Decimal(sign: .plus, exponent: -2, significand: 150)]
        for _ in 0..<20_000 {
            let mantissa = UInt64.random(in: 0...(UInt64.max >> UInt64.random(in: 0...63, using: &generator)), using: &generator)
            values.append(Decimal(sign: Bool.random() ? .plus : .minus, exponent: Int.random(in: -30...30), significand: Decimal(mantissa)))
        }
        for value in values { #expect(DecimalText.canonical(value) == value.description) }
        #expect(DecimalText.canonical(Decimal(sign: .plus, exponent: -2, significand: 150)) == "1.5", "no trailing zeros")
    }
}
