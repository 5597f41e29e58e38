import Foundation

extension SQLParser {
    // MARK: Values

    /// One value of a VALUES list written into `builder`; returns whether it is NULL. Plain numbers and
    /// strings without escapes are copied straight from the statement.
    mutating func value(into builder: inout RecordBuilder) throws -> Bool {
        lastValueIsBlob = false
        skipSpace()
        guard pos < bytes.count else { throw Failure("expected a value before the end of the statement") }
        let c = bytes[pos]
        if c == UInt8(ascii: "'") {
            let start = pos + 1
            if let close = memchr(bytes.baseAddress! + start, Int32(c), bytes.count - start) {
                let end = UnsafePointer(close.assumingMemoryBound(to: UInt8.self)) - bytes.baseAddress!
                if end + 1 >= bytes.count || bytes[end + 1] != c {
                    builder.append(bytes.baseAddress! + start, end - start)
                    pos = end + 1
                    return false
                }
            }
        } else if (c >= 48 && c <= 57) || c == UInt8(ascii: "-") {
            let range = try numberRange()
            // Only a literal starting `0` or `-0` may be spelled otherwise than its integer.
            let lead = bytes[range.lowerBound] == UInt8(ascii: "-") ? range.lowerBound + 1 : range.lowerBound
            if !lastNumberIsReal, lead < range.upperBound, bytes[lead] == UInt8(ascii: "0"),
                let canonical = try Self.integerText(UnsafeBufferPointer(rebasing: bytes[range]))
            {
                canonical.withUnsafeBufferPointer { literal in
                    if literal.count >= 19, Self.appendReal(literal, to: &builder) { return }
                    builder.append(literal.baseAddress!, literal.count)
                }
                return false
            }
            // An integer literal is kept as written unless it may not fit 64 bits (then SQLite reads a REAL).
            if (!lastNumberIsReal && range.count < 19)
                || !Self.appendReal(UnsafeBufferPointer(rebasing: bytes[range]), to: &builder)
            {
                builder.append(bytes.baseAddress! + range.lowerBound, range.count)
            }
            return false
        } else if c | 0x20 == UInt8(ascii: "n"), isKeyword("NULL") {
            return true
        }
        guard let bytes = try value() else { return true }
        bytes.withUnsafeBufferPointer { if $0.count > 0 { builder.append($0.baseAddress!, $0.count) } }
        return false
    }

