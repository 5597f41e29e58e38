import Foundation

/// A date pattern (`yyyy-MM-dd`, `dd/MM/yyyy HH:mm`, …) compiled once and applied without ICU, when
/// it is made only of the numeric fields `yyyy MM dd HH mm ss` (and `S…` fractions) and literal text
/// (quoted letters or other characters). Other patterns (month names, 12-hour clocks, …) return `nil`
/// from `init` and go through `DateFormatter`.
package struct DatePattern {
    private enum Part: Equatable {
        case literal(UInt8)
        case year, month, day, hour, minute, second
        case fraction(Int)
    }
    private let parts: [Part]

    package init?(_ pattern: String) {
        var parts: [Part] = []
        let characters = Array(pattern.utf8)
        var index = 0
        while index < characters.count {
            let character = characters[index]
            var run = 1
            while index + run < characters.count, characters[index + run] == character { run += 1 }
            switch (character, run) {
            case (UInt8(ascii: "y"), 4): parts.append(.year)
            case (UInt8(ascii: "M"), 2): parts.append(.month)
            case (UInt8(ascii: "d"), 2): parts.append(.day)
            case (UInt8(ascii: "H"), 2): parts.append(.hour)
            case (UInt8(ascii: "m"), 2): parts.append(.minute)
            case (UInt8(ascii: "s"), 2): parts.append(.second)
            case (UInt8(ascii: "S"), _): parts.append(.fraction(run))
            case (UInt8(ascii: "'"), _):
                // Quoted literal text; '' is a quote.
                var end = index + 1
                if run >= 2 {
                    parts.append(.literal(UInt8(ascii: "'")))
                    index += 2
                    continue
                }
                while end < characters.count, characters[end] != UInt8(ascii: "'") {
                    parts.append(.literal(characters[end]))
                    end += 1
                }
                guard end < characters.count else { return nil }
                index = end + 1
                continue
            default:
                if (character >= 65 && character <= 90) || (character >= 97 && character <= 122) || character >= 128 {
                    return nil
                }
                for _ in 0..<run { parts.append(.literal(character)) }
            }
            index += run
        }
        guard parts.contains(.year), parts.contains(.month), parts.contains(.day) else { return nil }
        self.parts = parts
    }

    /// The date `text` spells in this pattern (UTC), or `nil` when it does not follow it exactly.
    package func date(from text: String) -> Date? {
        var text = text
        return text.withUTF8(date(bytes:))
    }

    /// `date(from:)` of UTF-8 bytes.
    package func date(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var scanner = DateText.Scanner(bytes: bytes)
        var year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, nanoseconds = 0
        for part in parts {
            switch part {
            case .literal(let byte):
                guard scanner.index < bytes.count, bytes[scanner.index] == byte else { return nil }
                scanner.index += 1
            case .year:
                guard let value = scanner.digits(4) else { return nil }
                year = value
            case .month:
                guard let value = scanner.digits(2) else { return nil }
                month = value
            case .day:
                guard let value = scanner.digits(2) else { return nil }
                day = value
            case .hour:
                guard let value = scanner.digits(2) else { return nil }
                hour = value
            case .minute:
                guard let value = scanner.digits(2) else { return nil }
                minute = value
            case .second:
                guard let value = scanner.digits(2) else { return nil }
                second = value
            case .fraction(let count):
                guard let value = scanner.digits(count) else { return nil }
                nanoseconds = value
                for _ in count..<max(count, 9) { nanoseconds *= 10 }
                if count > 9 { return nil }
            }
        }
        guard scanner.atEnd else { return nil }
        return DateText.date(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second, nanoseconds: nanoseconds,
            offset: 0)
    }
}
