import Drivers
import Foundation
import ObjectGraph
import Testing

@testable import Stores

/// A plain layout's decimals: the quick way (`DecimalText.exactNumber`, no text) stores what the
/// way through the canonical text and `strtod` stores, whenever it answers.
@Suite struct PlainDecimalTests {
    @Test func exactNumberStoresWhatTheCanonicalTextStores() {
        var values: [Decimal] = [
            0, 1, -1, Decimal(string: "611.67")!, Decimal(string: "-247.18")!, Decimal(string: "0.1")!,
            Decimal(string: "9223372036854775807")!, Decimal(string: "-9223372036854775808")!,
            Decimal(string: "9223372036854775808")!, Decimal(string: "1e18")!, Decimal(string: "1e19")!,
            Decimal(string: "999999999999999.9")!, Decimal(string: "99999999999999.9")!,
            Decimal(string: "1e-22")!, Decimal(string: "1e-23")!, Decimal(string: "123456789012345e-22")!,
        ]
        for _ in 0..<50_000 {
            let digits = UInt64.random(in: 0...18)
            let mantissa = UInt64.random(in: 0...(digits == 0 ? 9 : UInt64(pow(10, Double(digits)))))
            values.append(
                Decimal(
                    sign: Bool.random() ? .plus : .minus, exponent: Int.random(in: -25...20),
                    significand: Decimal(mantissa)))
        }
        var answered = 0
        for value in values {
            let slow = DecimalText.withCanonicalUTF8(value) { SQLiteValueCoding.plainDecimal($0) }
            switch DecimalText.exactNumber(value) {
            case .integer(let integer)?:
                answered += 1
                #expect(slow == .integer(integer), "\(value)")
            case .double(let double)?:
                answered += 1
                #expect(slow == .real(double), "\(value)")
            case nil:
                continue
            }
        }
        #expect(answered > values.count / 2, "the quick way answers the common cases")
        #expect(DecimalText.exactNumber(.nan) == nil)
    }
}