    /// One value of a VALUES list: bytes of its text form, `nil` for NULL.
    mutating func value() throws -> [UInt8]? {
        lastValueIsBlob = false
        skipSpace()
        guard pos < bytes.count else { throw Failure("expected a value before the end of the statement") }
        let c = bytes[pos]
        if c == UInt8(ascii: "'") { return try string() }
        if c == UInt8(ascii: "-") || c == UInt8(ascii: "+") || c == UInt8(ascii: ".") || (c >= 48 && c <= 57) {
            return try number()
        }
        if c == UInt8(ascii: "X") || c == UInt8(ascii: "x"), pos + 1 < bytes.count, bytes[pos + 1] == UInt8(ascii: "'")
        {
            pos += 1
            let hex = try string()
            guard hex.count % 2 == 0,
                hex.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 | 0x20 >= 97 && $0 | 0x20 <= 102) })
            else {
                throw Failure("a blob literal X'…' must hold an even number of hexadecimal digits")
            }
            lastValueIsBlob = true
            return hex.map { $0 >= 65 && $0 <= 70 ? $0 | 0x20 : $0 }
        }
        guard let word = keyword() else {
            throw Failure("unexpected \"\(Character(Unicode.Scalar(c)))\" where a value was expected")
        }
        switch word {
        case "NULL": return nil
        case "TRUE": return Array("1".utf8)
        case "FALSE": return Array("0".utf8)
        case "REPLACE":
            try expect(UInt8(ascii: "("))
            let text = try value(), pattern = try (expectComma(), value()).1,
                replacement = try (expectComma(), value()).1
            try expect(UInt8(ascii: ")"))
            guard let text else { return nil }
            guard let pattern, let replacement, !pattern.isEmpty else { return text }
            return Self.replacing(pattern, with: replacement, in: text)
        case "CHAR":
            try expect(UInt8(ascii: "("))
            var out: [UInt8] = []
            repeat {
                guard let digits = try value(), let code = UInt32(String(decoding: digits, as: UTF8.self)),
                    let scalar = Unicode.Scalar(code)
                else {
                    throw Failure("char() takes code points")
                }
                out += Array(String(Character(scalar)).utf8)
            } while consume(UInt8(ascii: ","))
            try expect(UInt8(ascii: ")"))
            return out
        case "UNISTR":
            try expect(UInt8(ascii: "("))
            guard let text = try value() else {
                try expect(UInt8(ascii: ")"))
                return nil
            }
            try expect(UInt8(ascii: ")"))
            return try Self.unistr(text)
        default:
            throw Failure("the value \(word) is not supported (only literals, replace(), char() and unistr())")
        }
    }

    private mutating func expectComma() throws { try expect(UInt8(ascii: ",")) }

    /// A 'string' with '' escapes; raw line breaks are part of it.
    mutating func string() throws -> [UInt8] {
        pos += 1
        var out: [UInt8] = []
        while pos < bytes.count {
            let start = pos
            while pos < bytes.count, bytes[pos] != UInt8(ascii: "'") { pos += 1 }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<pos]))
            guard pos < bytes.count else { break }
            pos += 1
            if pos < bytes.count, bytes[pos] == UInt8(ascii: "'") {
                out.append(bytes[pos])
                pos += 1
                continue
            }
            return out
        }
        throw Failure("a string is not closed before the end of the statement")
    }

    mutating func number() throws -> [UInt8] {
        let literal = UnsafeBufferPointer(rebasing: bytes[try numberRange()])
        if !lastNumberIsReal, let canonical = try Self.integerText(literal) {
            return canonical.withUnsafeBufferPointer { RealLiteral.text($0).map { Array($0.utf8) } } ?? canonical
        }
        return RealLiteral.text(literal).map { Array($0.utf8) } ?? Array(literal)
    }

    /// The integer SQLite reads from an integer literal written otherwise than its digits: leading
    /// zeros (`007` is 7), `-0` (0), hexadecimal (`0x1F` is 31, `0xFFFFFFFFFFFFFFFF` is -1, as
    /// 64-bit two's complement); `nil` for a literal already in its own spelling (the usual case).
    /// - Throws: `Failure` for a hexadecimal literal beyond 64 bits (SQLite refuses it too).
    static func integerText(_ literal: UnsafeBufferPointer<UInt8>) throws -> [UInt8]? {
        let negative = literal.first == UInt8(ascii: "-")
        let digits = UnsafeBufferPointer(rebasing: literal[(negative ? 1 : 0)...])
        guard digits.count > 1 || (negative && digits.first == UInt8(ascii: "0")), digits.first == UInt8(ascii: "0")
        else { return nil }
        if digits.count > 1, digits[1] | 0x20 == UInt8(ascii: "x") {
            let hex = digits.dropFirst(2).drop { $0 == UInt8(ascii: "0") }
            guard hex.count <= 16 else {
                throw Failure("the hexadecimal literal \(String(decoding: literal, as: UTF8.self)) is beyond 64 bits")
            }
            var value: UInt64 = 0
            for c in hex { value = value << 4 | UInt64(c &- 48 < 10 ? c &- 48 : (c | 0x20) &- 87) }
            let signed = Int64(bitPattern: value)
            return Array(String(negative ? 0 &- signed : signed).utf8)
        }
        let significant = digits.drop { $0 == UInt8(ascii: "0") }
        if significant.isEmpty { return Array("0".utf8) }
        return (negative ? [UInt8(ascii: "-")] : []) + Array(significant)
    }

    /// Appends `realText` of a REAL literal; `false` for an integer literal (appended by the caller).
    static func appendReal(_ literal: UnsafeBufferPointer<UInt8>, to builder: inout RecordBuilder) -> Bool {
        RealLiteral.withBytes(literal) { bytes in
            guard let bytes else { return false }
            builder.append(bytes.baseAddress!, bytes.count)
            return true
        }
    }

    /// The text of a numeric literal, without a leading `+`.
    mutating func numberRange() throws -> Range<Int> {
        let start = pos
        let n = bytes.count
        guard let p = bytes.baseAddress else { throw Failure("a number has no digits") }
        var i = pos
        @inline(__always) func isDigit(_ c: UInt8) -> Bool { c &- 48 < 10 }
        @inline(__always) func isHex(_ c: UInt8) -> Bool { isDigit(c) || (c | 0x20) &- 97 < 6 }
        if p[i] == UInt8(ascii: "-") || p[i] == UInt8(ascii: "+") { i += 1 }
        let digitsStart = i
        var digits = 0
        lastNumberIsReal = false
        if i + 1 < n, p[i] == UInt8(ascii: "0"), p[i + 1] | 0x20 == UInt8(ascii: "x") {
            i += 2
            while i < n, isHex(p[i]) { i += 1 }
            digits = i - digitsStart - 2
        } else {
            while i < n, isDigit(p[i]) { i += 1 }
            digits = i - digitsStart
            if i < n, p[i] == UInt8(ascii: ".") {
                lastNumberIsReal = true
                i += 1
                let fraction = i
                while i < n, isDigit(p[i]) { i += 1 }
                digits += i - fraction
            }
            if digits > 0, i < n, p[i] | 0x20 == UInt8(ascii: "e") {
                lastNumberIsReal = true
                i += 1
                if i < n, p[i] == UInt8(ascii: "-") || p[i] == UInt8(ascii: "+") { i += 1 }
                let exponentStart = i
                while i < n, isDigit(p[i]) { i += 1 }
                if i == exponentStart {
                    pos = i
                    throw Failure("a number's exponent has no digits")
                }
            }
        }
        pos = i
        guard digits > 0 else { throw Failure("a number has no digits") }
        return (p[start] == UInt8(ascii: "+") ? start + 1 : start)..<i
    }

    static func replacing(_ pattern: [UInt8], with replacement: [UInt8], in text: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        var i = 0
        while i < text.count {
            if text[i] == pattern[0], i + pattern.count <= text.count,
                text[i..<i + pattern.count].elementsEqual(pattern)
            {
                out += replacement
                i += pattern.count
            } else {
                out.append(text[i])
                i += 1
            }
        }
        return out
    }

    /// unistr()'s escapes: `\\`, and a backslash followed by 4 hex digits, `u` + 4, `+` + 6 or `U` + 8.
    static func unistr(_ text: [UInt8]) throws -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < text.count {
            guard text[i] == UInt8(ascii: "\\") else {
                out.append(text[i])
                i += 1
                continue
            }
            guard i + 1 < text.count else { throw Failure("unistr() ends with a lone backslash") }
            var length = 4, skip = 1
            switch text[i + 1] {
            case UInt8(ascii: "\\"):
                out.append(text[i + 1])
                i += 2
                continue
            case UInt8(ascii: "u"): skip = 2
            case UInt8(ascii: "+"):
                skip = 2
                length = 6
            case UInt8(ascii: "U"):
                skip = 2
                length = 8
            default: break
            }
            guard i + skip + length <= text.count,
                let code = UInt32(String(decoding: text[i + skip..<i + skip + length], as: UTF8.self), radix: 16),
                let scalar = Unicode.Scalar(code)
            else {
                throw Failure("unistr() has an invalid escape")
            }
            out += Array(String(Character(scalar)).utf8)
            i += skip + length
        }
        return out
    }
}
