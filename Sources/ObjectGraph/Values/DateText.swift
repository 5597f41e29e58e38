import Foundation

/// Dates read from text without ICU (a `DateFormatter` or `ISO8601DateFormatter` costs tens of
/// microseconds per value; this costs well under one): ISO 8601, and date patterns made of numeric
/// fields. Every field is range-checked and the day checked against its month, so `2024-02-30` is
/// refused, never rolled over into March.
package enum DateText {
    /// ISO 8601 as the pipeline takes it: `2024-01-31`, or `2024-01-31T12:00:00` followed by `Z` or
    /// an offset (`+02:00`, `+0200`), with any number of fraction digits after the seconds; or SQL's
    /// `2024-01-31 12:00:00` (a space; without a zone in UTC, as SQLite's date functions read it).
    package static func parseISO8601(_ text: String) -> Date? {
        var text = text
        return text.withUTF8(parseISO8601(bytes:))
    }

    /// `parseISO8601` of UTF-8 bytes.
    package static func parseISO8601(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var scanner = Scanner(bytes: bytes)
        guard let year = scanner.digits(4), scanner.skip("-"), let month = scanner.digits(2), scanner.skip("-"),
            let day = scanner.digits(2)
        else { return nil }
        if scanner.atEnd {
            return date(year: year, month: month, day: day, hour: 0, minute: 0, second: 0, nanoseconds: 0, offset: 0)
        }
        // `T` and a zone, or SQL's `2024-01-31 12:30:00` (a space; no zone: UTC, as SQLite reads it).
        let sqlStyle = scanner.skip(" ")
        guard sqlStyle || scanner.skip("T"), let hour = scanner.digits(2), scanner.skip(":"),
            let minute = scanner.digits(2), scanner.skip(":"), let second = scanner.digits(2)
        else { return nil }
        var nanoseconds = 0
        if scanner.skip(".") {
            guard let fraction = scanner.fraction() else { return nil }
            nanoseconds = fraction
        }
        let offset: Int
        if sqlStyle, scanner.atEnd {
            offset = 0
        } else {
            guard let zone = scanner.zone(), scanner.atEnd else { return nil }
            offset = zone
        }
        return date(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second, nanoseconds: nanoseconds,
            offset: offset)
    }

    /// The date of the given fields in UTC minus `offset` seconds, or `nil` when a field is out of
    /// range (month 1–12, the month's days, hour 0–23, minute 0–59, second 0–59).
    package static func date(
        year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, nanoseconds: Int, offset: Int
    ) -> Date? {
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
            (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second)
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offset
        return since1970(seconds: Int64(seconds), nanoseconds: Int64(nanoseconds))
    }

    /// Seconds since 2001 — what a `Date` holds — taken in integers before the fraction is added:
    /// one rounding, so `2024-06-02T04:00:04.1Z` is the date nearest .1 past that second and is
    /// written back as `.100` (going through seconds since 1970 rounded twice: `.099999905`).
    static func since1970(seconds: Int64, nanoseconds: Int64) -> Date {
        Date(timeIntervalSinceReferenceDate: Double(seconds - 978_307_200) + Double(nanoseconds) / 1e9)
    }

    /// Seconds since 1970 written as a decimal (`1700000000`, `-0.001`, `1700000000.25`), read as
    /// `parseISO8601` reads a time: whole seconds and nanoseconds apart, rounded once. Other spellings
    /// a double reads (`1.7e9`, more than nine digits after the point) as that double.
    package static func parseUnixSeconds(_ text: String) -> Date? {
        guard let value = Double(text), value.isFinite else { return nil }
        var digits = Substring(text)
        let negative = digits.first == "-"
        if negative || digits.first == "+" { digits = digits.dropFirst() }
        let parts = digits.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let fraction = parts.count == 2 ? parts[1] : ""
        guard let whole = Int64(parts[0].isEmpty ? "0" : parts[0]), whole < 1 << 50, fraction.count <= 9,
            fraction.allSatisfy({ $0.isASCII && $0.isNumber }), !(parts[0].isEmpty && fraction.isEmpty)
        else { return Date(timeIntervalSince1970: value) }
        var nanoseconds = Int64(fraction.isEmpty ? "0" : fraction)!
        for _ in fraction.count..<9 { nanoseconds *= 10 }
        // −(w + f) = (−w − 1) + (1 − f): the fraction stays positive, as the parser's are.
        if negative, nanoseconds > 0 { return since1970(seconds: -whole - 1, nanoseconds: 1_000_000_000 - nanoseconds) }
        return since1970(seconds: negative ? -whole : whole, nanoseconds: nanoseconds)
    }

    package static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    package static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Reads UTF-8 bytes field by field.
    struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        var atEnd: Bool { index == bytes.count }

        mutating func skip(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(character.value) else { return false }
            index += 1
            return true
        }

        /// Exactly `count` ASCII digits.
        mutating func digits(_ count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for offset in 0..<count {
                let digit = Int(bytes[index + offset]) - 48
                guard digit >= 0, digit <= 9 else { return nil }
                value = value * 10 + digit
            }
            index += count
            return value
        }

        /// One or more digits after a decimal point, as nanoseconds (digits past the ninth must be there but are
        /// ignored).
        mutating func fraction() -> Int? {
            var nanoseconds = 0, count = 0
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                if count < 9 { nanoseconds = nanoseconds * 10 + Int(bytes[index]) - 48 }
                count += 1
                index += 1
            }
            guard count > 0 else { return nil }
            for _ in count..<max(count, 9) { nanoseconds *= 10 }
            return nanoseconds
        }

        /// `Z`, `+hh:mm`, `-hh:mm`, `+hhmm` or `-hhmm`, as seconds east of UTC.
        mutating func zone() -> Int? {
            if skip("Z") { return 0 }
            let sign: Int
            if skip("+") { sign = 1 } else if skip("-") { sign = -1 } else { return nil }
            guard let hours = digits(2), hours <= 23 else { return nil }
            _ = skip(":")
            guard let minutes = digits(2), minutes <= 59 else { return nil }
            return sign * (hours * 3_600 + minutes * 60)
        }
    }
}
