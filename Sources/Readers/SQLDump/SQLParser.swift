import Foundation

/// A small recursive-descent parser over one statement's bytes.
struct SQLParser {
    struct Failure: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    let bytes: UnsafeBufferPointer<UInt8>
    var pos = 0
    /// Whether the literal `numberRange` read last has a point or an exponent (SQLite's REAL).
    var lastNumberIsReal = false
    /// Whether the value `value()` read last is a BLOB literal (`X'…'`, given as lowercase hex).
    var lastValueIsBlob = false

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    var atEnd: Bool { pos >= bytes.count }

    /// The next byte after blanks (which are skipped).
    mutating func peek() -> UInt8? {
        skipSpace()
        return pos < bytes.count ? bytes[pos] : nil
    }

    mutating func skipSpace() {
        while pos < bytes.count {
            let c = bytes[pos]
            guard c == 32 || c == 10 || c == 9 || c == 13 else { return }
            pos += 1
        }
    }

    mutating func consume(_ c: UInt8) -> Bool {
        skipSpace()
        guard pos < bytes.count, bytes[pos] == c else { return false }
        pos += 1
        return true
    }

    mutating func expect(_ c: UInt8) throws {
        guard consume(c) else {
            throw Failure(
                "expected \"\(Character(Unicode.Scalar(c)))\"" + (atEnd ? " before the end of the statement" : ""))
        }
    }

    /// The next bare word, upper-cased (`nil` when the next token is not a word).
    mutating func keyword() -> String? {
        skipSpace()
        let start = pos
        while pos < bytes.count, StatementSplitter.isWordByte(bytes[pos]) { pos += 1 }
        guard pos > start else { return nil }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<pos]), as: UTF8.self).uppercased()
    }

    /// Consumes the next word if it is `word` (given in upper case), comparing without allocating.
    mutating func isKeyword(_ word: StaticString) -> Bool {
        skipSpace()
        let n = word.utf8CodeUnitCount
        guard pos + n <= bytes.count else { return false }
        let expected = word.utf8Start
        for i in 0..<n where bytes[pos + i] & 0xDF != expected[i] { return false }
        if pos + n < bytes.count, StatementSplitter.isWordByte(bytes[pos + n]) { return false }
        pos += n
        return true
    }

    mutating func peekKeyword() -> String? {
        let saved = pos
        defer { pos = saved }
        return keyword()
    }

    mutating func keywordIf(_ word: String) -> Bool {
        let saved = pos
        if keyword() == word { return true }
        pos = saved
        return false
    }

    /// An identifier, returning `known` (no new string) when the name is the same.
    mutating func identifier(reusing known: String) throws -> String {
        skipSpace()
        let start = pos
        var copy = known
        let same = copy.withUTF8 { name -> Bool in
            for quoteBytes in [(0, 0), (1, 1)] {
                let open = quoteBytes.0
                guard start + open + name.count + quoteBytes.1 <= bytes.count else { continue }
                if open == 1, bytes[start] != UInt8(ascii: "\"") { continue }
                guard memcmp(bytes.baseAddress! + start + open, name.baseAddress!, name.count) == 0 else { continue }
                let after = start + open + name.count
                if open == 1 {
                    guard bytes[after] == UInt8(ascii: "\""),
                        after + 1 >= bytes.count || bytes[after + 1] != UInt8(ascii: "\"")
                    else { continue }
                    pos = after + 1
                } else {
                    guard after >= bytes.count || !StatementSplitter.isWordByte(bytes[after]) else { continue }
                    pos = after
                }
                return true
            }
            return false
        }
        return same && !known.isEmpty ? known : try identifier()
    }

    /// An identifier: bare, "quoted", [bracketed] or `backticked`.
    mutating func identifier() throws -> String {
        skipSpace()
        guard pos < bytes.count else { throw Failure("expected a name before the end of the statement") }
        let open = bytes[pos]
        let close: UInt8? =
            switch open {
            case UInt8(ascii: "\""), UInt8(ascii: "`"), UInt8(ascii: "'"): open
            case UInt8(ascii: "["): UInt8(ascii: "]")
            default: nil
            }
        guard let close else {
            let start = pos
            while pos < bytes.count, StatementSplitter.isWordByte(bytes[pos]) { pos += 1 }
            guard pos > start else { throw Failure("expected a name, found \"\(Character(Unicode.Scalar(open)))\"") }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<pos]), as: UTF8.self)
        }
        pos += 1
        var name: [UInt8] = []
        while pos < bytes.count {
            let c = bytes[pos]
            pos += 1
            if c == close {
                if close != UInt8(ascii: "]"), pos < bytes.count, bytes[pos] == close {
                    name.append(c)
                    pos += 1
                    continue
                }
                return String(decoding: name, as: UTF8.self)
            }
            name.append(c)
        }
        throw Failure("a quoted name is not closed")
    }

    mutating func identifierList() throws -> [String] {
        try expect(UInt8(ascii: "("))
        var names: [String] = []
        repeat {
            names.append(try identifier())
            _ = keywordIf("ASC") || keywordIf("DESC")
            if keywordIf("COLLATE") { _ = try identifier() }
        } while consume(UInt8(ascii: ","))
        try expect(UInt8(ascii: ")"))
        return names
    }

    /// A word of a column type with its size, e.g. `VARCHAR(20)` or `DECIMAL(10, 2)`.
    mutating func typeWord() throws -> String {
        var word = try identifier()
        skipSpace()
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "(") {
            let start = pos
            try skipBalanced()
            word += String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<pos]), as: UTF8.self).filter {
                $0 != " "
            }
        }
        return word
    }

    /// Skips a parenthesised group (strings inside respected).
    mutating func skipBalanced() throws {
        skipSpace()
        guard consume(UInt8(ascii: "(")) else { return }
        var depth = 1
        while pos < bytes.count, depth > 0 {
            let c = bytes[pos]
            if c == UInt8(ascii: "'") || c == UInt8(ascii: "\"") {
                _ = try identifier()
                continue
            }
            if c == UInt8(ascii: "(") { depth += 1 }
            if c == UInt8(ascii: ")") { depth -= 1 }
            pos += 1
        }
        if depth > 0 { throw Failure("unbalanced parentheses") }
    }

    /// Skips one token of a column constraint (a word, a literal, or a parenthesised group).
    mutating func skipColumnConstraintToken() throws {
        skipSpace()
        guard pos < bytes.count else { return }
        let c = bytes[pos]
        if c == UInt8(ascii: "(") {
            try skipBalanced()
            return
        }
        if c == UInt8(ascii: "'") || c == UInt8(ascii: "\"") || c == UInt8(ascii: "[") || c == UInt8(ascii: "`") {
            _ = try identifier()
            return
        }
        if (c >= 48 && c <= 57) || c == UInt8(ascii: ".") || c == UInt8(ascii: "-") || c == UInt8(ascii: "+") {
            _ = try number()
            return
        }
        if StatementSplitter.isWordByte(c) {
            _ = keyword()
            return
        }
        throw Failure("unexpected \"\(Character(Unicode.Scalar(c)))\" in a column definition")
    }

    mutating func skipToCommaOrClose() throws {
        while let c = peek(), c != UInt8(ascii: ","), c != UInt8(ascii: ")") { try skipColumnConstraintToken() }
    }

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

