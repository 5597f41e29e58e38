import Foundation

/// An FTS3, FTS4 or FTS5 virtual table as its `CREATE VIRTUAL TABLE … USING fts5(title, body)`
/// declares it: the documents it holds are rows of its declared columns, which readers read as an
/// ordinary table's (its index — the shadow tables — is SQLite's own, never read). A table whose
/// `content=` option keeps its documents elsewhere (external content, or none) holds no rows of
/// its own.
public struct FullTextTable: Sendable, Hashable {
    public var name: String
    /// `fts3`, `fts4` or `fts5`.
    public var module: String
    /// The declared columns, in order (options such as `UNINDEXED` left out).
    public var columns: [String]
    /// Whether the documents are the table's own (no `content=` option).
    public var hasOwnContent: Bool

    /// The full-text table `sql` creates, or `nil` for any other statement or module.
    public init?(name: String, sql: String) {
        let bytes = Array(sql.utf8)
        guard let using = Self.find("USING", in: bytes), let open = bytes[using...].firstIndex(of: UInt8(ascii: "("))
        else { return nil }
        let module = String(decoding: bytes[(using + 5)..<open], as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        guard ["fts3", "fts4", "fts5"].contains(module) else { return nil }
        self.name = name
        self.module = module
        columns = []
        hasOwnContent = true
        for argument in Self.arguments(bytes[(open + 1)...]) {
            let words = Self.words(argument)
            guard let first = words.first else { continue }
            let lower = first.lowercased()
            // `content=…`, `tokenize = porter`, FTS3's `tokenize porter`, `prefix=2`: options.
            if argument.contains(UInt8(ascii: "=")) && !Self.isQuoted(first)
                || (module != "fts5" && lower == "tokenize")
            {
                if lower.hasPrefix("content") && !lower.hasPrefix("content_") { hasOwnContent = false }
                continue
            }
            columns.append(Self.unquoted(first))
        }
    }

    /// The start of `word` (any case) as a word of `bytes` outside quotes.
    private static func find(_ word: String, in bytes: [UInt8]) -> Int? {
        let target = Array(word.utf8)
        var quote: UInt8?
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "`") {
                quote = byte
            } else if index + target.count <= bytes.count,
                zip(bytes[index..<index + target.count], target).allSatisfy({ $0 & 0xDF == $1 & 0xDF }),
                index == 0 || !isWordByte(bytes[index - 1]),
                index + target.count == bytes.count || !isWordByte(bytes[index + target.count])
            {
                return index
            }
            index += 1
        }
        return nil
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        (byte >= 48 && byte <= 57) || (byte | 0x20 >= 97 && byte | 0x20 <= 122) || byte == 95 || byte >= 128
    }

    /// The comma-separated arguments up to the closing parenthesis (quotes and nested parentheses kept whole).
    private static func arguments(_ bytes: ArraySlice<UInt8>) -> [[UInt8]] {
        var result: [[UInt8]] = [], current: [UInt8] = []
        var quote: UInt8?, depth = 0
        for byte in bytes {
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "`") {
                quote = byte
            } else if byte == UInt8(ascii: "[") {
                quote = UInt8(ascii: "]")
            } else if byte == UInt8(ascii: "(") {
                depth += 1
            } else if byte == UInt8(ascii: ")") {
                if depth == 0 { break }
                depth -= 1
            } else if byte == UInt8(ascii: ","), depth == 0 {
                result.append(current)
                current = []
                continue
            }
            current.append(byte)
        }
        result.append(current)
        return result
    }

    /// The whitespace-separated words of an argument (a quoted name is one word).
    private static func words(_ argument: [UInt8]) -> [String] {
        var words: [String] = [], current: [UInt8] = []
        var quote: UInt8?
        for byte in argument {
            if let open = quote {
                current.append(byte)
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\t")
                || byte == UInt8(ascii: "\r")
            {
                if !current.isEmpty { words.append(String(decoding: current, as: UTF8.self)) }
                current = []
            } else {
                if byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "`") {
                    quote = byte
                } else if byte == UInt8(ascii: "[") {
                    quote = UInt8(ascii: "]")
                }
                current.append(byte)
            }
        }
        if !current.isEmpty { words.append(String(decoding: current, as: UTF8.self)) }
        return words
    }

    private static func isQuoted(_ word: String) -> Bool {
        guard let first = word.first else { return false }
        return "\"'`[".contains(first)
    }

    private static func unquoted(_ word: String) -> String {
        guard let first = word.first, "\"'`[".contains(first), word.count >= 2 else { return word }
        let close: Character = first == "[" ? "]" : first
        let inner = word.dropFirst().dropLast()
        return first == "["
            ? String(inner) : inner.replacingOccurrences(of: String(close) + String(close), with: String(close))
    }

    /// What readers say about the table: its documents are imported as a table of its columns, or,
    /// kept elsewhere, not at all.
    public var note: String {
        hasOwnContent
            ? "full-text index of \(name.debugDescription) (\(module)): its documents are imported as the table "
                + "\(name.debugDescription) of its columns \(columns.joined(separator: ", ")), the index is not"
            : "virtual table \(name.debugDescription) (\(module) over content kept elsewhere: no rows of its own)"
    }
}
