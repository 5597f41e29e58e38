import Foundation

/// Recursive-descent parser for the predicate format syntax (see `FetchPredicate`).
struct PredicateParser {
    private enum Token: Equatable {
        case identifier(String)  // also keywords; compared case-insensitively
        case string(String)
        case number(String)
        case symbol(String)  // == != <= ( ) { } , . [ ] && || ! < > =
        case variable(String)
        case argument(Character)  // %@ or %K
        case end
    }

    private let format: String
    private let characters: [Character]
    private var arguments: [PredicateArgument]
    private var position = 0
    private var token: Token = .end
    private var tokenColumn = 1

    init(format: String, arguments: [PredicateArgument]) {
        self.format = format
        self.characters = Array(format)
        self.arguments = arguments
    }

    mutating func parse() throws -> FetchPredicate {
        try advance()
        let predicate = try parseOr()
        guard token == .end else { throw error("unexpected \(describe(token)) after a complete predicate") }
        if !arguments.isEmpty {
            throw PredicateSyntaxError(
                message: "\(arguments.count) argument(s) left over: the format has fewer %@ than arguments", column: 0,
                format: format)
        }
        return predicate
    }

    // MARK: Grammar

    private mutating func parseOr() throws -> FetchPredicate {
        var parts = [try parseAnd()]
        while isKeyword("OR") || token == .symbol("||") {
            try advance()
            parts.append(try parseAnd())
        }
        return parts.count == 1 ? parts[0] : .or(parts)
    }

