import Foundation
import Testing

@testable import ObjectGraph

/// The ICU-free date parsers agree with Foundation's formatters: same date for every valid text,
/// refusal for every text they refuse (days past the month's end, hour 24, missing zone, …).
@Suite struct DateTextTests {
    static func formatter(_ pattern: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = pattern
        formatter.isLenient = false
        return formatter
    }

    /// Deterministic pseudo-random texts: valid dates of many years, and near misses.
    static func samples(count: Int) -> [(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int)] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
        return (0..<count).map { _ in (1600 + next(800), 1 + next(13), 1 + next(32), next(25), next(61), next(61)) }
    }

    /// ISO8601DateFormatter rolls 2023-02-29 over into March; the pipeline refuses such texts. So the
    /// reference is Foundation's date when it reads back as the same day and time, else a refusal.
    @Test func isoDatesAgreeWithISO8601DateFormatter() {
        let full = ISO8601DateFormatter()
        let dateOnly = ISO8601DateFormatter()
        dateOnly.formatOptions = [.withFullDate]
        for s in Self.samples(count: 4000) {
            let day = String(format: "%04d-%02d-%02d", s.year, s.month, s.day)
            let expectedDay = dateOnly.date(from: day).flatMap { dateOnly.string(from: $0) == day ? $0 : nil }
            #expect(DateText.parseISO8601(day) == expectedDay, "\(day)")
            let time = String(format: "T%02d:%02d:%02d", s.hour, s.minute, s.second)
            let utc = day + time + "Z"
            let timeIsValid = full.date(from: utc).map { full.string(from: $0) == utc } ?? false
            for (zone, offset) in [("Z", 0.0), ("+02:00", 7200.0), ("-05:30", -19800.0)] {
                let text = day + time + zone
                let expected = timeIsValid ? full.date(from: text) : nil
                #expect(DateText.parseISO8601(text) == expected, "\(text)")
                if timeIsValid { #expect(expected == full.date(from: utc)!.addingTimeInterval(-offset)) }
            }
        }
    }

    @Test func isoRefusesNearMisses() {
        for text in [
            "2024-1-31", "2024-01-31T12:00:00", "2024-01-31 12:00", "2024-02-30", "2023-02-29", "2024-13-01",
            "2024-01-31T24:00:00Z", "2024-01-31T12:60:00Z", "2024-01-31T12:00:00.Z", "2024-01-31Z", " 2024-01-31",
            "2024-01-31T12:00:00Zx", "", "yesterday",
        ] {
            #expect(DateText.parseISO8601(text) == nil, "\(text)")
        }
        // SQL's form (a space, no zone: UTC, as SQLite reads it), also with a zone (RFC 3339).
        let noon = DateText.parseISO8601("2024-01-31T12:00:00Z")
        #expect(noon != nil && DateText.parseISO8601("2024-01-31 12:00:00") == noon)
        #expect(DateText.parseISO8601("2024-01-31 12:00:00Z") == noon)
        #expect(DateText.parseISO8601("2024-02-29") != nil)
        #expect(DateText.parseISO8601("2000-02-29") != nil)
        #expect(DateText.parseISO8601("1900-02-29") == nil)
    }

    @Test func fractionsAndOffsets() {
        let base = DateText.parseISO8601("2024-01-31T12:00:00Z")!
        #expect(DateText.parseISO8601("2024-01-31T12:00:00.250Z")!.timeIntervalSince(base) == 0.25)
        #expect(DateText.parseISO8601("2024-01-31T14:00:00+02:00") == base)
        #expect(DateText.parseISO8601("2024-01-31T14:00:00+0200") == base)
        #expect(DateText.parseISO8601("2024-01-31T07:00:00-05:00") == base)
    }

    /// A time with 1 to 6 digits after the point is the date nearest that moment (seconds since
    /// 2001 rounded once), so a store writes back the digits it was given: `.1` as `.100`, in any
    /// year. Nine digits too where a double holds nanoseconds (within days of 2001; decades away a
    /// double's last unit is ~100 ns, and the nearest double is written).
    @Test func fractionsWriteBackAsTheyWereGiven() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: UInt64) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % bound)
        }
        for _ in 0..<20_000 {
            let places = [1, 2, 3, 6, 9][next(5)]
            let year = places == 9 ? 2001 : 1900 + next(200), month = places == 9 ? 1 : 1 + next(12)
            let day = 1 + next(28)
            var digits = String(next(1_000_000_000)).leftPadded(to: 9)
            digits = String(digits.prefix(places))
            let time = String(format: "%02d:%02d:%02d", next(24), next(60), next(60))
            let text = String(format: "%04d-%02d-%02d", year, month, day) + "T" + time + "." + digits + "Z"
            guard let date = DateText.parseISO8601(text) else {
                Issue.record("\(text) not read")
                continue
            }
            let width = places <= 3 ? 3 : places <= 6 ? 6 : 9
            let written = SQLDateText.format(date, iso8601: true)
            // What is written is the same time with the digits padded to 3, 6 or 9 (trailing zeros
            // dropped by the writer only to that width).
            let expected = String(text.dropLast(1)) + String(repeating: "0", count: width - places) + "Z"
            let trimmed = Self.trimmingZeroGroups(expected)
            #expect(written == expected || written == trimmed, "\(text) written as \(written)")
        }
        // Seconds since 1970, as a decimal: rounded once too.
        let unix = DateText.parseUnixSeconds("1717300804.1")!
        #expect(SQLDateText.format(unix, iso8601: true) == "2024-06-02T04:00:04.100Z")
        #expect(DateText.parseUnixSeconds("-0.25")! == DateText.parseISO8601("1969-12-31T23:59:59.750Z")!)
        #expect(DateText.parseUnixSeconds("-.5")! == DateText.parseISO8601("1969-12-31T23:59:59.500Z")!)
        #expect(DateText.parseUnixSeconds("+86400") == DateText.parseISO8601("1970-01-02"))
        #expect(DateText.parseUnixSeconds("1.7e9") == Date(timeIntervalSince1970: 1.7e9))
        #expect(DateText.parseUnixSeconds("1.0000000001") == Date(timeIntervalSince1970: 1.0000000001))
        for refused in ["", ".", "-", "abc", "nan", "inf", " 5", "5 ", "1_0"] {
            #expect(DateText.parseUnixSeconds(refused) == nil, "\(refused.debugDescription)")
        }
    }

    /// `…:04.120000000Z` → `…:04.120Z`: a fraction written by groups of three digits, the trailing
    /// all-zero groups dropped (none when every digit is zero).
    static func trimmingZeroGroups(_ text: String) -> String {
        guard let point = text.lastIndex(of: ".") else { return text }
        var digits = String(text[text.index(after: point)...].dropLast())
        while digits.count > 3, digits.hasSuffix("000") { digits.removeLast(3) }
        if digits.allSatisfy({ $0 == "0" }) { return String(text[..<point]) + "Z" }
        return String(text[...point]) + digits + "Z"
    }

    @Test(arguments: [
        "yyyy-MM-dd", "dd/MM/yyyy", "dd.MM.yyyy HH:mm", "yyyyMMddHHmmss", "yyyy-MM-dd'T'HH:mm:ss",
        "MM/dd/yyyy HH:mm:ss.SSS",
    ])
    func patternsAgreeWithDateFormatter(pattern: String) throws {
        let compiled = try #require(DatePattern(pattern))
        let formatter = Self.formatter(pattern)
        for s in Self.samples(count: 1500) {
            var text = pattern
            for (token, value) in [
                ("yyyy", String(format: "%04d", s.year)), ("MM", String(format: "%02d", s.month)),
                ("dd", String(format: "%02d", s.day)), ("HH", String(format: "%02d", s.hour)),
                ("mm", String(format: "%02d", s.minute)), ("ss", String(format: "%02d", s.second)),
                ("SSS", String(format: "%03d", s.second * 7)), ("'T'", "T"),
            ] {
                text = text.replacingOccurrences(of: token, with: value)
            }
            // Foundation's reference: strict, the text must read back the same.
            let expected = formatter.date(from: text).flatMap { formatter.string(from: $0) == text ? $0 : nil }
            let got = compiled.date(from: text)
            if let expected, let got {
                #expect(abs(got.timeIntervalSince(expected)) < 0.0005, "\(pattern): \(text)")
            } else {
                #expect(
                    got == nil && expected == nil,
                    "\(pattern): \(text) → \(String(describing: got)) vs \(String(describing: expected))")
            }
        }
    }

    @Test func patternsWithNamesOrClocksAreLeftToDateFormatter() {
        #expect(DatePattern("dd MMM yyyy") == nil)
        #expect(DatePattern("MM/dd/yyyy hh:mm a") == nil)
        #expect(DatePattern("d/M/yyyy") == nil)
        #expect(DatePattern("HH:mm") == nil)  // no date in it
        #expect(DatePattern("yyyy-MM-dd 'at' HH:mm") != nil)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
