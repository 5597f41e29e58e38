import Foundation

/// The formats `sluice` reads, and how one is chosen for `--format auto`.
public enum InputFormat: String, Sendable, CaseIterable {
    case csv, xml, sqldump, sqlite, json, jsonl

    /// Whether its records can hold nested records (children) and fields by path: XML and JSON.
    public var isNested: Bool { self == .xml || self == .json || self == .jsonl }

    /// JSON or JSON Lines.
    public var isJSON: Bool { self == .json || self == .jsonl }

    /// The format of `path`: a SQLite database by its header, otherwise by the name without `.gz`
    /// (`.csv`/`.tsv`/`.txt` CSV, `.xml` XML, `.sql` dump, `.json` JSON, `.jsonl`/`.ndjson` JSON Lines),
    /// otherwise by the first bytes (standard input, a file without an extension): `<` XML, `[` JSON,
    /// `{` JSON Lines when the first line holds a whole object (`{…}`), else JSON;
    /// SQL's first words (`PRAGMA`, `BEGIN`, `CREATE`, `INSERT`, a `--` or `/*` comment) a dump; a
    /// first line of text with a `,` `;` tab
    /// or `|` CSV.
    /// - Throws: `ReaderError` when the file cannot be read or nothing tells the format.
    public static func detect(path: String) throws -> InputFormat {
        let source = try Input.open(path)
        var head = [UInt8](repeating: 0, count: 4096)
        var n = 0
        while n < head.count {
            let read = try head.withUnsafeMutableBytes {
                try source.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[n...]))
            }
            if read == 0 { break }
            n += read
        }
        head = Array(head[..<n])
        if head.starts(with: Array("SQLite format 3\0".utf8)) { return .sqlite }
        if let format = named(byExtensionOf: path) { return format }
        if let format = sniffed(head) { return format }
        throw ReaderError(
            .invalidOption,
            "cannot tell the format of \(path); give it with --format csv|xml|sqldump|sqlite|json|jsonl")
    }

    /// The format the first bytes of a text say (see `detect(path:)`); `nil` when they say none.
    static func sniffed(_ head: [UInt8]) -> InputFormat? {
        let text = head.drop { $0 == 32 || $0 == 10 || $0 == 13 || $0 == 9 || $0 == 0xEF || $0 == 0xBB || $0 == 0xBF }
        if text.first == UInt8(ascii: "<") { return .xml }
        if text.first == UInt8(ascii: "[") { return .json }
        if text.first == UInt8(ascii: "{") {
            // JSON Lines has a whole object on its first line (or a line longer than what was read);
            // a document spreads it over several.
            let firstLine = text.prefix { $0 != 10 }
            let last = firstLine.last { $0 != 32 && $0 != 9 && $0 != 13 }
            return last == UInt8(ascii: "}") || firstLine.count == text.count ? .jsonl : .json
        }
        guard !text.isEmpty, !text.contains(0) else { return nil }
        let start = String(decoding: text.prefix(16), as: UTF8.self).uppercased()
        if ["PRAGMA", "BEGIN", "CREATE", "INSERT", "--", "/*"].contains(where: { start.hasPrefix($0) }) {
            return .sqldump
        }
        let firstLine = text.prefix { $0 != 10 && $0 != 13 }
        if firstLine.contains(where: {
            $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: ";") || $0 == 9 || $0 == UInt8(ascii: "|")
        }) {
            return .csv
        }
        return nil
    }

    /// The format a file name says (`.csv`, `.tsv`, `.txt`, `.xml`, `.sql`, `.json`, `.jsonl`,
    /// `.ndjson`, `.db`, `.sqlite`, `.sqlite3`, each maybe with `.gz`), without reading the file:
    /// for a file that is not there.
    public static func named(byExtensionOf path: String) -> InputFormat? {
        var name = path.lowercased()
        if name.hasSuffix(".gz") { name.removeLast(3) }
        if name.hasSuffix(".csv") || name.hasSuffix(".tsv") || name.hasSuffix(".txt") { return .csv }
        if name.hasSuffix(".xml") { return .xml }
        if name.hasSuffix(".sql") { return .sqldump }
        if name.hasSuffix(".jsonl") || name.hasSuffix(".ndjson") { return .jsonl }
        if name.hasSuffix(".json") { return .json }
        if name.hasSuffix(".db") || name.hasSuffix(".sqlite") || name.hasSuffix(".sqlite3") { return .sqlite }
        return nil
    }
}

extension InputFormat {
    /// The format named `name` (`csv`, `xml`, `sqldump`, `sqlite`); `nil` for `auto` or no name,
    /// which means: detect it per file (`detect(path:)`).
    /// - Throws: `ReaderError` (`.invalidOption`) for any other name.
    public static func named(_ name: String?) throws -> InputFormat? {
        guard let name, name != "auto" else { return nil }
        guard let format = InputFormat(rawValue: name) else {
            let known = (["auto"] + allCases.map(\.rawValue)).joined(separator: ", ")
            throw ReaderError(.invalidOption, "unknown format \(name.debugDescription) (known: \(known))")
        }
        return format
    }
}
