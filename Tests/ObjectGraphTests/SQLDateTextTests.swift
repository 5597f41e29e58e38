import Foundation
import Testing

@testable import ObjectGraph

/// The dates a store writes as text read back as the very same `Date` — through the short way
/// `parse` takes for what `format` usually writes, and the long way for the rest — and texts that
/// are not such dates are refused.
@Suite struct SQLDateTextTests {
    @Test func everyFormattedDateReadsBackAsTheSameDate() {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state >> 11
        }
        var dates: [Date] = []
        for _ in 0..<20_000 {
            // Years 0001–9999 in whole seconds, milliseconds, microseconds, nanoseconds and any double.
            let seconds = Double(Int64(next() % 315_537_897_600) - 63_082_281_600)
            let fraction: Double
            switch next() % 5 {
            case 0: fraction = 0
            case 1: fraction = Double(next() % 1_000) / 1e3
            case 2: fraction = Double(next() % 1_000_000) / 1e6
            case 3: fraction = Double(next() % 1_000_000_000) / 1e9
            default: fraction = Double(next() % (1 << 52)) / Double(1 << 52)
            }
            dates.append(Date(timeIntervalSinceReferenceDate: seconds + fraction))
        }
        dates += [-1e16, 1e16, 9e15, -0.5, 0, 252_423_993_600, -63_113_904_001].map(
            Date.init(timeIntervalSinceReferenceDate:))
        for date in dates {
            for iso in [false, true] {
                let text = SQLDateText.format(date, iso8601: iso)
                #expect(SQLDateText.parse(text) == date, "\(text) for \(date.timeIntervalSinceReferenceDate)")
            }
        }
    }

    /// What is written, digit for digit: fractions of 3, 6 and 9 digits, years beyond four
    /// digits and before year 1, the long way for a fraction no nine digits name, and the number.
    @Test func theSpellings() {
        func text(_ since1970: Double, iso: Bool = false) -> String {
            SQLDateText.format(Date(timeIntervalSince1970: since1970), iso8601: iso)
        }
        #expect(text(0) == "1970-01-01 00:00:00")
        #expect(text(1_700_000_000.25) == "2023-11-14 22:13:20.250")
        #expect(text(1_700_000_000.25, iso: true) == "2023-11-14T22:13:20.250Z")
        #expect(text(1_700_000_000.000_001) == "2023-11-14 22:13:20.000001")
        let nanoseconds = Date(timeIntervalSinceReferenceDate: 86_399.123_456_789)
        #expect(SQLDateText.format(nanoseconds) == "2001-01-01 23:59:59.123456789")
        #expect(text(-1) == "1969-12-31 23:59:59")
        #expect(text(253_402_300_800) == "+10000-01-01 00:00:00")
        #expect(text(-62_198_755_200, iso: true) == "-0001-01-01T00:00:00Z")
        #expect(text(-62_167_219_200) == "0000-01-01 00:00:00")
        let long = Date(timeIntervalSinceReferenceDate: 0.5 + 1.0 / Double(1 << 40))
        #expect(SQLDateText.format(long) == "2001-01-01 00:00:00.5000000000009095")
        #expect(SQLDateText.format(long, iso8601: true) == "2001-01-01T00:00:00.5000000000009095Z")
        #expect(SQLDateText.format(Date(timeIntervalSinceReferenceDate: 1e16)) == "1e+16")
        #expect(text(-0.25) == "1969-12-31 23:59:59.750")
        #expect(text(3_093_496_444_800) == "+99999-01-01 00:00:00")
        #expect(text(3_093_527_980_800) == "+100000-01-01 00:00:00")
        #expect(text(389_529_800_928_000) == "+12345678-01-01 00:00:00")
        #expect(text(-377_736_739_200) == "-10000-01-01 00:00:00")
        #expect(SQLDateText.format(Date(timeIntervalSinceReferenceDate: .nan)) == "nan")
        #expect(SQLDateText.format(Date(timeIntervalSinceReferenceDate: -.infinity)) == "-inf")
        // Less than 2^-53 s before a whole second: no fraction holds it, so the number, read back.
        let hair = Date(timeIntervalSinceReferenceDate: -1e-17)
        #expect(SQLDateText.format(hair) == "-1e-17")
        #expect(SQLDateText.parse(SQLDateText.format(hair)) == hair)
    }

    @Test func theShapesAndTheirValues() {
        func seconds(_ text: String) -> Double? { SQLDateText.parse(text)?.timeIntervalSince1970 }
        #expect(seconds("1970-01-01") == 0)
        #expect(seconds("1970-01-02 00:00:01") == 86_401)
        #expect(seconds("1970-01-02T00:00:01Z") == 86_401)
        #expect(seconds("2024-02-29 23:59:59.5") == 1_709_251_199.5)
        #expect(seconds("2024-02-29Z") == 1_709_164_800)
        #expect(seconds("-0001-01-01 00:00:00") != nil)
        #expect(seconds("+10000-01-01 00:00:00") != nil)
    }

    @Test(arguments: [
        "", "2024", "2024-1-01", "2024-13-01", "2024-00-10", "2023-02-29", "2024-04-31", "2024-01-00",
        "2024-01-31 24:00:00", "2024-01-31 12:60:00", "2024-01-31 12:00:60", "2024-01-31 12:00:00.",
        "2024-01-31 12:00:00.5x", "2024-01-31 12:00", "2024-01-31_12:00:00", "2024/01/31", "2024-01-3a",
        "2024-01-31 12:00:00ZZ", "２０２４-01-31", "2024-01-31 1２:00:00", "2024-01-31 12:00:00.１",
    ])
    func textsThatAreNoSuchDateAreRefused(_ text: String) {
        #expect(SQLDateText.parse(text) == nil)
    }
}
