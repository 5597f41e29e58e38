import Readers

/// What a command line says of a CSV dialect, as the user typed it. Each flag given overrides what
/// sniffing the first CSV input finds; without any flag every CSV input is sniffed on its own.
public struct CSVFlags: Sendable {
    /// One character, or `\t`.
    public var delimiter: String?
    /// One character, or `none`.
    public var quote: String?
    public var escape: String?
    public var noHeader = false
    /// A `TextEncoding` name: `utf-8`, `latin1`, `windows-1252`, `utf-16`, …
    public var encoding: String?
    public var nullMarkers: [String] = []
    public var comment: String?

    public init() {}

    var isEmpty: Bool {
        delimiter == nil && quote == nil && escape == nil && !noHeader && encoding == nil && nullMarkers.isEmpty
            && comment == nil
    }

    /// The dialect for `inputs`, or `nil` when no flag is given (then each CSV input is sniffed).
    /// - Throws: `ReaderError` (`.invalidOption`) for a flag that is not one character or an
    ///   unknown encoding; the first CSV input's read errors.
    func dialect(for inputs: [String], format: InputFormat?) throws -> CSVDialect? {
        guard !isEmpty else { return nil }
        let firstCSV = inputs.first { (try? format ?? InputFormat.detect(path: $0)) == .csv }
        var dialect = try firstCSV.map { try CSVSniffer.sniff(path: $0) } ?? CSVDialect()
        func byte(_ text: String, _ flag: String) throws -> UInt8 {
            let value = text == "\\t" ? "\t" : text
            guard value.utf8.count == 1, let byte = value.utf8.first else {
                throw ReaderError(.invalidOption, "\(flag) takes one ASCII character, not \(text.debugDescription)")
            }
            return byte
        }
        if let delimiter { dialect.delimiter = try byte(delimiter, "--delimiter") }
        if let quote { dialect.quote = quote.lowercased() == "none" ? nil : try byte(quote, "--quote") }
        if let escape { dialect.escape = try byte(escape, "--escape") }
        if noHeader { dialect.hasHeader = false }
        if let encoding {
            guard let known = TextEncoding(name: encoding) else {
                let names = TextEncoding.allCases.map(\.rawValue).joined(separator: ", ")
                throw ReaderError(.invalidOption, "unknown encoding \(encoding.debugDescription) (known: \(names))")
            }
            dialect.encoding = known
        }
        if !nullMarkers.isEmpty { dialect.nullMarkers = nullMarkers }
        if let comment { dialect.comment = try byte(comment, "--comment") }
        return dialect
    }
}
