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
