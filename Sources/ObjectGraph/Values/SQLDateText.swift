import Foundation

/// Dates as text that SQLite's date functions read — `2024-01-31 12:00:00`, UTC — and that comes
/// back as the very same `Date`: the fraction of a second has as many digits as the value needs
/// (none for whole seconds, three for milliseconds, more only when the value has more).
///
/// With `iso8601: true` the text is ISO 8601 proper (`2024-01-31T12:00:00Z`), as exports write it.
/// Years outside 0000–9999 are written with a sign (`+10000-01-01 …`, `-0001-…`): exact, but
/// neither SQLite's functions nor text order handle them (`isOrderable` tells).
///
/// ```swift
/// SQLDateText.format(Date(timeIntervalSince1970: 1_700_000_000.25))   // "2023-11-14 22:13:20.250"
/// SQLDateText.parse("2023-11-14 22:13:20.250")                        // the same Date
/// ```
public enum SQLDateText {
    /// Seconds from 1970-01-01 to 2001-01-01 (Foundation's reference date).
    private static let referenceOffset: Int64 = 978_307_200

    public static func format(_ date: Date, iso8601: Bool = false) -> String {
        withUTF8(date, iso8601: iso8601) { String(decoding: $0, as: UTF8.self) }
    }

    /// Calls `body` with the UTF-8 bytes of `format(date, iso8601:)` (valid only during the call),
    /// built without allocating in the usual case: how stores bind dates.
    public static func withUTF8<R>(
        _ date: Date, iso8601: Bool = false, _ body: (UnsafeBufferPointer<UInt8>) throws -> R
    ) rethrows -> R {
        // 48 bytes on the stack; not `withUnsafeTemporaryAllocation`, whose unspecialized form
        // costs more than the formatting.
        var storage: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
        let count = withUnsafeMutableBytes(of: &storage) { write(date, iso8601: iso8601, into: $0) }
        guard let count else {
            var text = slowFormat(date, iso8601: iso8601)
            return try text.withUTF8(body)
        }
        return try withUnsafeBytes(of: &storage) { raw in
            try raw.withMemoryRebound(to: UInt8.self) { try body(UnsafeBufferPointer(rebasing: $0.prefix(count))) }
        }
    }