    private mutating func parseAnd() throws -> FetchPredicate {
        var parts = [try parseNot()]
        while isKeyword("AND") || token == .symbol("&&") {
            try advance()
            parts.append(try parseNot())
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    private mutating func parseNot() throws -> FetchPredicate {
        if isKeyword("NOT") || token == .symbol("!") {
            try advance()
            return .not(try parseNot())
        }
        return try parsePrimary()
    }

    private mutating func parsePrimary() throws -> FetchPredicate {
        if token == .symbol("(") {
            try advance()
            let inner = try parseOr()
            try expect(.symbol(")"), "')' to close '('")
            return inner
        }
        if isKeyword("TRUEPREDICATE") {
            try advance()
            return .constant(true)
        }
        if isKeyword("FALSEPREDICATE") {
            try advance()
            return .constant(false)
        }
        return .comparison(try parseComparison())
    }

    private mutating func parseComparison() throws -> PredicateComparison {
        var modifier = PredicateComparison.Modifier.direct
        if isKeyword("ANY") || isKeyword("SOME") {
            modifier = .any
            try advance()
        } else if isKeyword("ALL") {
            modifier = .all
            try advance()
        } else if isKeyword("NONE") {
            modifier = .none
            try advance()
        }
        let lhsColumn = tokenColumn
        let lhs = try parseExpression()
        if modifier != .direct {
            guard case .keyPath = lhs else {
                throw PredicateSyntaxError(
                    message: "\(modifier.rawValue) must be followed by a key path", column: lhsColumn, format: format)
            }
        }
        let opColumn = tokenColumn
        let op = try parseOperator()
        var options: PredicateComparison.Options = []
        if token == .symbol("[") {
            try advance()
            guard case .identifier(let flags) = token else {
                throw error("expected options such as c, d or cd inside [ ]")
            }
            for flag in flags.lowercased() {
                switch flag {
                case "c": options.insert(.caseInsensitive)
                case "d": options.insert(.diacriticInsensitive)
                case "n": break  // normalized: our comparisons are already canonical-equivalence aware
                default: throw error("unknown comparison option '\(flag)' (use c, d or cd)")
                }
            }
            try advance()
            try expect(.symbol("]"), "']' to close the options")
        }
        if !options.isEmpty, [.less, .lessOrEqual, .greater, .greaterOrEqual, .between].contains(op) {
            throw PredicateSyntaxError(
                message: "options [c]/[d] apply to string comparisons, not \(op.rawValue)", column: opColumn,
                format: format)
        }
        let rhsColumn = tokenColumn
        let rhs = try parseExpression()
        if op == .between {
            var isPair = false
            if case .aggregate(let bounds) = rhs { isPair = bounds.count == 2 }
            if case .variable = rhs { isPair = true }
            guard isPair else {
                throw PredicateSyntaxError(
                    message: "BETWEEN needs two bounds: {low, high}", column: rhsColumn, format: format)
            }
        }
        return PredicateComparison(lhs, op, rhs, modifier: modifier, options: options)
    }

    private mutating func parseOperator() throws -> PredicateComparison.Operator {
        let op: PredicateComparison.Operator
        switch token {
        case .symbol("=="), .symbol("="): op = .equal
        case .symbol("!="), .symbol("<>"): op = .notEqual
        case .symbol("<"): op = .less
        case .symbol("<="), .symbol("=<"): op = .lessOrEqual
        case .symbol(">"): op = .greater
        case .symbol(">="), .symbol("=>"): op = .greaterOrEqual
        case .identifier(let word):
            switch word.uppercased() {
            case "IN": op = .in
            case "BETWEEN": op = .between
            case "BEGINSWITH": op = .beginsWith
            case "ENDSWITH": op = .endsWith
            case "CONTAINS": op = .contains
            case "LIKE": op = .like
            case "MATCHES": op = .matches
            default: throw error("expected a comparison operator, found '\(word)'")
            }
        default: throw error("expected a comparison operator, found \(describe(token))")
        }
        try advance()
        return op
    }

    private mutating func parseExpression() throws -> PredicateExpression {
        switch token {
        case .string(let text):
            try advance()
            return .constant(.string(text))
        case .number(let text):
            try advance()
            if let value = Int64(text) { return .constant(.integer(value)) }
            if let value = Double(text) { return .constant(.double(value)) }
            throw error("'\(text)' is not a number")
        case .variable(let name):
            try advance()
            return .variable(name)
        case .argument(let kind):
            guard !arguments.isEmpty else { throw error("%\(kind) has no matching argument") }
            let argument = arguments.removeFirst()
            if kind == "K" {
                guard case .value(.string(let path)) = argument else {
                    throw error("%K needs a string argument (a key path)")
                }
                try advance()
                return .keyPath(path.split(separator: ".").map(String.init))
            }
            try advance()
            return PredicateExpression(argument)
        case .symbol("{"):
            try advance()
            var items: [PredicateExpression] = []
            if token != .symbol("}") {
                items.append(try parseExpression())
                while token == .symbol(",") {
                    try advance()
                    items.append(try parseExpression())
                }
            }
            try expect(.symbol("}"), "'}' to close the list")
            return .aggregate(items)
        case .symbol("-"):
            try advance()
            guard case .number(let text) = token else { throw error("expected a number after '-'") }
            token = .number("-" + text)
            return try parseExpression()
        case .identifier(let word):
            switch word.uppercased() {
            case "NULL", "NIL":
                try advance()
                return .constant(.null)
            case "TRUE", "YES":
                try advance()
                return .constant(.boolean(true))
            case "FALSE", "NO":
                try advance()
                return .constant(.boolean(false))
            case "SELF":
                try advance()
                return .evaluatedObject
            default: return try parseKeyPath()
            }
        default:
            throw error("expected a key path, a value, a $variable or %@, found \(describe(token))")
        }
    }

    private mutating func parseKeyPath() throws -> PredicateExpression {
        var parts: [(name: String, column: Int)] = []
        guard case .identifier(let first) = token else { throw error("expected a key path") }
        parts.append((first, tokenColumn))
        try advance()
        while token == .symbol(".") {
            try advance()
            guard case .identifier(let next) = token else {
                throw error("expected a property name or @operator after '.'")
            }
            parts.append((next, tokenColumn))
            try advance()
        }
        for (i, part) in parts.enumerated() where part.name.hasPrefix("@") {
            func fail(_ message: String) -> PredicateSyntaxError {
                PredicateSyntaxError(message: message, column: part.column, format: format)
            }
            switch part.name {
            case "@count": if i != parts.count - 1 { throw fail("@count must end the key path") }
            case "@sum", "@avg", "@min", "@max":
                if i != parts.count - 2 { throw fail("\(part.name) must be followed by exactly one attribute name") }
            default: throw fail("unknown collection operator \(part.name)")
            }
        }
        return .keyPath(parts.map(\.name))
    }

    // MARK: Tokens

    private func isKeyword(_ word: String) -> Bool {
        if case .identifier(let name) = token { return name.uppercased() == word }
        return false
    }

    private mutating func expect(_ expected: Token, _ what: String) throws {
        guard token == expected else { throw error("expected \(what), found \(describe(token))") }
        try advance()
    }

    private func error(_ message: String) -> PredicateSyntaxError {
        PredicateSyntaxError(message: message, column: tokenColumn, format: format)
    }

    private func describe(_ token: Token) -> String {
        switch token {
        case .identifier(let s): return "'\(s)'"
        case .string(let s): return "string '\(s)'"
        case .number(let s): return "number \(s)"
        case .symbol(let s): return "'\(s)'"
        case .variable(let s): return "$\(s)"
        case .argument(let c): return "%\(c)"
        case .end: return "the end of the predicate"
        }
    }

    private static func isIdentifierStart(_ c: Character) -> Bool { c.isLetter || c == "_" || c == "@" || c == "#" }
    private static func isIdentifierPart(_ c: Character) -> Bool { c.isLetter || c.isNumber || c == "_" }

    private mutating func advance() throws {
        while position < characters.count, characters[position].isWhitespace { position += 1 }
        tokenColumn = position + 1
        guard position < characters.count else {
            token = .end
            return
        }
        let c = characters[position]
        if Self.isIdentifierStart(c) {
            token = try readIdentifier(startingWith: c)
        } else if c.isNumber {
            token = readNumber()
        } else {
            switch c {
            case "'", "\"": token = try readString(quotedBy: c)
            case "$": token = try readVariable()
            case "%": token = try readArgument()
            default: token = try readSymbol(startingWith: c)
            }
        }
    }

    /// A name (or keyword) from `position`, at `c`; `#name` escapes a reserved word.
    private mutating func readIdentifier(startingWith c: Character) throws -> Token {
        var start = position
        if c == "#" { start += 1 }  // #name escapes a reserved word
        position += 1
        while position < characters.count, Self.isIdentifierPart(characters[position]) { position += 1 }
        let word = String(characters[start..<position])
        if word.isEmpty || word == "@" { throw error("expected a name after '\(c)'") }
        return .identifier(word)
    }

    /// A number from `position`: digits, a decimal point, an exponent with its sign.
    private mutating func readNumber() -> Token {
        let start = position
        while position < characters.count,
            characters[position].isNumber || characters[position] == "." || characters[position] == "e"
                || characters[position] == "E"
                || ((characters[position] == "-" || characters[position] == "+")
                    && (characters[position - 1] == "e" || characters[position - 1] == "E"))
        {
            position += 1
        }
        return .number(String(characters[start..<position]))
    }

    /// A string literal from its opening quote `quote` at `position`, with `\n`, `\t`, `\r`, `\0`
    /// and `\`-escaped characters.
    private mutating func readString(quotedBy quote: Character) throws -> Token {
        position += 1
        var text = ""
        while true {
            guard position < characters.count else {
                throw error("the string starting here is not closed with \(quote)")
            }
            let d = characters[position]
            if d == quote {
                position += 1
                break
            }
            if d == "\\" {
                position += 1
                guard position < characters.count else { throw error("the string ends in the middle of an escape") }
                switch characters[position] {
                case "n": text.append("\n")
                case "t": text.append("\t")
                case "r": text.append("\r")
                case "0": text.append("\0")
                default: text.append(characters[position])
                }
                position += 1
                continue
            }
            text.append(d)
            position += 1
        }
        return .string(text)
    }

    /// A variable, `$name`, from its `$` at `position`.
    private mutating func readVariable() throws -> Token {
        position += 1
        let start = position
        while position < characters.count, Self.isIdentifierPart(characters[position]) { position += 1 }
        guard position > start else { throw error("expected a variable name after '$'") }
        // `$FETCH_SOURCE.city`: a key path after the variable is part of its name (fetched properties).
        while position + 1 < characters.count, characters[position] == ".",
            Self.isIdentifierPart(characters[position + 1])
        {
            position += 1
            while position < characters.count, Self.isIdentifierPart(characters[position]) { position += 1 }
        }
        return .variable(String(characters[start..<position]))
    }

    /// A format argument, `%@` or `%K` (`%d`, `%i`, `%f` and `%s` read as `%@`), from its `%` at `position`.
    private mutating func readArgument() throws -> Token {
        position += 1
        guard position < characters.count else { throw error("'%' must be followed by @ or K") }
        let kind = characters[position]
        switch kind {
        case "@", "K", "d", "i", "f", "s":
            position += 1
            return .argument(kind == "K" ? "K" : "@")
        default: throw error("unknown format specifier %\(kind) (use %@ or %K)")
        }
    }

    /// An operator or punctuation (two characters where they make one) from `position`, at `c`.
    private mutating func readSymbol(startingWith c: Character) throws -> Token {
        let two = position + 1 < characters.count ? String(characters[position...position + 1]) : ""
        if ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||"].contains(two) {
            position += 2
            return .symbol(two)
        } else if "=<>!(){},.[]-".contains(c) {
            position += 1
            return .symbol(String(c))
        } else {
            throw error("unexpected character '\(c)'")
        }
    }
}