extension SQLParser {
    /// The words that begin a column constraint.
    static let columnConstraintWords: Set<String> = [
        "CONSTRAINT", "PRIMARY", "NOT", "NULL", "UNIQUE", "CHECK", "DEFAULT", "COLLATE", "REFERENCES", "GENERATED",
        "AS", "ASC", "DESC", "AUTOINCREMENT", "ON", "CONFLICT", "STORED", "VIRTUAL",
    ]

    /// A DEFAULT clause's value: a literal, or an expression only SQLite can evaluate.
    mutating func defaultClause() throws -> TableSchema.Default {
        let start = pos
        if peek() == UInt8(ascii: "(") {
            // A literal in parentheses, `(x'CAFE')` or `(0)`, is that literal.
            pos += 1
            if let value = try? value(), consume(UInt8(ascii: ")")) {
                return lastValueIsBlob ? .blob(value) : .literal(value)
            }
            pos = start
            try skipBalanced()
        } else if let word = peekKeyword(), word.hasPrefix("CURRENT_") {
            _ = keyword()
        } else if let c = peek(), c == UInt8(ascii: "\"") || c == UInt8(ascii: "`") || c == UInt8(ascii: "[") {
            return .literal(Array(try identifier().utf8))  // SQLite takes a quoted name here as text
        } else if let word = peekKeyword(), word.first?.isLetter == true || word.first == "_",
            !["NULL", "TRUE", "FALSE", "X"].contains(word)  // X'…' is a blob
        {
            return .literal(Array(try identifier().utf8))  // a bare word: its text, as SQLite keeps it
        } else {
            guard let value = try value() else { return .null }
            return lastValueIsBlob ? .blob(value) : .literal(value)
        }
        return .expression(
            String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<pos]), as: UTF8.self))
    }
}