    /// Writes the text of the usual dates — a year of at most 18 digits, whole seconds or a fraction
    /// of 3, 6 or 9 digits — into `buffer` (48 bytes); the length, or `nil` for `slowFormat`.
    private static func write(_ date: Date, iso8601: Bool, into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        let interval = date.timeIntervalSinceReferenceDate
        guard interval.isFinite, abs(interval) < 1e15 else { return nil }
        let whole = interval.rounded(.down)
        let unix = Int64(whole) + referenceOffset
        let days = unix >= 0 ? unix / 86_400 : (unix - 86_399) / 86_400
        let secondOfDay = Int64(unix - days * 86_400)
        let (year, month, day) = civil(fromDays: days)
        let fraction = interval - whole
        var places = 0, digits: Int64 = 0
        if fraction > 0 {
            for count in stride(from: 3, through: 9, by: 3) {
                let scale = count == 3 ? 1e3 : count == 6 ? 1e6 : 1e9
                let candidate = Int64((fraction * scale).rounded())
                // `Double(candidate) / scale` is the double nearest the decimal, as parsing reads it.
                if candidate > 0, Double(candidate) < scale, whole + Double(candidate) / scale == interval {
                    (places, digits) = (count, candidate)
                    break
                }
            }
            if places == 0 { return nil }
        }
        var count = 0
        func put(_ byte: UInt8) {
            buffer[count] = byte
            count += 1
        }
        func put(_ value: Int64, width: Int) {
            var divisor: Int64 = 1
            for _ in 1..<width { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                put(UInt8(48 + rest / divisor))
                rest %= divisor
                divisor /= 10
            }
        }
        if year < 0 || year > 9999 {
            put(year < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
            let magnitude = abs(year)
            var width = 4
            while width < 18, magnitude >= Self.powerOfTen(width) { width += 1 }
            put(magnitude, width: width)
        } else {
            put(year, width: 4)
        }
        put(UInt8(ascii: "-"))
        put(Int64(month), width: 2)
        put(UInt8(ascii: "-"))
        put(Int64(day), width: 2)
        put(iso8601 ? UInt8(ascii: "T") : UInt8(ascii: " "))
        put(secondOfDay / 3_600, width: 2)
        put(UInt8(ascii: ":"))
        put(secondOfDay / 60 % 60, width: 2)
        put(UInt8(ascii: ":"))
        put(secondOfDay % 60, width: 2)
        if places > 0 {
            put(UInt8(ascii: "."))
            put(digits, width: places)
        }
        if iso8601 { put(UInt8(ascii: "Z")) }
        return count
    }

    private static func powerOfTen(_ exponent: Int) -> Int64 {
        (0..<exponent).reduce(1) { value, _ in value * 10 }
    }

    /// The dates `write` leaves: out of any calendar's reach (exact as a number, which `parse` reads
    /// back), or a fraction of a second that needs more than nine digits. A moment less than 2^-53
    /// seconds before a whole second has no fraction a double holds (1 − 2^-54 is 1): a number too.
    private static func slowFormat(_ date: Date, iso8601: Bool) -> String {
        let interval = date.timeIntervalSinceReferenceDate
        let whole = interval.rounded(.down)
        guard interval.isFinite, abs(interval) < 1e15, interval - whole < 1 else { return "\(interval)" }
        // The whole second as `write` spells it, then the fraction's shortest digits.
        let base = format(Date(timeIntervalSinceReferenceDate: whole), iso8601: iso8601)
        let fraction = "." + plainFractionDigits(interval - whole)
        return iso8601 ? base.dropLast() + fraction + "Z" : base + fraction
    }

    /// Whether `date` is midnight UTC of some day: a value a calendar date (`AttributeType.calendarDate`) may hold.
    public static func isWholeDay(_ date: Date) -> Bool {
        let interval = date.timeIntervalSinceReferenceDate
        return interval.isFinite && abs(interval) < 1e15 && interval.rounded(.down) == interval
            && (Int64(interval) + referenceOffset) % 86_400 == 0
    }

    /// `withUTF8(date)` of a calendar date: `YYYY-MM-DD` alone (a date that is not a whole day keeps its time).
    public static func withDayUTF8<R>(_ date: Date, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try withUTF8(date) { bytes in
            guard isWholeDay(date), let space = bytes.firstIndex(of: UInt8(ascii: " ")) else { return try body(bytes) }
            return try body(UnsafeBufferPointer(rebasing: bytes[..<space]))
        }
    }

    /// `format` of a calendar date: `2024-01-31`.
    public static func formatDay(_ date: Date) -> String {
        withDayUTF8(date) { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether `format` writes the date as text whose order is the dates' order (years 0000–9999).
    public static func isOrderable(_ date: Date) -> Bool {
        let interval = date.timeIntervalSinceReferenceDate
        // 0000-01-01 and 10000-01-01 in seconds since 2001.
        return interval >= -63_113_904_000 && interval < 252_423_993_600
    }

    /// The digits after the point of `fraction` (0 < fraction < 1) as Swift's shortest description
    /// spells it (`1.5e-07` → `00000015`).
    private static func plainFractionDigits(_ fraction: Double) -> String {
        let description = "\(fraction)"
        guard let e = description.firstIndex(of: "e") else {
            return String(description.drop { $0 != "." }.dropFirst())
        }
        let mantissa = description[..<e].replacingOccurrences(of: ".", with: "")
        let exponent = Int(description[description.index(after: e)...])!  // negative: fraction < 1
        return String(repeating: "0", count: -exponent - 1) + mantissa
    }

    /// The date `format` wrote; also a bare day (`2024-01-31`), a `T` between day and time, and a
    /// trailing `Z`. `nil` for any other text.
    public static func parse(_ text: String) -> Date? {
        var usual = text
        if let date = usual.withUTF8(parseUsual) { return date }
        // What `format` writes for a date out of any calendar's reach, or a hair before a whole
        // second: seconds since 2001 as a number (`9000000000000000.0`, `1e+16`, `inf`, `nan`, `-1e-17`).
        if let seconds = Double(text), !(abs(seconds) < 1e15) || text.contains(where: { $0 == "e" || $0 == "n" }) {
            return Date(timeIntervalSinceReferenceDate: seconds)
        }
        var text = Substring(text)
        if text.hasSuffix("Z") { text = text.dropLast() }
        var sign: Int64 = 1
        if let first = text.first, first == "-" || first == "+" {
            sign = first == "-" ? -1 : 1
            text = text.dropFirst()
        }
        let parts = text.split(separator: "-", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count >= 4, let year = digits(parts[0]), parts[1].count == 2,
            let month = digits(parts[1]), (1...12).contains(month)
        else { return nil }
        let rest = parts[2]
        guard rest.count >= 2, let day = digits(rest.prefix(2)), day >= 1,
            day <= DateText.daysIn(month: Int(month), year: Int(sign * year))
        else { return nil }
        var seconds: Int64 = 0
        var fraction = 0.0
        let time = rest.dropFirst(2)
        if !time.isEmpty {
            guard time.first == " " || time.first == "T" else { return nil }
            let clock = time.dropFirst()
            let (hms, point) =
                clock.firstIndex(of: ".").map { (clock[..<$0], clock[clock.index(after: $0)...]) } ?? (clock, nil)
            let fields = hms.split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count == 3, fields.allSatisfy({ $0.count == 2 }), let hour = digits(fields[0]), hour < 24,
                let minute = digits(fields[1]), minute < 60, let second = digits(fields[2]), second < 60
            else { return nil }
            seconds = hour * 3_600 + minute * 60 + second
            if let point {
                guard !point.isEmpty, point.allSatisfy({ $0.isASCII && $0.isNumber }),
                    let value = Double("0." + point)
                else { return nil }
                fraction = value
            }
        }
        let days = Int64(DateText.daysFromCivil(year: Int(sign * year), month: Int(month), day: Int(day)))
        let whole = days * 86_400 + seconds - referenceOffset
        return Date(timeIntervalSinceReferenceDate: Double(whole) + fraction)
    }

    /// `parse` for what `format` writes of years 0000–9999 (`2024-01-31`, `2024-01-31 12:00:00`, a
    /// `T` for the space, up to nine digits of fraction, a trailing `Z`), straight from the bytes; `nil`
    /// for anything else, which `parse` then reads the long way (a store reads a date a row).
    private static func parseUsual(_ bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var count = bytes.count
        if count > 0 && bytes[count - 1] == UInt8(ascii: "Z") { count -= 1 }
        guard count == 10 || count >= 19 else { return nil }
        func number(_ start: Int, _ width: Int) -> Int? {
            var value = 0
            for index in start..<start + width {
                let digit = Int(bytes[index]) - 48
                guard digit >= 0 && digit <= 9 else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), let year = number(0, 4),
            let month = number(5, 2), (1...12).contains(month), let day = number(8, 2), day >= 1,
            day <= DateText.daysIn(month: month, year: year)
        else { return nil }
        var seconds = 0, fraction = 0.0
        if count > 10 {
            guard bytes[10] == UInt8(ascii: " ") || bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"),
                bytes[16] == UInt8(ascii: ":"), let hour = number(11, 2), hour < 24, let minute = number(14, 2),
                minute < 60, let second = number(17, 2), second < 60
            else { return nil }
            seconds = hour * 3_600 + minute * 60 + second
            if count > 19 {
                // Digits as an integer over a power of ten: both exact, so the quotient is the double
                // nearest the decimal, as `Double("0.…")` reads it.
                let places = count - 20
                guard bytes[19] == UInt8(ascii: "."), (1...9).contains(places), let digits = number(20, places)
                else { return nil }
                var scale = 1.0
                for _ in 0..<places { scale *= 10 }
                fraction = Double(digits) / scale
            }
        }
        let days = Int64(DateText.daysFromCivil(year: year, month: month, day: day))
        let whole = days * 86_400 + Int64(seconds) - referenceOffset
        return Date(timeIntervalSinceReferenceDate: Double(whole) + fraction)
    }

    private static func digits(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int64(text)
    }

    /// Year, month, day of a day number since 1970-01-01 (Howard Hinnant's `civil_from_days`).
    private static func civil(fromDays days: Int64) -> (year: Int64, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * monthIndex + 2) / 5 + 1)
        let month = Int(monthIndex < 10 ? monthIndex + 3 : monthIndex - 9)
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
